package cli_test

import (
	"strings"
	"testing"
)

// TestInventoryEditTokenFromEnvironment: add takes the token from
// BACKUPD_INVENTORY_TOKEN and says so; edit leaves a variable left in
// the shell unused, says so, and keeps the sealed token (a sync against
// NetBox still passes with it); edit --token-env takes it, and says so.
func TestInventoryEditTokenFromEnvironment(t *testing.T) {
	_, url := newNetBoxDevices(t)
	data := storeDir(t)
	cfg := `{"netbox": {"url": "` + url + `", "page_size": 3}}`
	goodEnv := call{env: []string{"BACKUPD_INVENTORY_TOKEN=" + inventoryToken}}
	wrong := "ffffffffffffffffffffffffffffffffffffffff"
	wrongEnv := call{env: []string{"BACKUPD_INVENTORY_TOKEN=" + wrong}}

	r := mustRun(t, goodEnv, "inventory", "source", "add", "nb", "--data", data, "--kind", "netbox", "--config-json", cfg)
	noToken(t, r)
	if !strings.Contains(r.stderr, "token: taken from BACKUPD_INVENTORY_TOKEN") {
		t.Errorf("add does not say where the token came from:\n%s", r)
	}

	// Another source's token left in the shell: edit keeps this one's.
	r = mustRun(t, wrongEnv, "inventory", "source", "edit", "nb", "--data", data, "--interval", "30m")
	if !strings.Contains(r.stdout, `changed (interval)`) || strings.Contains(r.stdout, "token,") ||
		!strings.Contains(r.stderr, "token: BACKUPD_INVENTORY_TOKEN is set but left unused: edit keeps the source's token unless given --token-env") {
		t.Errorf("edit with the variable set:\n%s", r)
	}
	mustRun(t, call{}, "inventory", "sync", "--data", data, "--dry-run")

	// --token-env takes it: the wrong one now fails the sync (401).
	r = mustRun(t, wrongEnv, "inventory", "source", "edit", "nb", "--data", data, "--token-env")
	if !strings.Contains(r.stdout, "changed (token)") || !strings.Contains(r.stderr, "token: taken from BACKUPD_INVENTORY_TOKEN") ||
		strings.Contains(r.stdout+r.stderr, wrong) {
		t.Errorf("edit --token-env:\n%s", r)
	}
	if r := run(t, call{}, "inventory", "sync", "--data", data, "--dry-run"); r.code != 1 || !strings.Contains(r.stdout, "HTTP 401") {
		t.Errorf("the token taken with --token-env is not the one sent:\n%s", r)
	}
	r = mustRun(t, goodEnv, "inventory", "source", "edit", "nb", "--data", data, "--token-env")
	noToken(t, r)
	mustRun(t, call{}, "inventory", "sync", "--data", data, "--dry-run")

	mustFail(t, call{}, []string{"--token-env: BACKUPD_INVENTORY_TOKEN is not set, or empty"},
		"inventory", "source", "edit", "nb", "--data", data, "--token-env")
	mustFail(t, call{env: goodEnv.env, stdin: inventoryToken}, []string{"give one of --token-stdin, --token-env and --clear-token"},
		"inventory", "source", "edit", "nb", "--data", data, "--token-env", "--token-stdin")
	// A failing edit still says the variable went unused.
	mustFail(t, wrongEnv, []string{"nothing to change", "left unused"}, "inventory", "source", "edit", "nb", "--data", data)
}
