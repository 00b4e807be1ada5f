package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/app/notify"
	"backupd/app/redact"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// fleetStore is a real store with devices and one rule sending changes
// and failures to the channels a test adds.
type fleetStore struct {
	s      *db.Store
	sealer *secret.Sealer
	devs   []int64
}

func newFleetStore(t testing.TB, n int) *fleetStore {
	t.Helper()
	ctx := context.Background()
	s := dbtest.Open(t)
	key := make([]byte, 32)
	sealer, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	f := &fleetStore{s: s, sealer: sealer}
	for i := range n {
		var id int64
		err := dbtest.Poke(t, s).QueryRowContext(ctx, `INSERT INTO devices (name, host, port, platform, login_method, created_at, updated_at)
			VALUES (?, ?, 22, 'cisco_ios', 'ssh', ?, ?) RETURNING id`, fmt.Sprintf("sw-%04d", i), fmt.Sprintf("10.0.%d.%d", i/250, i%250+1), db.Now(), db.Now()).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		f.devs = append(f.devs, id)
		f.attempt(t, id, queue.Outcome{Success: true, First: true, Text: deviceConfig(i, 0)})
	}
	return f
}

func deviceConfig(i, version int) string {
	return fmt.Sprintf("! Last configuration change at %02d:00:00 UTC\nhostname sw-%04d\ninterface Gi0/1\n description uplink v%d\n", version, i, version)
}

// attempt runs one backup attempt through the store's job API, as the
// engine does.
func (f *fleetStore) attempt(t testing.TB, dev int64, o queue.Outcome) {
	t.Helper()
	ctx := context.Background()
	jobs, err := f.s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: queue.TriggerSchedule, NotBefore: time.Now().Add(-time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := f.s.ClaimJobs(ctx, "engine", 1, jobs)
	if err != nil || len(claims) != 1 {
		t.Fatalf("ClaimJobs = %d, %v", len(claims), err)
	}
	o.FinishedAt = time.Now()
	if err := f.s.FinishJob(ctx, claims[0], o); err != nil {
		t.Fatal(err)
	}
}

// change gives the i-th device a new version.
func (f *fleetStore) change(t testing.TB, i, version int) {
	f.attempt(t, f.devs[i], queue.Outcome{Success: true, Changed: true, Text: deviceConfig(i, version)})
}

func (f *fleetStore) channel(t testing.TB, ch notify.Channel, includeDiff bool) int64 {
	t.Helper()
	ctx := context.Background()
	cfg, sealed, err := notify.ChannelToStore(ch, notify.Sealer(f.sealer))
	if err != nil {
		t.Fatal(err)
	}
	row, err := f.s.CreateNotificationChannel(ctx, db.NotificationChannel{Name: ch.Name, Type: ch.Type, Enabled: true,
		Config: cfg, Secret: sealed, Language: ch.Language})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CreateNotificationRule(ctx, db.NotificationRule{Name: "rule " + ch.Name, Enabled: true,
		Events: []outbox.EventKind{outbox.EventConfigChanged, outbox.EventBackupFailed}, Scope: db.RuleScopeAll,
		ChannelIDs: []int64{row.ID}, IncludeDiff: includeDiff}); err != nil {
		t.Fatal(err)
	}
	return row.ID
}

func (f *fleetStore) worker(o notify.WorkerOptions) *notify.Worker {
	if o.Window == 0 {
		o.Window = time.Nanosecond
	}
	if o.Secrets == nil {
		o.Secrets = redact.NewKeyring(f.sealer)
	}
	return notify.NewWorker(f.s, notify.Opener(f.sealer), o)
}

// hookReceiver is a webhook endpoint that checks each request's signature
// and answers with the statuses it is given, then 200.
type hookReceiver struct {
	mu       sync.Mutex
	secret   string
	statuses []int
	got      []hookRequest
}

type hookRequest struct {
	status      int
	signatureOK bool
	event       string
	delivery    string
	auth        string // the custom Authorization header
	body        notify.Envelope
}

func (rc *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	mac := hmac.New(sha256.New, []byte(rc.secret))
	mac.Write(raw)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	var env notify.Envelope
	_ = json.Unmarshal(raw, &env)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	status := http.StatusOK
	if len(rc.statuses) > 0 {
		status, rc.statuses = rc.statuses[0], rc.statuses[1:]
	}
	rc.got = append(rc.got, hookRequest{status: status, event: r.Header.Get(notify.HeaderEvent), delivery: r.Header.Get(notify.HeaderDelivery),
		auth: r.Header.Get("Authorization"), signatureOK: hmac.Equal([]byte(want), []byte(r.Header.Get(notify.HeaderSignature))), body: env})
	w.WriteHeader(status)
}

func (rc *hookReceiver) requests() []hookRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookRequest(nil), rc.got...)
}

