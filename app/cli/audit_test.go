package cli_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Changes from the command line land in the audit log too, naming the
// operating-system account, never a password or key.
func TestCLIChangesAreAudited(t *testing.T) {
	data := storeDir(t)
	key, id := createKey(t, data, "--name", "ci")
	mustRun(t, call{stdin: "a-long-password-1\n"}, "user", "create", "--data", data, "bob", "--password-stdin")
	mustRun(t, call{stdin: "a-long-password-2\n"}, "user", "passwd", "--data", data, "bob")
	mustRun(t, call{}, "key", "revoke", "--data", data, fmt.Sprint(id))

	entries, _, err := openStore(t, data).ListAudit(context.Background(), 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		actions = append(actions, e.Action)
		if e.Interface != "cli" || !strings.HasPrefix(e.Username, "os:") || e.TargetID == "" {
			t.Errorf("incomplete entry: %+v", e)
		}
		text := fmt.Sprint(e.Details)
		for _, secret := range []string{key, key[len(key)-20:], "a-long-password"} {
			if strings.Contains(text, secret) {
				t.Errorf("secret in audit details: %s", text)
			}
		}
	}
	if got := strings.Join(actions, " "); got != "api_key.create user.create user.password api_key.revoke" {
		t.Errorf("audit actions: %s", got)
	}
}

func TestDBSeedFillsOnlyAnEmptyDirectory(t *testing.T) {
	data := storeDir(t)
	r := mustRun(t, call{}, "db", "seed", "--data", data, "--devices", "30", "--backups-per-device", "5")
	if !strings.Contains(r.stderr, "seeded 30 devices with 150 backup records") {
		t.Errorf("seed output: %s", r.stderr)
	}
	st, err := openStore(t, data).Stats(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.DevicesTotal != 30 || st.BackupsTotal != 150 {
		t.Errorf("seeded %d devices, %d backups", st.DevicesTotal, st.BackupsTotal)
	}
	mustFail(t, call{}, []string{"already holds devices"}, "db", "seed", "--data", data)
	mustFail(t, call{}, []string{"--devices must be"}, "db", "seed", "--data", t.TempDir(), "--devices", "0")
}
