package db_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

func zoneDevice(t *testing.T, s *db.Store, name, host string, zone int64) int64 {
	t.Helper()
	d, err := s.CreateDevice(context.Background(), db.Device{Name: name, Host: host, Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: true, ZoneID: zone})
	if err != nil {
		t.Fatalf("create device %s: %v", name, err)
	}
	return d.ID
}

func hashOf(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// Zones: the built-in local zone, names unique regardless of case, the
// same address in two zones.
func TestZones(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	zones, err := s.ListZones(ctx)
	if err != nil || len(zones) != 1 || zones[0].ID != db.LocalZone || zones[0].Name != "local" {
		t.Fatalf("zones of a fresh store = %+v, %v; want only local", zones, err)
	}
	site, err := s.CreateZone(ctx, "Site-A")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateZone(ctx, "site-a"); !errors.Is(err, db.ErrNameExists) {
		t.Fatalf("a second zone named site-a: %v, want ErrNameExists", err)
	}
	if z, err := s.ZoneByName(ctx, "SITE-a"); err != nil || z.ID != site.ID {
		t.Fatalf("ZoneByName = %+v, %v", z, err)
	}
	local := zoneDevice(t, s, "core-local", "10.0.0.1", 0)
	remote := zoneDevice(t, s, "core-site", "10.0.0.1", site.ID) // the same address, another network
	if d, _ := s.GetDevice(ctx, local); d.ZoneID != db.LocalZone {
		t.Fatalf("a device created without a zone is in zone %d, want local", d.ZoneID)
	}
	if d, _ := s.GetDevice(ctx, remote); d.ZoneID != site.ID {
		t.Fatalf("device zone = %d, want %d", d.ZoneID, site.ID)
	}
	_, err = s.CreateDevice(ctx, db.Device{Name: "nowhere", Host: "h", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh",
		Encoding: "utf-8", ZoneID: 999})
	var ref *db.ErrReference
	if !errors.As(err, &ref) || ref.Field != "zone_id" {
		t.Fatalf("a device in a missing zone: %v, want a zone_id reference error", err)
	}
	// The syslog listener hears the local zone: the same address in
	// another zone is not a sender.
	senders, err := s.SyslogSenders(ctx)
	if err != nil || len(senders) != 1 || senders[0].ID != local {
		t.Fatalf("syslog senders = %+v, %v; want only the local device", senders, err)
	}
	zones, _ = s.ListZones(ctx)
	if len(zones) != 2 || zones[1].Devices != 1 {
		t.Fatalf("zones = %+v", zones)
	}
}

// Enrolment tokens are spent once and expire; a collector authenticates
// by the hash of its bearer token until it is revoked.
func TestCollectorEnrolment(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	site, _ := s.CreateZone(ctx, "site")
	if _, err := s.CreateEnrolmentToken(ctx, 999, hashOf("x"), time.Now().Add(time.Hour)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a token for a missing zone: %v", err)
	}
	c := dbtest.Collector(t, s, site.ID, "c1")
	if c.ZoneID != site.ID || c.ZoneName != "site" || c.PublicKey != "pk-c1" || c.Version != "v1" {
		t.Fatalf("enrolled = %+v", c)
	}
	if _, err := s.EnrolCollector(ctx, hashOf("enrol-c1"), db.Collector{Name: "again", PublicKey: "pk"}, hashOf("b2")); !errors.Is(err, db.ErrEnrolment) {
		t.Fatalf("a spent token enrolled again: %v", err)
	}
	if _, err := s.CreateEnrolmentToken(ctx, site.ID, hashOf("old"), time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnrolCollector(ctx, hashOf("old"), db.Collector{Name: "late", PublicKey: "pk"}, hashOf("b3")); !errors.Is(err, db.ErrEnrolment) {
		t.Fatalf("an expired token enrolled: %v", err)
	}
	if _, err := s.EnrolCollector(ctx, hashOf("never-made"), db.Collector{Name: "x", PublicKey: "pk"}, hashOf("b4")); !errors.Is(err, db.ErrEnrolment) {
		t.Fatalf("an unknown token enrolled: %v", err)
	}
	got, err := s.CollectorByToken(ctx, hashOf("bearer-c1"))
	if err != nil || got.ID != c.ID {
		t.Fatalf("CollectorByToken = %+v, %v", got, err)
	}
	if err := s.CollectorSeen(ctx, c.ID, "v2", "192.0.2.7"); err != nil {
		t.Fatal(err)
	}
	online, offline, revoked, err := s.CollectorCounts(ctx, time.Minute)
	if err != nil || online != 1 || offline != 0 || revoked != 0 {
		t.Fatalf("counts = %d %d %d, %v", online, offline, revoked, err)
	}
	if err := s.RevokeCollector(ctx, c.ID, queue.DefaultMaxInterruptions); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CollectorByToken(ctx, hashOf("bearer-c1")); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a revoked collector authenticated: %v", err)
	}
	list, err := s.ListCollectors(ctx)
	if err != nil || len(list) != 1 || list[0].RevokedAt == nil || list[0].Version != "v2" || list[0].LastAddress != "192.0.2.7" {
		t.Fatalf("collectors = %+v, %v", list, err)
	}
	if err := s.RevokeCollector(ctx, 999, 1); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("revoke a missing collector: %v", err)
	}
}

