package notify_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"backupd/app/notify"
	"backupd/app/redact"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/engine"
	"backupd/db/outbox"
	"backupd/internal/dbtest"
)

// crashChildEnv hands TestWorkerCrashChild its store, lock directory and
// key (JSON of crashChild).
const crashChildEnv = "BACKUPD_TEST_NOTIFY_CRASH"

type crashChild struct {
	Location string `json:"location"`
	LockDir  string `json:"lock_dir"`
	Key      string `json:"key"`
}

// TestWorkerCrashChild is the backupd process TestWorkerRedeliversSameBatch
// kills: a delivery worker on the parent's store, as serve runs it.
func TestWorkerCrashChild(t *testing.T) {
	raw := os.Getenv(crashChildEnv)
	if raw == "" {
		t.Skip("run by TestWorkerRedeliversSameBatch")
	}
	var c crashChild
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var s *db.Store
	var err error
	if engine.IsPostgresURL(c.Location) {
		s, err = db.OpenPostgres(ctx, c.Location)
	} else {
		s, err = db.Open(ctx, c.Location)
	}
	if err != nil {
		t.Fatal(err)
	}
	key, _ := hex.DecodeString(c.Key)
	sealer, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	w := notify.NewWorker(s, notify.Opener(sealer), notify.WorkerOptions{Window: time.Nanosecond, Poll: 20 * time.Millisecond,
		Timeout: 2 * time.Minute, LockDir: c.LockDir, Secrets: redact.NewKeyring(sealer)})
	err = w.Run(ctx)
	t.Fatalf("the worker was not killed: %v", err)
}

// crashReceiver is a webhook endpoint that keeps every request's raw body
// and answers the first one as told: with a status, or not at all (it
// waits until the client is gone); the others with 200.
type crashReceiver struct {
	first    int // 0: never answer the first request
	mu       sync.Mutex
	got      []rawHook
	arrived  chan struct{}
	answered chan struct{}
}

type rawHook struct {
	delivery string
	body     []byte
	devices  []string
}

func (rc *crashReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var env notify.Envelope
	_ = json.Unmarshal(body, &env)
	h := rawHook{delivery: r.Header.Get(notify.HeaderDelivery), body: body}
	for _, e := range env.Events {
		h.devices = append(h.devices, e.Device.Name)
	}
	rc.mu.Lock()
	rc.got = append(rc.got, h)
	n := len(rc.got)
	rc.mu.Unlock()
	if n > 1 {
		return
	}
	close(rc.arrived)
	if rc.first == 0 {
		select {
		case <-r.Context().Done(): // the sender died
		case <-time.After(2 * time.Minute):
		}
		return
	}
	w.WriteHeader(rc.first)
	close(rc.answered)
}

func (rc *crashReceiver) requests() []rawHook {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]rawHook(nil), rc.got...)
}

// A delivery's id and body stay the same across a crash or a restart of
// the process sending it: a worker process sends two changes as one
// digest; the receiver fails it (answers 500, or the process is killed
// with SIGKILL while the request is in flight); two more devices change
// meanwhile; a new process's worker on the same database sends the first
// digest again, byte for byte with the same X-Backupd-Delivery, and the
// newer changes in a delivery of their own with another id.
func TestWorkerRedeliversSameBatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first int // the receiver's answer to the first request; 0: none, the process is killed mid-flight
	}{{"failed then restarted", http.StatusInternalServerError}, {"killed mid-flight", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleetStore(t, 4)
			ctx := context.Background()
			rc := &crashReceiver{first: tc.first, arrived: make(chan struct{}), answered: make(chan struct{})}
			ch := f.channel(t, hookChannel("crash hook", newServer(t, rc).URL+"/hook", "crash-secret"), true)
			f.change(t, 0, 1)
			f.change(t, 1, 1)

			loc := f.s.Location()
			if !f.s.Postgres() {
				loc = filepath.Dir(f.s.Path())
			}
			lockDir := filepath.Join(t.TempDir(), "run")
			cfg, _ := json.Marshal(crashChild{Location: loc, LockDir: lockDir, Key: hex.EncodeToString(make([]byte, 32))})
			cmd := exec.Command(os.Args[0], "-test.run", "^TestWorkerCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), crashChildEnv+"="+string(cfg))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			killed := false
			kill := func() {
				if !killed {
					killed = true
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			}
			defer kill()
			select {
			case <-rc.arrived:
			case <-time.After(time.Minute):
				kill()
				t.Fatalf("no delivery within a minute; the worker process said:\n%s", out.String())
			}
			if tc.first != 0 {
				// Killed once it recorded the failure (its retry is a minute away).
				<-rc.answered
				deadline := time.Now().Add(30 * time.Second)
				for failed := 0; failed != 2; time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("the failure was not recorded; the worker process said:\n%s", out.String())
					}
					if err := dbtest.Peek(t, f.s).QueryRowContext(ctx, `SELECT COUNT(*) FROM deliveries WHERE state = 'failed'`).Scan(&failed); err != nil {
						t.Fatal(err)
					}
				}
			}
			kill()
			first := rc.requests()[0]
			if len(first.devices) != 2 || first.delivery == "" {
				t.Fatalf("first request %q with devices %v", first.delivery, first.devices)
			}

			// Newer events, then a new process's store and worker.
			f.change(t, 2, 1)
			f.change(t, 3, 1)
			s2 := dbtest.Reopen(t, f.s)
			var shift time.Duration
			if tc.first != 0 {
				shift = notify.FirstRetry // the retry is due
			}
			w := notify.NewWorker(s2, notify.Opener(f.sealer), notify.WorkerOptions{Window: time.Nanosecond, LockDir: lockDir, Secrets: redact.NewKeyring(f.sealer),
				Now: func() time.Time { return time.Now().Add(shift) }})
			released, err := w.Recover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 2, false: 0}[tc.first == 0]; released != want {
				t.Fatalf("Recover released %d deliveries of the dead process, want %d", released, want)
			}
			if n, err := w.Pass(ctx); err != nil || n != 4 {
				t.Fatalf("the new worker claimed %d (%v), want the 2 of the batch and the 2 new", n, err)
			}
			got := rc.requests()
			if len(got) != 3 {
				t.Fatalf("%d requests, want the first, its redelivery and the newer events'", len(got))
			}
			var again, newer *rawHook
			for i := range got[1:] {
				if h := &got[1+i]; h.delivery == first.delivery {
					again = h
				} else {
					newer = h
				}
			}
			if again == nil || newer == nil {
				t.Fatalf("ids after the restart %q and %q, first %q: the batch was not sent again as it was",
					got[1].delivery, got[2].delivery, first.delivery)
			}
			if !bytes.Equal(again.body, first.body) {
				t.Fatalf("the redelivery's body differs from the first attempt's:\nfirst %s\nagain %s", first.body, again.body)
			}
			if len(newer.devices) != 2 || newer.devices[0] != "sw-0002" || newer.devices[1] != "sw-0003" {
				t.Fatalf("newer delivery %q holds %v, want sw-0002 and sw-0003", newer.delivery, newer.devices)
			}
			for _, d := range deliveryLog(t, s2, ch) {
				if d.State != outbox.DeliverySent {
					t.Fatalf("delivery %d is %s", d.ID, d.State)
				}
			}
			var kept int
			if err := dbtest.Peek(t, s2).QueryRowContext(ctx, `SELECT COUNT(*) FROM delivery_batches WHERE events IS NOT NULL`).Scan(&kept); err != nil || kept != 0 {
				t.Fatalf("%d settled batches keep their events (%v)", kept, err)
			}
		})
	}
}
