package cli_test

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupd/internal/testkit"
)

// `collector token list` shows the tokens that can still enrol (never the
// tokens), `collector token revoke` makes one enrol nothing, audited; the
// collector takes its token from BACKUPD_TOKEN, off the command line: a
// revoked one is refused by the real server, a good one enrols.
func TestCollectorTokenListRevokeAndEnvironment(t *testing.T) {
	data := storeDir(t)
	mustRun(t, call{}, "collector", "zone", "create", "branch", "--data", data)
	srv := startServe(t, data)

	created := regexp.MustCompile(`enrolment token (\d+) for a collector of zone "branch"`)
	newToken := func() (token, id string) {
		t.Helper()
		r := mustRun(t, call{}, "collector", "token", "create", "--zone", "branch", "--data", data)
		m := created.FindStringSubmatch(r.stderr)
		if m == nil {
			t.Fatalf("token create does not name the token's ID:\n%s", r)
		}
		return strings.TrimSpace(r.stdout), m[1]
	}
	leaked, leakedID := newToken()
	good, goodID := newToken()

	r := mustRun(t, call{}, "collector", "token", "list", "--data", data)
	if strings.Contains(r.stdout, leaked) || strings.Contains(r.stdout, good) {
		t.Fatal("token list prints the tokens")
	}
	rows := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(rows) != 3 || !strings.HasPrefix(strings.Join(strings.Fields(rows[0]), " "), "ID ZONE CREATED (UTC) EXPIRES (UTC) STATE") ||
		!strings.HasPrefix(rows[1], goodID+" ") || !strings.HasPrefix(rows[2], leakedID+" ") || !strings.HasSuffix(rows[2], "unused") {
		t.Fatalf("token list:\n%s", r.stdout)
	}

	mustRun(t, call{}, "collector", "token", "revoke", leakedID, "--data", data)
	r = mustRun(t, call{}, "collector", "token", "list", "--data", data)
	if strings.Contains(r.stdout, "\n"+leakedID+" ") {
		t.Errorf("a revoked token is listed as usable:\n%s", r.stdout)
	}
	r = mustRun(t, call{}, "collector", "token", "list", "--all", "--data", data)
	if !regexp.MustCompile(`(?m)^` + leakedID + ` .* revoked \d{4}-`).MatchString(r.stdout) {
		t.Errorf("token list --all does not show the revocation:\n%s", r.stdout)
	}
	entries, _, err := openStore(t, data).ListAudit(context.Background(), 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	audited := false
	for _, a := range entries {
		audited = audited || (a.Action == "collector_token.revoke" && a.TargetID == leakedID && a.Interface == "cli")
	}
	if !audited {
		t.Errorf("the revocation is not audited: %+v", entries)
	}
	mustFail(t, call{}, []string{"no enrolment token 999"}, "collector", "token", "revoke", "999", "--data", data)

	// The leaked token, from the environment: refused.
	col := func(token string) []string {
		return []string{"BACKUPD_TOKEN=" + token}
	}
	r = run(t, call{env: col(leaked)}, "collector", "--server", srv.url, "--insecure-http", "--data", t.TempDir(), "--name", "edge")
	if r.code == 0 || !strings.Contains(r.stderr, "revoked") {
		t.Fatalf("a collector with a revoked token:\n%s", r)
	}

	// The good one, from the environment: enrolled; then its token is
	// used and cannot be revoked.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "collector", "--server", srv.url, "--insecure-http", "--data", t.TempDir(), "--name", "edge")
	cmd.Env = cleanEnv(col(good)...)
	out := &testkit.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "collector enrolled") {
		select {
		case err := <-done:
			t.Fatalf("the collector exited (%v) before enrolling:\n%s", err, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector did not enrol within 20 s:\n%s", out)
		}
	}
	mustFail(t, call{}, []string{"revoke the collector instead"}, "collector", "token", "revoke", goodID, "--data", data)
	r = mustRun(t, call{}, "collector", "token", "list", "--all", "--data", data)
	if !regexp.MustCompile(`(?m)^` + goodID + ` .* used \S+ by collector \d+ \(edge\)$`).MatchString(r.stdout) {
		t.Errorf("token list --all does not show what the token enrolled:\n%s", r.stdout)
	}
}
