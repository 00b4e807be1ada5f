package cli_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"

	"backupd/app/devsim"
	"backupd/app/notify"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/internal/dbtest"
)

// hookReceiver is a webhook endpoint that hangs (a receiver that is down
// behind a proxy that never answers) until it is told to take
// deliveries; then it answers 200 and counts each event it took.
type hookReceiver struct {
	key []byte

	mu      sync.Mutex
	up      bool
	hung    int            // requests that arrived while down
	taken   map[string]int // event id → times taken with a 200
	badSigs int
	urls    int // events that link to the web interface
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	if !h.up {
		h.hung++
		h.mu.Unlock()
		<-r.Context().Done() // until the sender goes away
		return
	}
	defer h.mu.Unlock()
	mac := hmac.New(sha256.New, h.key)
	mac.Write(raw)
	if !hmac.Equal([]byte("sha256="+hex.EncodeToString(mac.Sum(nil))), []byte(r.Header.Get(notify.HeaderSignature))) {
		h.badSigs++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var env notify.Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, ev := range env.Events {
		h.taken[ev.ID]++
		if strings.HasPrefix(ev.URL, "https://backupd.example/devices/") {
			h.urls++
		}
	}
	w.WriteHeader(http.StatusOK)
}

func (h *hookReceiver) state() (hung int, taken map[string]int, bad int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	taken = map[string]int{}
	for k, v := range h.taken {
		taken[k] = v
	}
	return h.hung, taken, h.badSigs
}

// Events recorded by real backups (backupd backup run over SSH to
// simulated devices) while the receiver is down are delivered after serve
// is killed with SIGKILL in the middle of sending them and started again:
// each event reaches the receiver exactly once, in one digest.
func TestServeDeliversNotificationsAfterKill9(t *testing.T) {
	t.Parallel() // see runTests
	data := storeDir(t)
	store, ids, sims := simFleetDevices(t, data, 4, devsim.Options{})
	ctx := context.Background()
	sealer, err := secret.LoadOrCreate(data)
	if err != nil {
		t.Fatal(err)
	}
	rc := &hookReceiver{key: []byte("kill-9-hook-secret"), taken: map[string]int{}}
	hook := httptest.NewServer(rc)
	defer hook.Close()
	ch := webhookRule(t, store, sealer, "ops", hook.URL+"/hook", rc.key, true, outbox.EventFirstBackup, outbox.EventConfigChanged)
	mustRun(t, call{}, "backup", "run", "--all", "--data", data)
	for i, d := range sims {
		d.Mutate(int64(i + 1))
	}
	mustRun(t, call{}, "backup", "run", "--all", "--data", data)
	var events []string
	rows, err := dbtest.Peek(t, store).QueryContext(ctx, `SELECT id FROM outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		events = append(events, id)
	}
	rows.Close()
	if len(events) != 2*len(ids) {
		t.Fatalf("%d events recorded, want a first backup and a change of each of %d devices", len(events), len(ids))
	}
	states := func() map[string]int {
		out := map[string]int{}
		rows, err := dbtest.Peek(t, store).QueryContext(ctx, `SELECT state, COUNT(*) FROM deliveries GROUP BY state`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			var n int
			rows.Scan(&s, &n)
			out[s] = n
		}
		return out
	}

	// The first serve claims all of them and is killed while the
	// receiver keeps it waiting. (The digest sent again after the restart
	// is the one it sent, links included.)
	srv := startServe(t, data, "--notify-window", "1s", "--public-url", "https://backupd.example")
	waitFor(t, srv, "the digest to be in flight", func() bool {
		hung, _, _ := rc.state()
		return hung == 1 && states()[outbox.DeliverySending] == len(events)
	})
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-srv.done

	rc.mu.Lock()
	rc.up = true
	rc.mu.Unlock()
	srv = startServe(t, data, "--notify-window", "1s", "--metrics-listen", "127.0.0.1:0", "--public-url", "https://backupd.example")
	waitFor(t, srv, "every event to be delivered", func() bool { return states()[outbox.DeliverySent] == len(events) })
	mm := metricsURL.FindStringSubmatch(srv.stderr.String())
	if mm == nil {
		t.Fatalf("no metrics address:\n%s", srv.stderr)
	}
	metrics := scrapeMetrics(t, mm[1])
	for _, want := range []string{
		fmt.Sprintf(`backupd_notifications_sent_total{channel_type="webhook",result="sent"} %d`, len(events)),
		"backupd_notifications_pending 0\n",
		"backupd_notifications_oldest_pending_age_seconds 0\n",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.stderr)
	}
	// Neither the channel's secret nor configuration text reaches the log.
	if logged := srv.stderr.String(); strings.Contains(logged, string(rc.key)) || strings.Contains(logged, "hostname ") ||
		!strings.Contains(logged, `msg="notification sent"`) {
		t.Fatalf("serve log:\n%s", logged)
	}
	hung, taken, bad := rc.state()
	if hung != 1 || bad != 0 || len(taken) != len(events) || rc.urls != len(events) {
		t.Fatalf("receiver: %d hung, %d bad signatures, took %v; want all of %v", hung, bad, taken, events)
	}
	for _, id := range events {
		if taken[id] != 1 {
			t.Errorf("event %s taken %d times", id, taken[id])
		}
	}
	log, err := store.DeliveryLog(ctx, ch, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range log {
		// The killed attempt was given back: this is the first that counted.
		if d.State != outbox.DeliverySent || d.Attempts != 1 || d.LastStatus == nil || *d.LastStatus != "200" {
			t.Errorf("delivery %d: %s, %d attempts, status %v", d.ID, d.State, d.Attempts, d.LastStatus)
		}
	}
}

// --public-url must be an address users open; a bad one (here from the
// environment) is refused before anything starts, and credentials in it
// are not echoed.
func TestPublicURLIsValidated(t *testing.T) {
	data := storeDir(t)
	mustFail(t, call{env: []string{"BACKUPD_PUBLIC_URL=ftp://backupd.example"}}, []string{"--public-url: want the address users open"}, "serve", "--data", data)
	r := mustFail(t, call{}, []string{"--public-url"}, "serve", "--data", data, "--public-url", "https://admin:pa55word@backupd.example")
	if strings.Contains(r.String(), "pa55word") {
		t.Fatalf("the error echoes the URL's password: %s", r)
	}
	mustFail(t, call{}, []string{"--notify-window 2h0m0s"}, "serve", "--data", data, "--notify-window", "2h")
	mustFail(t, call{}, []string{"--stale-after 10m0s"}, "serve", "--data", data, "--stale-after", "10m")
}

// A webhook URL an earlier version stored in clear (its token in the
// settings column) is sealed when serve starts, and the row still opens
// to the whole URL.
func TestServeSealsWebhookURLsStoredInClear(t *testing.T) {
	data := storeDir(t)
	store := openStore(t, data)
	ctx := context.Background()
	sealer, err := secret.LoadOrCreate(data)
	if err != nil {
		t.Fatal(err)
	}
	const hookURL = "https://hooks.example/in?token=tok-SERVE-SEAL-3"
	row, err := store.CreateNotificationChannel(ctx, db.NotificationChannel{Name: "legacy", Type: db.ChannelWebhook, Enabled: true,
		Config: []byte(`{"url":"` + hookURL + `"}`), Secret: notify.Sealer(sealer)([]byte("k"))})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, data)
	waitFor(t, srv, "the URL to be sealed", func() bool {
		c, err := store.GetNotificationChannel(ctx, row.ID)
		return err == nil && !strings.Contains(string(c.Config), "tok-SERVE-SEAL-3")
	})
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.stderr)
	}
	c, err := store.GetNotificationChannel(ctx, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := notify.ChannelFromStore(c, notify.Opener(sealer))
	if err != nil || ch.Webhook.URL != hookURL || string(ch.Secret) != "k" {
		t.Fatalf("sealed row opens to %+v, %v", ch.Webhook, err)
	}
	if strings.Contains(srv.stderr.String(), "tok-SERVE-SEAL-3") {
		t.Fatal("serve logged the token")
	}
}
