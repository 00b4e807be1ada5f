package importer_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"backupd/app/importer"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

func openData(t testing.TB) (*db.Store, *secret.Sealer) {
	t.Helper()
	store := dbtest.Open(t)
	sealer, err := secret.LoadOrCreate(dbtest.DataDir(t, store))
	if err != nil {
		t.Fatal(err)
	}
	return store, sealer
}

func plan(t *testing.T, store *db.Store, sealer *secret.Sealer, file string) *importer.Plan {
	t.Helper()
	parsed, err := importer.ParseOxidized([]byte(file), ":", importer.LegacyMap())
	if err != nil {
		t.Fatal(err)
	}
	p, err := importer.Build(context.Background(), store, sealer, parsed, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func counts(p *importer.Plan) string {
	c, u, n, s := p.Counts()
	return fmt.Sprintf("%d/%d/%d/%d", c, u, n, s)
}

func allDevices(t *testing.T, store *db.Store) map[string]db.Device {
	t.Helper()
	list, err := store.DevicesAfter(context.Background(), db.Scope{All: true}, db.DeviceFilter{}, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]db.Device{}
	for _, d := range list {
		out[d.Name] = d
	}
	return out
}

func tableCount(t *testing.T, store *db.Store, table string) int {
	t.Helper()
	var n int
	if err := dbtest.Peek(t, store).QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

const routerDB = `# two sites
core-1:ios:dc1:admin:s3cret
core-2:nxos:dc1:admin:s3cret
edge-1:junos:dc2:ops:other
lab-1:eos
bad-host:ios::
`

func TestApplyAndReapply(t *testing.T) {
	ctx := context.Background()
	store, sealer := openData(t)
	// An existing group of the same name (any case) is reused, and an
	// existing credential with the same login too.
	if _, err := store.CreateGroup(ctx, "DC2", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateCredential(ctx, db.Credential{Name: "ops login", Username: "ops",
		Password: sealer.Seal("other", secret.PurposePassword)}); err != nil {
		t.Fatal(err)
	}
	p := plan(t, store, sealer, routerDB+"bad host!:ios\n")
	if got := counts(p); got != "5/0/0/1" {
		t.Fatalf("first plan counts %s, want 5/0/0/1", got)
	}
	var dry bytes.Buffer
	p.Report(&dry, true, false)
	for _, want := range []string{
		`line 2: would create core-1: cisco_ios at core-1, group "dc1", credential "Imported oxidized 1"`,
		`line 4: would create edge-1: juniper_junos at edge-1, group "DC2", credential "ops login"`,
		`line 5: would create lab-1: arista_eos at lab-1` + "\n",
		`line 7: skip bad host!: bad host "bad host!"`,
		"would create 1 group(s): dc1\n",
		"would create 1 credential(s): Imported oxidized 1\n",
		"summary: 5 device(s) would be created, 0 updated, 0 unchanged, 1 line(s) skipped\n",
	} {
		if !strings.Contains(dry.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, dry.String())
		}
	}
	if strings.Contains(dry.String(), "s3cret") {
		t.Error("the dry run shows a password")
	}
	if n := tableCount(t, store, "devices"); n != 0 {
		t.Fatalf("planning created %d devices", n)
	}
	if err := p.Apply(ctx, store, sealer); err != nil {
		t.Fatal(err)
	}
	devs := allDevices(t, store)
	if len(devs) != 5 {
		t.Fatalf("%d devices after the import, want 5", len(devs))
	}
	c1, c2 := devs["core-1"], devs["core-2"]
	if c1.CredentialID == nil || c2.CredentialID == nil || *c1.CredentialID != *c2.CredentialID {
		t.Fatalf("core-1 and core-2 share a login but not a credential: %v %v", c1.CredentialID, c2.CredentialID)
	}
	cred, err := store.GetCredential(ctx, *c1.CredentialID)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(cred.Password, []byte("s3cret")) {
		t.Fatal("the password is stored in the clear")
	}
	if pw, err := sealer.Open(cred.Password, secret.PurposePassword); err != nil || pw != "s3cret" || cred.Username != "admin" {
		t.Fatalf("credential %q: user %q password %q (%v)", cred.Name, cred.Username, pw, err)
	}
	if n := tableCount(t, store, "credentials"); n != 2 {
		t.Errorf("%d credentials, want 2 (one new, one reused)", n)
	}
	if n := tableCount(t, store, "device_groups"); n != 2 {
		t.Errorf("%d groups, want 2 (dc1 new, DC2 reused)", n)
	}

	// Running the same file again changes nothing.
	p = plan(t, store, sealer, routerDB)
	if got := counts(p); got != "0/0/5/0" || len(p.Groups) != 0 || len(p.Credentials) != 0 {
		t.Fatalf("second plan counts %s, groups %v, credentials %d; want 0/0/5/0 and nothing new", got, p.Groups, len(p.Credentials))
	}
	if err := p.Apply(ctx, store, sealer); err != nil {
		t.Fatal(err)
	}
	if n := tableCount(t, store, "devices"); n != 5 {
		t.Fatalf("%d devices after the second import, want 5", n)
	}

	// A changed file updates in place.
	p = plan(t, store, sealer, "Core-1:iosxe:dc3:admin:new\nlab-1:eos\n")
	if got := counts(p); got != "0/1/1/0" {
		t.Fatalf("third plan counts %s, want 0/1/1/0", got)
	}
	if ch := strings.Join(p.Rows[0].Changes, ","); ch != "host,platform,group,credential" {
		t.Errorf("changes %q", ch)
	}
	if err := p.Apply(ctx, store, sealer); err != nil {
		t.Fatal(err)
	}
	d := allDevices(t, store)["core-1"]
	if d.ID != c1.ID || d.Platform != "cisco_xe" || d.CredentialID == nil || *d.CredentialID == *c1.CredentialID {
		t.Fatalf("core-1 after the update: %+v", d)
	}
}

func TestApplyAllOrNothing(t *testing.T) {
	ctx := context.Background()
	store, sealer := openData(t)
	// The database refuses the last device of the file.
	refuse := []string{`CREATE TRIGGER refuse BEFORE INSERT ON devices WHEN NEW.name = 'lab-1'
		BEGIN SELECT RAISE(ABORT, 'refused by test'); END`}
	if store.Postgres() {
		refuse = []string{`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF NEW.name = 'lab-1' THEN RAISE EXCEPTION 'refused by test'; END IF; RETURN NEW; END $$`,
			`CREATE TRIGGER refuse BEFORE INSERT ON devices FOR EACH ROW EXECUTE FUNCTION refuse()`}
	}
	for _, q := range refuse {
		if _, err := dbtest.Poke(t, store).ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	p := plan(t, store, sealer, routerDB)
	err := p.Apply(ctx, store, sealer)
	if err == nil || !strings.Contains(err.Error(), "refused by test") {
		t.Fatalf("Apply = %v, want the database's refusal", err)
	}
	for _, table := range []string{"devices", "device_groups", "credentials"} {
		if n := tableCount(t, store, table); n != 0 {
			t.Errorf("%d rows in %s after a failed import, want 0", n, table)
		}
	}
}

func TestApplyNothing(t *testing.T) {
	store, sealer := openData(t)
	p := plan(t, store, sealer, "# only comments\nx:nosuch\n")
	if err := p.Apply(context.Background(), store, sealer); err != importer.ErrNothing {
		t.Fatalf("Apply = %v, want ErrNothing", err)
	}
}

func TestRancidPlan(t *testing.T) {
	ctx := context.Background()
	store, sealer := openData(t)
	parsed, err := importer.ParseRancid([]byte("r1;cisco;up\nr2;juniper;up\nr3;cisco;down\n"), []byte("add user * rancid\nadd password r1 a b\nadd password * c\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := importer.Build(ctx, store, sealer, parsed, "networking", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := counts(p); got != "2/0/0/1" || len(p.Credentials) != 2 || p.Credentials[0].Name != "Imported rancid 1" || len(p.Groups) != 1 {
		t.Fatalf("plan %s, credentials %+v, groups %v", got, len(p.Credentials), p.Groups)
	}
	if err := p.Apply(ctx, store, sealer); err != nil {
		t.Fatal(err)
	}
	if d := allDevices(t, store)["r1"]; d.GroupID == nil || d.Host != "r1" {
		t.Fatalf("r1: %+v", d)
	}
}

// Zones: a CSV's zone column (any case) and a default zone place the
// devices; an empty cell keeps an existing device's zone; an unknown zone
// skips its row and writes nothing of it; an unknown default zone stops
// the import before anything is planned. Names are unique across zones,
// addresses are not: one host in two zones is two devices.
func TestZones(t *testing.T) {
	ctx := context.Background()
	store, sealer := openData(t)
	site1, err := store.CreateZone(ctx, "Site-1")
	if err != nil {
		t.Fatal(err)
	}
	site2, err := store.CreateZone(ctx, "site-2")
	if err != nil {
		t.Fatal(err)
	}
	build := func(file, zone string) (*importer.Plan, error) {
		t.Helper()
		parsed, err := importer.ParseCSV([]byte(file))
		if err != nil {
			t.Fatal(err)
		}
		return importer.Build(ctx, store, sealer, parsed, "", zone)
	}
	p, err := build("name,host,platform,zone\n"+
		"a1,10.0.0.1,ios,site-1\n"+
		"b1,10.0.0.1,ios,SITE-2\n"+
		"c1,10.0.0.2,ios,\n"+
		"d1,10.0.0.3,ios,nowhere\n", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := counts(p); got != "3/0/0/1" {
		t.Fatalf("counts %s, want 3/0/0/1", got)
	}
	if s := p.Skipped[0]; s.Line != 5 || s.Code != importer.ReasonNoZone || !strings.Contains(s.Reason(), `no zone named "nowhere"`) {
		t.Errorf("skipped %+v: %s", s, s.Reason())
	}
	var report bytes.Buffer
	p.Report(&report, true, false)
	for _, want := range []string{`line 2: would create a1: cisco_ios at 10.0.0.1, zone "Site-1"`, `line 5: skip d1: no zone named "nowhere"`} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, report.String())
		}
	}
	if err := p.Apply(ctx, store, sealer); err != nil {
		t.Fatal(err)
	}
	all := allDevices(t, store)
	if len(all) != 3 || all["a1"].ZoneID != site1.ID || all["b1"].ZoneID != site2.ID || all["c1"].ZoneID != db.LocalZone {
		t.Fatalf("devices %+v", all)
	}
	if _, ok := all["d1"]; ok {
		t.Fatal("the row of an unknown zone was imported")
	}

	// An empty cell keeps the zone; a named one moves the device, and its
	// queued job with it.
	if _, err := store.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: all["a1"].ID, Trigger: queue.TriggerManual, NotBefore: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	p, err = build("name,host,platform,zone\na1,10.0.0.1,ios,\nb1,10.0.0.1,ios,local\n", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := counts(p); got != "0/1/1/0" || strings.Join(p.Rows[1].Changes, ",") != "zone" {
		t.Fatalf("counts %s, changes %v", got, p.Rows[1].Changes)
	}
	if err := p.Apply(ctx, store, sealer); err != nil {
		t.Fatal(err)
	}
	// The default zone applies to rows that name none.
	p, err = build("name,host,platform\na1,10.0.0.1,ios\ne1,10.0.0.1,ios\n", "SITE-2")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(ctx, store, sealer); err != nil {
		t.Fatal(err)
	}
	all = allDevices(t, store)
	if all["b1"].ZoneID != db.LocalZone || all["a1"].ZoneID != site2.ID || all["e1"].ZoneID != site2.ID {
		t.Fatalf("after the moves: a1 %d, b1 %d, e1 %d", all["a1"].ZoneID, all["b1"].ZoneID, all["e1"].ZoneID)
	}
	var jobZone int64
	if err := dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT zone_id FROM jobs WHERE device_id = ? AND state = 'queued'`, all["a1"].ID).Scan(&jobZone); err != nil {
		t.Fatal(err)
	}
	if jobZone != site2.ID {
		t.Errorf("a1's queued job is in zone %d, want %d (its device's)", jobZone, site2.ID)
	}

	// An unknown default zone: an error, nothing written.
	before := tableCount(t, store, "devices")
	if _, err = build("name,host,platform\nz1,10.0.0.9,ios\n", "nowhere"); err == nil || !strings.Contains(err.Error(), `no zone named "nowhere"`) {
		t.Fatalf("Build with an unknown zone = %v", err)
	}
	if n := tableCount(t, store, "devices"); n != before {
		t.Fatalf("%d devices after a refused import, want %d", n, before)
	}
}

// A router.db in Oxidized's documented layout, read with the default
// map, gives each device a credential with its username, its password and
// its enable password, both sealed.
func TestDefaultMapImportsEnableSealed(t *testing.T) {
	ctx := context.Background()
	store, sealer := openData(t)
	parsed, err := importer.ParseOxidized([]byte("rtr01.local:ios:oxidized:5uP3R53cR3T:T0p53cR3t\n"), ":", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := importer.Build(ctx, store, sealer, parsed, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(ctx, store, sealer); err != nil {
		t.Fatal(err)
	}
	d := allDevices(t, store)["rtr01.local"]
	if d.CredentialID == nil || d.GroupID != nil {
		t.Fatalf("device %+v", d)
	}
	c, err := store.GetCredential(ctx, *d.CredentialID)
	if err != nil {
		t.Fatal(err)
	}
	pw, err1 := sealer.Open(c.Password, secret.PurposePassword)
	en, err2 := sealer.Open(c.EnablePassword, secret.PurposeEnablePassword)
	if c.Username != "oxidized" || pw != "5uP3R53cR3T" || en != "T0p53cR3t" || err1 != nil || err2 != nil {
		t.Fatalf("credential: user %q password %q (%v) enable %q (%v)", c.Username, pw, err1, en, err2)
	}
	if bytes.Contains(c.EnablePassword, []byte("T0p53cR3t")) || bytes.Contains(c.Password, []byte("5uP3R53cR3T")) {
		t.Fatal("a password is stored in the clear")
	}
}

// Hosts are IP addresses or DNS names: digits and dots that are no IPv4
// address are refused with a reason that says so.
func TestHostValidation(t *testing.T) {
	store, sealer := openData(t)
	m, err := importer.ParseMap("name=0,model=1,ip=2")
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"999.1.1.1", "010.1.1.1", "10.1.1", "1.2.3.4.5", "256.0.0.1", "12345", "192.0.2.1", "2001:db8::1", "router.example.net", "r-1", "bad_host!"}
	var file strings.Builder
	for i, h := range hosts {
		fmt.Fprintf(&file, "r%d;ios;%s\n", i, h)
	}
	parsed, err := importer.ParseOxidized([]byte(file.String()), ";", m)
	if err != nil {
		t.Fatal(err)
	}
	p, err := importer.Build(context.Background(), store, sealer, parsed, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range p.Skipped {
		got[hosts[s.Line-1]] = s.Code
		if s.Code == importer.ReasonBadIPv4 && !strings.Contains(s.Reason(), `bad host "`+hosts[s.Line-1]+`": not an IPv4 address (four numbers from 0 to 255`) {
			t.Errorf("reason %q", s.Reason())
		}
	}
	want := map[string]string{"999.1.1.1": importer.ReasonBadIPv4, "010.1.1.1": importer.ReasonBadIPv4, "10.1.1": importer.ReasonBadIPv4,
		"1.2.3.4.5": importer.ReasonBadIPv4, "256.0.0.1": importer.ReasonBadIPv4, "12345": importer.ReasonBadIPv4, "bad_host!": importer.ReasonBadHost}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(p.Rows) != 4 {
		t.Errorf("skipped %v, want %v; %d rows", got, want, len(p.Rows))
	}
}

// A 10 MB device name is refused by the plan and shown cut.
func TestPlanHugeName(t *testing.T) {
	store, sealer := openData(t)
	p := plan(t, store, sealer, strings.Repeat("N", 10<<20)+":ios:dc1:admin:Secret-7\n")
	if len(p.Skipped) != 1 || len(p.Rows) != 0 {
		t.Fatalf("rows %d skipped %+v", len(p.Rows), len(p.Skipped))
	}
	var out bytes.Buffer
	p.Report(&out, true, false)
	if out.Len() > 600 || strings.Contains(out.String(), "Secret-7") || !strings.Contains(out.String(), "line 1: skip NNN") {
		t.Errorf("report of %d bytes: %.300q", out.Len(), out.String())
	}
}