func hookChannel(name, url, secret string) notify.Channel {
	return notify.Channel{Type: notify.TypeWebhook, Name: name, Language: "en", Secret: []byte(secret),
		Webhook: &notify.WebhookConfig{URL: url}}
}

func pass(t *testing.T, w *notify.Worker) int {
	t.Helper()
	n, err := w.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func deliveryLog(t *testing.T, s *db.Store, ch int64) []outbox.Delivery {
	t.Helper()
	log, err := s.DeliveryLog(context.Background(), ch, 100)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// Three devices change in one run: the webhook gets one signed digest
// naming all three, with their diffs (noise marked) and links, and
// nothing more on the next pass; its custom header, stored sealed, goes
// with it.
func TestWorkerSendsOneSignedDigestPerChannel(t *testing.T) {
	f := newFleetStore(t, 4)
	rc := &hookReceiver{secret: "hook-secret-1"}
	srv := newServer(t, rc)
	hook := hookChannel("ops hook", srv.URL+"/hook", rc.secret)
	hook.Webhook.Headers = map[string]string{"Authorization": "Bearer rcv-tok-9"}
	ch := f.channel(t, hook, true)
	for i := range 3 {
		f.change(t, i, 1)
	}
	var sent []string
	w := f.worker(notify.WorkerOptions{PublicURL: "https://backupd.example/", Sent: func(ct, res string, n int) {
		sent = append(sent, fmt.Sprintf("%s/%s/%d", ct, res, n))
	}})
	if n := pass(t, w); n != 3 {
		t.Fatalf("claimed %d, want 3", n)
	}
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want one digest", len(got))
	}
	r := got[0]
	if !r.signatureOK || r.auth != "Bearer rcv-tok-9" || r.event != notify.EventDigest || r.body.Schema != notify.Schema || r.body.DeliveryID != r.delivery {
		t.Fatalf("request: %+v", r)
	}
	if len(r.body.Events) != 3 {
		t.Fatalf("%d events", len(r.body.Events))
	}
	for i, ev := range r.body.Events {
		if ev.Kind != "config.changed" || ev.Device.Name != fmt.Sprintf("sw-%04d", i) || ev.Backup == nil || ev.Backup.PreviousID == "" ||
			ev.Backup.LinesAdded != 2 || ev.Backup.LinesRemoved != 2 || ev.Diff == nil || ev.Trigger != "schedule" {
			t.Fatalf("event %d: %+v backup %+v", i, ev, ev.Backup)
		}
		if !strings.Contains(ev.Diff.Unified, "+ description uplink v1") || len(ev.Diff.NoiseLines) != 2 {
			t.Fatalf("event %d diff: %+v", i, ev.Diff)
		}
		wantURL := fmt.Sprintf("https://backupd.example/devices/%d/diff?from=%s&to=%s", ev.Device.ID, ev.Backup.PreviousID, ev.Backup.ID)
		if ev.URL != wantURL {
			t.Fatalf("url %q, want %q", ev.URL, wantURL)
		}
	}
	if n := pass(t, w); n != 0 || len(rc.requests()) != 1 {
		t.Fatalf("second pass claimed %d, %d requests", n, len(rc.requests()))
	}
	for _, d := range deliveryLog(t, f.s, ch) {
		if d.State != outbox.DeliverySent || d.LastStatus == nil || *d.LastStatus != "200" || d.Attempts != 1 {
			t.Fatalf("delivery %+v", d)
		}
	}
	if strings.Join(sent, ",") != "webhook/sent/3" {
		t.Fatalf("counted %v", sent)
	}
}

// A rule without "include diff" sends the counts, never the diff.
func TestWorkerLeavesDiffOutUnlessTheRuleIncludesIt(t *testing.T) {
	f := newFleetStore(t, 1)
	rc := &hookReceiver{secret: "s"}
	f.channel(t, hookChannel("no diff", newServer(t, rc).URL, "s"), false)
	f.change(t, 0, 1)
	pass(t, f.worker(notify.WorkerOptions{}))
	got := rc.requests()
	if len(got) != 1 || len(got[0].body.Events) != 1 {
		t.Fatalf("requests %+v", got)
	}
	ev := got[0].body.Events[0]
	if ev.Diff != nil || ev.Backup.LinesAdded != 2 || ev.URL != "" || got[0].event != "config.changed" {
		t.Fatalf("event %+v", ev)
	}
}

// New events wait until none came for the digest window, so that the
// rest of their run joins them, but no longer than MaxHold while events
// keep coming.
func TestWorkerHoldsNewEventsForTheWindow(t *testing.T) {
	f := newFleetStore(t, 3)
	rc := &hookReceiver{secret: "s"}
	f.channel(t, hookChannel("hook", newServer(t, rc).URL, "s"), false)
	ctx := context.Background()
	now := time.Now()
	// recordedAgo makes the i-th device's change as if recorded d ago.
	recordedAgo := func(i int, d time.Duration) {
		f.change(t, i, 1+int(d))
		at := now.Add(-d).UTC().Format(db.BackupTimeFormat)
		if _, err := dbtest.Poke(t, f.s).ExecContext(ctx, `UPDATE deliveries SET next_attempt_at = ?, created_at = ? WHERE id = (SELECT MAX(id) FROM deliveries)`,
			at, at); err != nil {
			t.Fatal(err)
		}
	}
	w := f.worker(notify.WorkerOptions{Window: time.Minute, MaxHold: 10 * time.Minute, Now: func() time.Time { return now }})
	recordedAgo(0, 5*time.Minute)
	recordedAgo(1, 30*time.Second)
	if n := pass(t, w); n != 0 {
		t.Fatalf("claimed %d while the run goes on", n)
	}
	now = now.Add(31 * time.Second) // a minute without a new event
	if n := pass(t, w); n != 2 || len(rc.requests()) != 1 || len(rc.requests()[0].body.Events) != 2 {
		t.Fatalf("claimed %d, requests %d", n, len(rc.requests()))
	}
	// Events that keep coming are sent when the oldest was held MaxHold.
	recordedAgo(2, 10*time.Minute)
	recordedAgo(0, 0)
	if n := pass(t, w); n != 2 || len(rc.requests()) != 2 {
		t.Fatalf("held past MaxHold: claimed %d, requests %d", n, len(rc.requests()))
	}
}

// A receiver answering 500 is tried again after 1 min, then 2 min, with
// the same delivery id, until it takes the delivery; then never again.
func TestWorkerRetriesWithBackoffUntilDelivered(t *testing.T) {
	f := newFleetStore(t, 2)
	rc := &hookReceiver{secret: "s", statuses: []int{500, 503}}
	ch := f.channel(t, hookChannel("flaky", newServer(t, rc).URL, "s"), false)
	f.change(t, 0, 1)
	f.change(t, 1, 1)
	now := time.Now()
	var counted []string
	w := f.worker(notify.WorkerOptions{Now: func() time.Time { return now }, Sent: func(ct, res string, n int) {
		counted = append(counted, fmt.Sprintf("%s/%d", res, n))
	}})
	for attempt, wait := range []time.Duration{time.Minute, 2 * time.Minute} {
		if n := pass(t, w); n != 2 {
			t.Fatalf("attempt %d claimed %d", attempt+1, n)
		}
		for _, d := range deliveryLog(t, f.s, ch) {
			if d.State != outbox.DeliveryFailed || d.Attempts != attempt+1 || !d.NextAttemptAt.Equal(now.Add(wait).UTC().Truncate(time.Millisecond)) ||
				d.LastStatus == nil || !strings.HasPrefix(*d.LastStatus, "50") {
				t.Fatalf("after attempt %d: %+v next %v", attempt+1, d, d.NextAttemptAt)
			}
		}
		// Not due before its retry time.
		now = now.Add(wait - time.Second)
		if n := pass(t, w); n != 0 {
			t.Fatalf("claimed %d before the retry was due", n)
		}
		now = now.Add(time.Second)
	}
	if n := pass(t, w); n != 2 {
		t.Fatalf("third attempt claimed %d", n)
	}
	now = now.Add(24 * time.Hour)
	if n := pass(t, w); n != 0 {
		t.Fatalf("a sent delivery was claimed again")
	}
	got := rc.requests()
	if len(got) != 3 || got[0].delivery != got[2].delivery || got[2].status != 200 {
		t.Fatalf("requests %+v", got)
	}
	for _, d := range deliveryLog(t, f.s, ch) {
		if d.State != outbox.DeliverySent || d.Attempts != 3 {
			t.Fatalf("delivery %+v", d)
		}
	}
	if strings.Join(counted, ",") != "failed/2,failed/2,sent/2" {
		t.Fatalf("counted %v", counted)
	}
}

// A 4xx answer (the hookReceiver refuses the delivery) gives up at once; a
// delivery failing past a day after its event gives up too.
func TestWorkerGivesUp(t *testing.T) {
	f := newFleetStore(t, 2)
	refuse := &hookReceiver{secret: "s", statuses: []int{404}}
	gone := f.channel(t, hookChannel("refusing", newServer(t, refuse).URL, "s"), false)
	f.change(t, 0, 1)
	now := time.Now()
	var counted []string
	w := f.worker(notify.WorkerOptions{Now: func() time.Time { return now }, Sent: func(ct, res string, n int) {
		counted = append(counted, res)
	}})
	pass(t, w)
	d := deliveryLog(t, f.s, gone)
	if len(d) != 1 || d[0].State != outbox.DeliveryGaveUp || *d[0].LastStatus != "404" {
		t.Fatalf("refused delivery: %+v", d)
	}
	now = now.Add(time.Hour)
	if n := pass(t, w); n != 0 || len(refuse.requests()) != 1 {
		t.Fatalf("a given-up delivery was tried again")
	}
	if strings.Join(counted, ",") != "gave_up" {
		t.Fatalf("counted %v", counted)
	}
}

func TestBackoff(t *testing.T) {
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute,
		64 * time.Minute, 128 * time.Minute, 256 * time.Minute, 6 * time.Hour, 6 * time.Hour}
	for i, w := range want {
		if got := notify.Backoff(i + 1); got != w {
			t.Fatalf("Backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	if notify.Backoff(1000) != 6*time.Hour {
		t.Fatal("no cap")
	}
}

// An e-mail channel gets one message for the run, listing every device,
// from a real SMTP server on 127.0.0.1.
func TestWorkerSendsOneEmailDigest(t *testing.T) {
	cert, pool := selfSigned(t)
	mb := startMailbox(t, notify.SecuritySTARTTLS, cert)
	f := newFleetStore(t, 5)
	f.channel(t, emailChannel(mb, notify.SecuritySTARTTLS, "en"), true)
	for i := range 5 {
		f.change(t, i, 1)
	}
	if n := pass(t, f.worker(notify.WorkerOptions{RootCAs: pool})); n != 5 {
		t.Fatalf("claimed %d", n)
	}
	mb.mu.Lock()
	count := len(mb.messages)
	mb.mu.Unlock()
	if count != 1 {
		t.Fatalf("%d messages, want one digest", count)
	}
	m := parseMessage(t, mb.last(t).data)
	for i := range 5 {
		if name := fmt.Sprintf("sw-%04d", i); !strings.Contains(m.text, name) || !strings.Contains(m.html, name) {
			t.Fatalf("digest does not name %s:\n%s", name, m.text)
		}
	}
	if !strings.Contains(m.text, "description uplink v1") {
		t.Fatalf("digest without the diff:\n%s", m.text)
	}
}

// The stale check records backup.stale for a device without a good
// backup for longer than the threshold, at once when it starts; the
// worker delivers it with the threshold and no last good backup.
func TestStaleCheckRecordsAndWorkerDelivers(t *testing.T) {
	f := newFleetStore(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	old := time.Now().Add(-72 * time.Hour).UTC().Format(db.TimeFormat)
	if _, err := dbtest.Poke(t, f.s).ExecContext(ctx, `INSERT INTO devices (name, host, port, platform, login_method, created_at, updated_at)
		VALUES ('forgotten', '10.9.9.9', 22, 'cisco_ios', 'ssh', ?, ?)`, old, old); err != nil {
		t.Fatal(err)
	}
	rc := &hookReceiver{secret: "s"}
	row, err := f.s.CreateNotificationChannel(ctx, db.NotificationChannel{Name: "stale", Type: db.ChannelWebhook, Enabled: true,
		Config: []byte(`{"url":"` + newServer(t, rc).URL + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CreateNotificationRule(ctx, db.NotificationRule{Name: "stale", Enabled: true, Scope: db.RuleScopeAll,
		Events: []outbox.EventKind{outbox.EventBackupStale}, ChannelIDs: []int64{row.ID}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); notify.RunStaleCheck(ctx, f.s, 48*time.Hour, time.Hour, nil) }()
	var n int
	for deadline := time.Now().Add(10 * time.Second); n == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := dbtest.Peek(t, f.s).QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox WHERE kind = 'backup.stale'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	<-done
	if n != 1 {
		t.Fatalf("%d stale events", n)
	}
	pass(t, f.worker(notify.WorkerOptions{}))
	got := rc.requests()
	if len(got) != 1 || len(got[0].body.Events) != 1 {
		t.Fatalf("requests %+v", got)
	}
	ev := got[0].body.Events[0]
	if ev.Kind != "backup.stale" || ev.Trigger != "check" || ev.Stale == nil || ev.Stale.ThresholdSeconds != 48*3600 ||
		ev.Stale.LastGoodAt != nil || ev.Device.Name != "forgotten" || ev.Backup != nil {
		t.Fatalf("event %+v stale %+v", ev, ev.Stale)
	}
}

// A channel that hangs holds its own delivery, never the backups: while
// the worker waits on it, backups finish and record their events.
func TestHungChannelDoesNotHoldBackups(t *testing.T) {
	f := newFleetStore(t, 5)
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	f.channel(t, hookChannel("hung", srv.URL, "s"), false)
	f.change(t, 0, 1)
	w := f.worker(notify.WorkerOptions{Timeout: time.Minute})
	type passed struct {
		n   int
		err error
	}
	done := make(chan passed, 1)
	go func() {
		n, err := w.Pass(context.Background())
		done <- passed{n, err}
	}()
	select {
	case <-arrived:
	case p := <-done:
		t.Fatalf("the pass ended without sending: %d, %v", p.n, p.err)
	case <-time.After(time.Minute):
		t.Fatal("no send within a minute")
	}
	for i := 1; i < 5; i++ {
		f.change(t, i, 1) // each records its event in its own transaction
	}
	var events int
	if err := dbtest.Peek(t, f.s).QueryRow(`SELECT COUNT(*) FROM outbox WHERE kind = 'config.changed'`).Scan(&events); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatal("the send returned before the receiver answered")
	default:
	}
	close(release)
	if p := <-done; p.n != 1 || p.err != nil || events != 5 {
		t.Fatalf("the pass claimed %d (%v); %d changes recorded while it waited", p.n, p.err, events)
	}
}

// httpRecorder keeps the last request body in *body and answers 200.
func httpRecorder(body *[]byte) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		*body = raw
		mu.Unlock()
	})
}

func failedOutcome() queue.Outcome {
	return queue.Outcome{Error: "login refused: authentication failed", Reason: "auth"}
}
