package cli_test

import (
	"strings"
	"testing"
)

// TestInventoryFlagsNotFromEnvironment: the inventory commands' own
// flags come from the command line only. BACKUPD_CONFIG, BACKUPD_KIND,
// BACKUPD_INTERVAL and BACKUPD_JSON left in the shell change nothing,
// and neither does BACKUPD_NAME for config's --name; the global
// BACKUPD_DATA still applies.
func TestInventoryFlagsNotFromEnvironment(t *testing.T) {
	_, url := newNetBoxDevices(t)
	data := storeDir(t)
	cfg := `{"netbox": {"url": "` + url + `"}}`
	env := call{stdin: inventoryToken, env: []string{"BACKUPD_CONFIG=/nonexistent", "BACKUPD_CONFIG_JSON={}", "BACKUPD_OXIDIZED=/nonexistent",
		"BACKUPD_INTERVAL=5m", "BACKUPD_KIND=http", "BACKUPD_DISABLED=true", "BACKUPD_JSON=true"}}
	r := mustRun(t, env, "inventory", "source", "add", "nb", "--data", data, "--kind", "netbox", "--config-json", cfg, "--token-stdin")
	if !strings.Contains(r.stdout, `added inventory source "nb" (netbox, every 1h, enabled, token set)`) {
		t.Errorf("add took flags from the environment:\n%s", r)
	}
	// Without --kind, BACKUPD_KIND does not fill it.
	mustFail(t, call{stdin: inventoryToken, env: []string{"BACKUPD_KIND=netbox"}}, []string{`--kind "": netbox or http`},
		"inventory", "source", "add", "nb2", "--data", data, "--config-json", cfg, "--token-stdin")
	// Edit: BACKUPD_CONFIG names no file it reads.
	r = mustRun(t, env, "inventory", "source", "edit", "nb", "--data", data, "--enable")
	if !strings.Contains(r.stdout, "changed (enabled)") {
		t.Errorf("edit took flags from the environment:\n%s", r)
	}
	// The global BACKUPD_DATA still applies; BACKUPD_JSON does not.
	// (On PostgreSQL, BACKUPD_DB names the store: storeEnv reads --data
	// only from the command line.)
	listEnv := append([]string{"BACKUPD_DATA=" + data, "BACKUPD_JSON=true"}, storeEnv([]string{"--data", data})...)
	r = mustRun(t, call{env: listEnv}, "inventory", "source", "list")
	if !strings.HasPrefix(r.stdout, "NAME") || !strings.Contains(r.stdout, "nb ") {
		t.Errorf("list with BACKUPD_DATA and BACKUPD_JSON set:\n%s", r)
	}
	r = mustRun(t, call{env: []string{"BACKUPD_JSON=true", "BACKUPD_DRY_RUN=false"}}, "inventory", "sync", "--data", data, "--dry-run", "--source", "nb")
	if strings.HasPrefix(strings.TrimSpace(r.stdout), "[") {
		t.Errorf("sync printed JSON for BACKUPD_JSON:\n%s", r)
	}
	// config's --name (persistent on config): BACKUPD_NAME, as key
	// create reads it, does not turn it on, so 1 is a name or an ID.
	mustFail(t, call{env: []string{"BACKUPD_NAME=true"}}, []string{`no device with the name or ID "1"`}, "config", "show", "1", "--data", data)
}
