package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/devsim"
	"backupd/internal/dbtest"
)

const acmeDefinition = `{
  "schema": "backupd.platform/v1",
  "id": "custom_acme_os",
  "name": "Acme OS",
  "vendor": "Acme",
  "prompt": "^[\\w.-]{1,60}[>#]$",
  "pager": "(?i)--\\s?more\\s?--$",
  "paging_off": ["terminal length 0"],
  "enable": {"command": "enable", "privileged": "#$", "failed": "(?i)denied|bad secret"},
  "default_commands": ["show running-config"],
  "noise": ["^! Last configuration change at ", "^ntp clock-period \\d+$"]
}
`

// A custom platform imported from the command line is known to every
// process that opens the data directory afterwards: `backup run` backs a
// device of it up, `serve` accepts it in the API.
func TestPlatformImportUsedByBackupRunAndServe(t *testing.T) {
	data := storeDir(t)
	store, ids := simFleet(t, data, 1, devsim.Options{})
	if _, err := dbtest.Poke(t, store).ExecContext(context.Background(), `UPDATE devices SET platform = 'custom_acme_os' WHERE id = ?`, ids[0]); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "acme.json")
	if err := os.WriteFile(file, []byte(acmeDefinition), 0o600); err != nil {
		t.Fatal(err)
	}

	// Before the import the device's platform is unknown.
	r := run(t, call{}, "backup", "run", "--all", "--data", data)
	if r.code == 0 || !strings.Contains(r.stdout, "unknown platform") {
		t.Fatalf("backup before the import:\n%s", r)
	}
	r = mustRun(t, call{}, "platform", "import", file, "--data", data)
	if !strings.Contains(r.stdout, "platform custom_acme_os (Acme OS) imported") {
		t.Fatalf("import:\n%s", r)
	}
	mustFail(t, call{}, []string{"a platform with ID custom_acme_os exists"}, "platform", "import", file, "--data", data)
	mustRun(t, call{stdin: strings.Replace(acmeDefinition, `"Acme OS"`, `"Acme OS 2"`, 1)}, "platform", "import", "-", "--replace", "--data", data)
	mustFail(t, call{stdin: `{"schema":"backupd.platform/v1","id":"custom_x","name":"X","prompt":".*","default_commands":["show"]}`},
		[]string{"prompt: matches an empty line"}, "platform", "import", "-", "--data", data)

	r = mustRun(t, call{}, "backup", "run", "--all", "--data", data)
	if !strings.HasPrefix(r.stdout, "ok ") {
		t.Fatalf("backup of the custom platform's device:\n%s", r)
	}
	r = mustRun(t, call{}, "platform", "list", "--data", data)
	if !strings.Contains(r.stdout, "custom_acme_os") || !strings.Contains(r.stdout, "Acme OS 2") || !strings.Contains(r.stdout, "cisco_ios") {
		t.Fatalf("list:\n%s", r)
	}
	r = mustRun(t, call{}, "platform", "export", "custom_acme_os", "--data", data)
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["id"] != "custom_acme_os" {
		t.Fatalf("export: %v\n%s", err, r)
	}
	r = mustRun(t, call{}, "platform", "export", "cisco_ios", "--data", data)
	if !strings.Contains(r.stdout, `"id": "custom_cisco_ios"`) {
		t.Fatalf("built-in export:\n%s", r)
	}
	store.Close()

	key, _ := createKey(t, data, "--name", "platforms")
	srv := startServe(t, data)
	resp := srv.do(t, http.MethodPost, "/api/v1/devices", key, `{"name":"acme-api","host":"192.0.2.5","platform":"custom_acme_os"}`)
	if resp.status != http.StatusCreated {
		t.Fatalf("serve does not know the custom platform: %d %s", resp.status, resp.body)
	}
}

// backupd platform list shows each platform's aliases (the names the
// import messages point to), and --aliases prints them for scripts: one
// "alias<TAB>platform" line each, every alias of the registry, sorted.
func TestPlatformListAliases(t *testing.T) {
	data := storeDir(t)
	mustRun(t, call{stdin: acmeDefinition}, "platform", "import", "-", "--data", data)

	r := mustRun(t, call{}, "platform", "list", "--data", data)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if header := strings.Fields(lines[0]); !slices.Equal(header, []string{"ID", "KIND", "VENDOR", "NAME", "TRANSPORTS", "ALIASES"}) {
		t.Fatalf("header %q", lines[0])
	}
	rows := map[string]string{}
	for _, l := range lines[1:] {
		id, _, _ := strings.Cut(l, " ")
		rows[id] = l
	}
	for _, p := range driver.Builtins() {
		if !strings.HasSuffix(rows[p.ID], "  "+strings.Join(p.Aliases, ",")) {
			t.Errorf("row of %s does not end with its aliases %v: %q", p.ID, p.Aliases, rows[p.ID])
		}
	}
	if f := strings.Fields(rows["custom_acme_os"]); len(f) < 2 || f[1] != "custom" || !strings.HasSuffix(rows["custom_acme_os"], "ssh,telnet  -") {
		t.Errorf("custom platform row %q", rows["custom_acme_os"])
	}

	var want []string
	for _, p := range driver.Builtins() {
		for _, a := range p.Aliases {
			want = append(want, a+"\t"+p.ID)
		}
	}
	slices.Sort(want)
	r = mustRun(t, call{}, "platform", "list", "--aliases", "--data", data)
	if got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"); !slices.Equal(got, want) {
		t.Errorf("--aliases printed\n%s\nwant\n%s", r.stdout, strings.Join(want, "\n"))
	}
	for _, l := range []string{"ios-xr7\tcisco_xr", "junos-evo\tjuniper_junos", "edgemax\tubiquiti_edgeswitch"} {
		if !slices.Contains(want, l) {
			t.Errorf("no line %q", l)
		}
	}
}