// The server's engines never claim another zone's job; a collector
// leases only its own zone's; a lease not reported in hand, run out, or
// of a revoked collector queues the job again as interrupted (its attempt
// given back), and a result for a lease that ended is refused.
func TestZoneJobsAreLeasedToTheirCollectors(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	siteA, _ := s.CreateZone(ctx, "a")
	siteB, _ := s.CreateZone(ctx, "b")
	local := zoneDevice(t, s, "local-1", "10.0.0.1", db.LocalZone)
	inA := zoneDevice(t, s, "a-1", "10.0.0.1", siteA.ID)
	inB := zoneDevice(t, s, "b-1", "10.0.0.1", siteB.ID)
	jobs := enqueueNow(t, s, queue.TriggerManual, local, inA, inB)

	claims, err := s.ClaimJobs(ctx, "engine", 10, nil)
	if err != nil || len(claims) != 1 || claims[0].DeviceID != local {
		t.Fatalf("the engine claimed %+v, %v; want only the local device's job", claims, err)
	}
	if among, err := s.ClaimJobs(ctx, "engine", 10, jobs); err != nil || len(among) != 0 {
		t.Fatalf("the engine claimed another zone's job among its list: %+v, %v", among, err)
	}
	if owners, _ := s.RunningOwners(ctx); !slices.Equal(owners, []string{"engine"}) {
		t.Fatalf("running owners = %v", owners)
	}

	ca := dbtest.Collector(t, s, siteA.ID, "ca")
	lease := time.Now().Add(time.Minute)
	got, err := s.LeaseJobs(ctx, ca.ID, ca.ZoneID, 10, lease)
	if err != nil || len(got) != 1 || got[0].DeviceID != inA || got[0].Owner == nil {
		t.Fatalf("collector of zone a leased %+v, %v; want only a-1's job", got, err)
	}
	if owners, _ := s.RunningOwners(ctx); !slices.Equal(owners, []string{"engine"}) {
		t.Fatalf("a lease shows among the engines' owners: %v", owners)
	}
	if again, _ := s.LeaseJobs(ctx, ca.ID, ca.ZoneID, 10, lease); len(again) != 0 {
		t.Fatalf("leased twice: %+v", again)
	}
	cl, err := s.LeasedClaim(ctx, ca.ID, got[0].ID, got[0].BackupID)
	if err != nil || cl.ID != got[0].ID || cl.Attempt != 1 {
		t.Fatalf("LeasedClaim = %+v, %v", cl, err)
	}
	cb := dbtest.Collector(t, s, siteB.ID, "cb")
	if _, err := s.LeasedClaim(ctx, cb.ID, got[0].ID, got[0].BackupID); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("another collector's claim: %v", err)
	}
	if _, err := s.LeasedClaim(ctx, ca.ID, got[0].ID, "another-attempt"); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("another attempt's claim: %v", err)
	}

	// Reported in hand: kept, and an operator's cancel is passed on.
	if ok, err := s.CancelJob(ctx, got[0].ID); err != nil || !ok {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	rep, err := s.ExtendLeases(ctx, ca.ID, []int64{got[0].ID, 4242}, time.Now().Add(time.Minute))
	if err != nil || !slices.Equal(rep.Cancel, []int64{got[0].ID}) || !slices.Equal(rep.Lost, []int64{4242}) {
		t.Fatalf("ExtendLeases = %+v, %v", rep, err)
	}
	if n, err := s.ReleaseLeases(ctx, ca.ID, []int64{got[0].ID}, queue.DefaultMaxInterruptions); err != nil || n != 0 {
		t.Fatalf("released a lease reported in hand: %d, %v", n, err)
	}
	// Not reported (the collector restarted): queued again at once.
	if n, err := s.ReleaseLeases(ctx, ca.ID, nil, queue.DefaultMaxInterruptions); err != nil || n != 1 {
		t.Fatalf("ReleaseLeases = %d, %v", n, err)
	}
	checkRequeued := func(what string, jobID int64, backupID string, interruptions int) {
		t.Helper()
		js, err := s.GetJobs(ctx, []int64{jobID})
		if err != nil || len(js) != 1 || js[0].State != queue.JobQueued || js[0].Attempt != 0 || js[0].Interruptions != interruptions {
			t.Fatalf("%s: job = %+v, %v; want queued again, attempt given back, %d interruptions", what, js, err, interruptions)
		}
		b, err := s.GetBackup(ctx, backupID)
		if err != nil || b.Success || b.FinishedAt == nil || b.ErrorMessage == nil || *b.ErrorMessage != queue.ErrorInterrupted {
			t.Fatalf("%s: the attempt = %+v, %v; want failed as interrupted", what, b, err)
		}
		if _, err := s.LeasedClaim(ctx, ca.ID, jobID, backupID); !errors.Is(err, queue.ErrLeaseLost) {
			t.Fatalf("%s: a result for the ended lease: %v", what, err)
		}
	}
	checkRequeued("released", got[0].ID, got[0].BackupID, 1)
	// A result already on its way when the lease ended records nothing.
	if err := s.FinishJob(ctx, cl, queue.Outcome{Success: true, Text: "hostname late\n", FinishedAt: time.Now()}); !errors.Is(err, queue.ErrJobNotOwned) {
		t.Fatalf("a late result: %v, want ErrJobNotOwned", err)
	}

	// A lease that ran out (the collector stopped calling).
	if _, err := s.Exec(ctx, `UPDATE jobs SET cancel_requested = 0`); err != nil {
		t.Fatal(err)
	}
	second, err := s.LeaseJobs(ctx, ca.ID, ca.ZoneID, 10, time.Now().Add(-time.Second))
	if err != nil || len(second) != 1 {
		t.Fatalf("lease again: %+v, %v", second, err)
	}
	if n, err := s.ExpireLeases(ctx, time.Now(), queue.DefaultMaxInterruptions); err != nil || n != 1 {
		t.Fatalf("ExpireLeases = %d, %v", n, err)
	}
	checkRequeued("expired", second[0].ID, second[0].BackupID, 2)

	// A revoked collector's leases go back at once.
	third, err := s.LeaseJobs(ctx, ca.ID, ca.ZoneID, 10, time.Now().Add(time.Hour))
	if err != nil || len(third) != 1 {
		t.Fatalf("lease again: %+v, %v", third, err)
	}
	if err := s.RevokeCollector(ctx, ca.ID, queue.DefaultMaxInterruptions); err != nil {
		t.Fatal(err)
	}
	checkRequeued("revoked", third[0].ID, third[0].BackupID, 3)

	// A device moved to another zone takes its queued job along.
	if _, err := s.UpdateDevice(ctx, inA, func(d *db.Device) error { d.ZoneID = db.LocalZone; return nil }); err != nil {
		t.Fatal(err)
	}
	moved, err := s.ClaimJobs(ctx, "engine", 10, nil)
	if err != nil || len(moved) != 1 || moved[0].DeviceID != inA {
		t.Fatalf("after the move the engine claimed %+v, %v", moved, err)
	}
	if at, ok, err := s.NextJobAt(ctx); err != nil || ok {
		t.Fatalf("NextJobAt sees another zone's queued job: %v %v %v", at, ok, err)
	}
}

