package db_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"testing"
	"time"

	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// A PostgreSQL server that stops answering (the connection held, nothing
// closed, nothing refused) does not hold a call past its context: reads,
// prepared reads, writes and transactions each return their context's
// error soon after it ends, and once the server answers again the store
// works on fresh connections. Before calls were bound, lib/pq asked the
// server to cancel and went on waiting for an answer that never came.
func TestPostgresCallsEndWithTheirContextWhenTheServerIsSilent(t *testing.T) {
	requirePostgres(t)
	loc := dbtest.Location(t)
	proxy := dbtest.NewProxy(t, hostOf(t, loc))
	s, err := dbtest.OpenAt(t, dbtest.WithHost(loc, proxy.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dev := clusterDevices(t, s, 1)[0]
	jobs, err := s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: queue.TriggerManual, NotBefore: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name string
		call func(context.Context) error
	}{
		{"read", func(ctx context.Context) error { _, _, err := s.JobCounts(ctx); return err }},
		{"prepared read", func(ctx context.Context) error { _, err := s.GetJobs(ctx, jobs); return err }},
		{"write", func(ctx context.Context) error { _, err := s.CancelJob(ctx, jobs[0]+1000); return err }},
		{"transaction", func(ctx context.Context) error {
			return s.InTx(ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, `UPDATE settings SET updated_at = updated_at WHERE key = 'none'`)
				return err
			})
		}},
	}
	// Each kind once on a healthy connection, so that the pools hold some.
	for _, c := range calls {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := c.call(cctx)
		cancel()
		if err != nil {
			t.Fatalf("%s before the cut: %v", c.name, err)
		}
	}

	proxy.Cut()
	// Healed before the store closes, should a call still wait.
	defer proxy.Heal()
	for _, c := range calls {
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		done := make(chan error, 1)
		go func() { done <- c.call(cctx) }()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s on a silent server: %v; want its context's deadline", c.name, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s on a silent server still waits 20 s after its 0.5 s deadline", c.name)
		}
		cancel()
	}

	proxy.Heal()
	for _, c := range calls {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := c.call(cctx)
		cancel()
		if err != nil {
			t.Errorf("%s once the server answers again: %v", c.name, err)
		}
	}
}

// The store's own connections (not only the lock sessions) carry the
// server-side keepalives, so that PostgreSQL ends the session, and frees
// the row locks, of a node it no longer hears from.
func TestPostgresPoolConnectionsHaveServerKeepalives(t *testing.T) {
	requirePostgres(t)
	s := dbtest.Open(t)
	for k, want := range map[string]string{"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2",
		"tcp_keepalives_count": "3", "tcp_user_timeout": "10000"} {
		var got string
		if err := s.Reader().QueryRow("SHOW " + k).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %q on a pool connection, want %q", k, got, want)
		}
	}
}

func hostOf(t *testing.T, loc string) string {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
