package notify_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"backupd/app/backup"
	"backupd/app/devsim"
	"backupd/app/notify"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// bodyHook keeps every body it is sent, byte for byte.
type bodyHook struct {
	mu     sync.Mutex
	bodies []string
}

func (h *bodyHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.bodies = append(h.bodies, string(raw))
	h.mu.Unlock()
}

var notifyTag = regexp.MustCompile(`<secret:([0-9a-f]{6})>`)

// A password rotated on a simulated device reaches a webhook and an
// e-mail that include the diff as one changed line whose tag changed
// (beside the noise lines a change moves), and neither message holds any
// of the device's secrets.
func TestNotificationsMaskSecrets(t *testing.T) {
	sim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "sec-r1", Username: "netops", Password: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	show := func() string {
		text, ok := sim.Show("show running-config")
		if !ok {
			t.Fatal("no running-config")
		}
		return text
	}
	f := newFleetStore(t, 0)
	ctx := context.Background()
	var id int64
	if err := dbtest.Poke(t, f.s).QueryRowContext(ctx, `INSERT INTO devices (name, host, port, platform, login_method, created_at, updated_at)
		VALUES ('sec-r1', '10.9.9.9', 22, 'cisco_ios', 'ssh', ?, ?) RETURNING id`, db.Now(), db.Now()).Scan(&id); err != nil {
		t.Fatal(err)
	}
	f.attempt(t, id, queue.Outcome{Success: true, First: true, Text: show()})
	sim.RotateSecret("user")
	hook := &bodyHook{}
	srv := newServer(t, hook)
	f.channel(t, hookChannel("hook", srv.URL+"/hook", "s3cret-hook"), true)
	cert, pool := selfSigned(t)
	mb := startMailbox(t, notify.SecuritySTARTTLS, cert)
	f.channel(t, emailChannel(mb, notify.SecuritySTARTTLS, "en"), true)
	f.attempt(t, id, queue.Outcome{Success: true, Changed: true, Text: show()})
	if n := pass(t, f.worker(notify.WorkerOptions{RootCAs: pool})); n != 2 {
		t.Fatalf("claimed %d deliveries, want 2", n)
	}

	hook.mu.Lock()
	bodies := append([]string(nil), hook.bodies...)
	hook.mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("%d webhook bodies", len(bodies))
	}
	m := parseMessage(t, mb.last(t).data)
	for name, text := range map[string]string{"webhook": bodies[0], "e-mail text": m.text, "e-mail html": html.UnescapeString(m.html)} {
		lower := strings.ToLower(text)
		for _, s := range sim.Secrets() {
			if strings.Contains(lower, strings.ToLower(s)) {
				t.Errorf("the %s holds the secret %q", name, s)
			}
		}
		if !strings.Contains(text, "<secret:") && !strings.Contains(text, `\u003csecret:`) {
			t.Errorf("the %s shows no masked line:\n%s", name, text)
		}
	}

	var env notify.Envelope
	if err := json.Unmarshal([]byte(bodies[0]), &env); err != nil || len(env.Events) != 1 || env.Events[0].Diff == nil {
		t.Fatalf("webhook event: %v %s", err, bodies[0])
	}
	d := env.Events[0].Diff
	filter, err := backup.NewNoiseFilter("cisco_ios", nil)
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	for i, l := range strings.Split(d.Unified, "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") &&
			!d.IsNoise(i+1) && !filter.IsNoise(l[1:]) {
			changed = append(changed, l)
		}
	}
	if len(changed) != 2 || !strings.HasPrefix(changed[0], "-username ") || !strings.HasPrefix(changed[1], "+username ") {
		t.Fatalf("changed lines %q, want the user's line once removed and once added", changed)
	}
	old, cur := notifyTag.FindAllString(changed[0], -1), notifyTag.FindAllString(changed[1], -1)
	if len(old) == 0 || len(old) != len(cur) || old[len(old)-1] == cur[len(cur)-1] {
		t.Fatalf("the rotated password's tag did not change: %q → %q", old, cur)
	}
}