// One enrolment token enrols one collector, even when several nodes
// spend it at the same moment through their own handles on the store.
func TestEnrolmentTokenSpentOnce(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	handles := []*db.Store{s, dbtest.Reopen(t, s), dbtest.Reopen(t, s), dbtest.Reopen(t, s)}
	const rounds = 15
	for round := range rounds {
		token := hashOf(fmt.Sprintf("race-%d", round))
		if _, err := s.CreateEnrolmentToken(ctx, db.LocalZone, token, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		errs := make([]error, len(handles))
		var wg sync.WaitGroup
		for i, h := range handles {
			wg.Go(func() {
				<-start
				name := fmt.Sprintf("race-%d-%d", round, i)
				_, errs[i] = h.EnrolCollector(ctx, token, db.Collector{Name: name, PublicKey: "pk-" + name}, hashOf("bearer-"+name))
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else if !errors.Is(err, db.ErrEnrolment) {
				t.Errorf("round %d: enrolment failed with %v, want ErrEnrolment", round, err)
			}
		}
		all, err := s.ListCollectors(ctx)
		if err != nil {
			t.Fatal(err)
		}
		enrolled := 0
		for _, c := range all {
			if strings.HasPrefix(c.Name, fmt.Sprintf("race-%d-", round)) {
				enrolled++
			}
		}
		if won != 1 || enrolled != 1 {
			t.Fatalf("round %d: %d enrolments succeeded and %d collectors exist with one token; want exactly 1 (errors %v)", round, won, enrolled, errs)
		}
	}
}

// ZoneJobsDue sees a zone's queued job once it is due, and nothing else:
// not another zone's, not a retry that waits, not a running one.
func TestZoneJobsDue(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	site, err := s.CreateZone(ctx, "site")
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.CreateZone(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, zone int64, at time.Time, want bool) {
		t.Helper()
		if due, err := s.ZoneJobsDue(ctx, zone, at); err != nil || due != want {
			t.Fatalf("%s: ZoneJobsDue = %v, %v; want %v", what, due, err, want)
		}
	}
	now := time.Now()
	check("an empty queue", site.ID, now, false)
	waiting := zoneDevice(t, s, "waiting", "10.0.0.1", site.ID)
	if _, err := s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: waiting, Trigger: queue.TriggerRetry, NotBefore: now.Add(time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	check("a retry not yet due", site.ID, now, false)
	check("the retry once due", site.ID, now.Add(2*time.Minute), true)
	elsewhere := zoneDevice(t, s, "elsewhere", "10.0.0.2", other.ID)
	local := zoneDevice(t, s, "local", "10.0.0.3", db.LocalZone)
	enqueueNow(t, s, queue.TriggerManual, elsewhere, local)
	check("another zone's and the local zone's due jobs", site.ID, now, false)
	check("the other zone", other.ID, now, true)
	ready := zoneDevice(t, s, "ready", "10.0.0.4", site.ID)
	enqueueNow(t, s, queue.TriggerManual, ready)
	check("a due job", site.ID, now, true)
	c := dbtest.Collector(t, s, site.ID, "taker")
	if got, err := s.LeaseJobs(ctx, c.ID, c.ZoneID, 10, now.Add(time.Minute)); err != nil || len(got) != 1 {
		t.Fatalf("LeaseJobs = %+v, %v", got, err)
	}
	check("its job leased (running)", site.ID, now, false)
}
