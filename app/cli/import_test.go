package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backupd/app/secret"
	"backupd/db"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func deviceNames(t *testing.T, data string) []string {
	t.Helper()
	list, err := openStore(t, data).DevicesAfter(context.Background(), db.Scope{All: true}, db.DeviceFilter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range list {
		names = append(names, d.Name+"="+d.Platform)
	}
	return names
}

// From an Oxidized router.db to devices: a dry run changes nothing and
// says what would happen, line by line; the import applies it and is
// audited; a second import changes nothing.
func TestImportOxidizedCLI(t *testing.T) {
	data := storeDir(t)
	// A file in backupd's earlier default layout, read with it as
	// --map: an explicit map keeps its meaning.
	routerDB := writeFile(t, "router.db", "# Oxidized\r\ncore-1:ios:dc1:admin:s3cret\r\ncore-2:nxos:dc1:admin:s3cret\r\n\r\nodd:nosuchmodel\r\ncore-1:eos\r\n")
	const legacy = "name=0,model=1,group=2,username=3,password=4"
	r := mustRun(t, call{}, "import", "oxidized", "--data", data, "--map", legacy, "--dry-run", routerDB)
	for _, want := range []string{
		`line 2: would create core-1: cisco_ios at core-1, group "dc1", credential "Imported oxidized 1"`,
		`line 5: skip odd: unknown model "nosuchmodel"`,
		`line 6: skip core-1: duplicate name "core-1": first on line 2`,
		"summary: 2 device(s) would be created, 0 updated, 0 unchanged, 2 line(s) skipped",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "s3cret") {
		t.Error("the output shows a password")
	}
	if got := deviceNames(t, data); len(got) != 0 {
		t.Fatalf("the dry run created %v", got)
	}
	r = mustRun(t, call{}, "import", "oxidized", "--data", data, "--map", legacy, routerDB)
	if !strings.Contains(r.stdout, "summary: 2 device(s) were created, 0 updated, 0 unchanged, 2 line(s) skipped") {
		t.Errorf("import output:\n%s", r)
	}
	if got := fmt.Sprint(deviceNames(t, data)); got != "[core-1=cisco_ios core-2=cisco_nxos]" {
		t.Errorf("devices %s", got)
	}
	r = mustRun(t, call{}, "import", "oxidized", "--data", data, "--map", legacy, routerDB)
	if !strings.Contains(r.stdout, "summary: 0 device(s) were created, 0 updated, 2 unchanged, 2 line(s) skipped") {
		t.Errorf("second import output:\n%s", r)
	}
	entries, _, err := openStore(t, data).ListAudit(context.Background(), 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	var imports []string
	for _, e := range entries {
		if e.Action == "device.import" {
			imports = append(imports, fmt.Sprint(e.Interface, " ", e.Details["format"], " ", e.Details["created"], " ", e.Details["file"]))
			if strings.Contains(fmt.Sprint(e.Details), "s3cret") {
				t.Errorf("secret in audit details: %v", e.Details)
			}
		}
	}
	if fmt.Sprint(imports) != "[cli oxidized 2 router.db]" {
		t.Errorf("audit entries of imports: %v (the unchanged re-run writes none)", imports)
	}

	// A custom layout, and the files that cannot be imported.
	csvish := writeFile(t, "router.csv", "edge-9,2001:db8::9,junos\n")
	mustRun(t, call{}, "import", "oxidized", "--data", data, "--delimiter", ",", "--map", "name=0,ip=1,model=2", csvish)
	mustFail(t, call{}, []string{"cannot read", "no such file"}, "import", "oxidized", "--data", data, filepath.Join(t.TempDir(), "missing.db"))
	r = mustFail(t, call{}, []string{"nothing to import"}, "import", "oxidized", "--data", data, writeFile(t, "v6.db", "r1:2001:db8::1:ios\n"))
	if !strings.Contains(r.stderr, "line 1: skip") || !strings.Contains(r.stderr, "IPv6") || strings.Contains(r.stderr, "goroutine") {
		t.Errorf("IPv6 with ':' delimiter:\n%s", r)
	}
	mustFail(t, call{}, []string{"column map", "colour"}, "import", "oxidized", "--data", data, "--map", "name=0,model=1,colour=2", routerDB)
}

func TestImportRancidCLI(t *testing.T) {
	data := storeDir(t)
	routerDB := writeFile(t, "router.db", "r1;cisco;up;core\nr2;juniper;down\nr3;foundry;up\n")
	rc := writeFile(t, "cloginrc", "add user r* netops\nadd password r1 {a b} en\nadd password * pw\n")
	r := mustRun(t, call{}, "import", "rancid", "--data", data, "--cloginrc", rc, "--group", "networking", routerDB)
	for _, want := range []string{
		`line 2: skip r2: state is "down": only devices that are "up" are imported`,
		"create 1 group(s): networking",
		"create 2 credential(s): Imported rancid 1, Imported rancid 2",
		"summary: 2 device(s) were created, 0 updated, 0 unchanged, 1 line(s) skipped",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r)
		}
	}
	if got := fmt.Sprint(deviceNames(t, data)); got != "[r1=cisco_ios r3=ruckus_fastiron]" {
		t.Errorf("devices %s", got)
	}
}

// export csv writes what import csv and the devices page read; importing
// it again changes nothing, an edited row updates its device.
func TestExportImportCSVCLI(t *testing.T) {
	data := storeDir(t)
	mustRun(t, call{}, "import", "oxidized", "--data", data, "--map", "name=0,model=1,group=2,username=3,password=4",
		writeFile(t, "router.db", "core-1:ios:dc1:admin:s3cret\nedge-1:junos\n"))
	r := mustRun(t, call{}, "export", "csv", "--data", data)
	want := "\xef\xbb\xbfname,host,port,platform,login_method,group,credential,template,encoding,enabled,remarks,zone\r\n" +
		"core-1,core-1,22,cisco_ios,ssh,dc1,Imported oxidized 1,,utf-8,true,,local\r\n" +
		"edge-1,edge-1,22,juniper_junos,ssh,,,,utf-8,true,,local\r\n"
	if r.stdout != want || !strings.Contains(r.stderr, "exported 2 device(s)") {
		t.Fatalf("export:\n%q\nwant\n%q\n%s", r.stdout, want, r.stderr)
	}
	exported := writeFile(t, "devices.csv", r.stdout)
	r = mustRun(t, call{}, "import", "csv", "--data", data, exported)
	if !strings.Contains(r.stdout, "summary: 0 device(s) were created, 0 updated, 2 unchanged, 0 line(s) skipped") {
		t.Errorf("re-import:\n%s", r)
	}
	edited := writeFile(t, "edited.csv", strings.Replace(want, "edge-1,edge-1,22,", "edge-1,192.0.2.9,830,", 1))
	r = mustRun(t, call{}, "import", "csv", "--data", data, "--dry-run", edited)
	if !strings.Contains(r.stdout, "line 3: would update edge-1: host, port") {
		t.Errorf("edited dry run:\n%s", r)
	}
	// Elsewhere, the credential does not exist: that row is skipped, the
	// other imported.
	other := t.TempDir()
	r = mustRun(t, call{}, "import", "csv", "--data", other, exported)
	if !strings.Contains(r.stdout, `line 2: skip core-1: no credential named "Imported oxidized 1"`) || !strings.Contains(r.stdout, "1 device(s) were created") {
		t.Errorf("import elsewhere:\n%s", r)
	}
	mustFail(t, call{}, []string{"unknown column"}, "import", "csv", "--data", other, writeFile(t, "bad.csv", "name,host,platfrom\n"))
}

// Zones on the command line: export csv names each device's zone, and
// importing the export elsewhere puts every device back in its zone; an
// unknown zone skips its row, an unknown --zone stops the import with
// nothing written; one address in two zones is two devices; --zone places
// the devices of a router.db.
func TestImportExportZonesCLI(t *testing.T) {
	data := storeDir(t)
	mustRun(t, call{}, "collector", "zone", "create", "--data", data, "Site-A")
	mustRun(t, call{}, "collector", "zone", "create", "--data", data, "site-b")
	file := writeFile(t, "devices.csv", "name,host,platform,zone\n"+
		"a-rtr,10.0.0.1,ios,site-a\n"+
		"b-rtr,10.0.0.1,ios,SITE-B\n"+
		"l-rtr,10.0.0.2,ios,\n")
	r := mustRun(t, call{}, "import", "csv", "--data", data, file)
	if !strings.Contains(r.stdout, "summary: 3 device(s) were created") {
		t.Fatalf("import:\n%s", r)
	}
	r = mustRun(t, call{}, "export", "csv", "--data", data)
	want := "\xef\xbb\xbfname,host,port,platform,login_method,group,credential,template,encoding,enabled,remarks,zone\r\n" +
		"a-rtr,10.0.0.1,22,cisco_ios,ssh,,,,utf-8,true,,Site-A\r\n" +
		"b-rtr,10.0.0.1,22,cisco_ios,ssh,,,,utf-8,true,,site-b\r\n" +
		"l-rtr,10.0.0.2,22,cisco_ios,ssh,,,,utf-8,true,,local\r\n"
	if r.stdout != want {
		t.Fatalf("export:\n%q\nwant\n%q", r.stdout, want)
	}
	exported := writeFile(t, "export.csv", r.stdout)

	// Into another store with the same zones (the local one's device
	// moved away first): the export puts each device back.
	other := storeDir(t)
	mustRun(t, call{}, "collector", "zone", "create", "--data", other, "site-a")
	mustRun(t, call{}, "collector", "zone", "create", "--data", other, "Site-B")
	mustRun(t, call{}, "import", "csv", "--data", other, "--zone", "site-b", writeFile(t, "l.csv", "name,host,platform\nl-rtr,10.0.0.2,ios\n"))
	r = mustRun(t, call{}, "import", "csv", "--data", other, exported)
	if !strings.Contains(r.stdout, "summary: 2 device(s) were created, 1 updated, 0 unchanged, 0 line(s) skipped") {
		t.Fatalf("import of the export:\n%s", r)
	}
	if got := deviceZones(t, other); got != "[l-rtr@local a-rtr@site-a b-rtr@Site-B]" {
		t.Fatalf("zones after the round trip: %s", got)
	}
	r = mustRun(t, call{}, "import", "csv", "--data", other, exported)
	if !strings.Contains(r.stdout, "summary: 0 device(s) were created, 0 updated, 3 unchanged") {
		t.Fatalf("second import of the export:\n%s", r)
	}

	// An unknown zone in a row: that row is skipped and says why, and a
	// file of only such rows writes nothing.
	empty := storeDir(t)
	zoned := writeFile(t, "zoned.csv", strings.Replace(want, "l-rtr,10.0.0.2,22,cisco_ios,ssh,,,,utf-8,true,,local\r\n", "", 1))
	r = mustFail(t, call{}, []string{"nothing to import"}, "import", "csv", "--data", empty, zoned)
	for _, want := range []string{`line 2: skip a-rtr: no zone named "Site-A"`, `line 3: skip b-rtr: no zone named "site-b"`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("import without the zones lacks %q:\n%s", want, r)
		}
	}
	if got := deviceZones(t, empty); got != "[]" {
		t.Fatalf("a failed import wrote %s", got)
	}
	// An unknown --zone: refused before anything is written.
	routerDB := writeFile(t, "router.db", "c-rtr:ios\nd-rtr:junos\n")
	for _, args := range [][]string{
		{"import", "oxidized", "--data", data, "--zone", "nowhere", routerDB},
		{"import", "rancid", "--data", data, "--zone", "nowhere", writeFile(t, "rancid.db", "c-rtr;cisco;up\n")},
		{"import", "csv", "--data", data, "--zone", "nowhere", file},
	} {
		mustFail(t, call{}, []string{`no zone named "nowhere"`}, args...)
	}
	if got := deviceZones(t, data); got != "[a-rtr@Site-A b-rtr@site-b l-rtr@local]" {
		t.Fatalf("devices after refused imports: %s", got)
	}
	// --zone places a router.db's devices.
	r = mustRun(t, call{}, "import", "oxidized", "--data", data, "--zone", "SITE-B", "--dry-run", routerDB)
	if !strings.Contains(r.stdout, `line 1: would create c-rtr: cisco_ios at c-rtr, zone "site-b"`) {
		t.Errorf("dry run with --zone:\n%s", r)
	}
	mustRun(t, call{}, "import", "oxidized", "--data", data, "--zone", "SITE-B", routerDB)
	if got := deviceZones(t, data); got != "[a-rtr@Site-A b-rtr@site-b l-rtr@local c-rtr@site-b d-rtr@site-b]" {
		t.Fatalf("devices after --zone: %s", got)
	}
}

// deviceZones lists name@zone of every device, by id.
func deviceZones(t *testing.T, data string) string {
	t.Helper()
	ctx := context.Background()
	store := openStore(t, data)
	zones, err := store.ListZones(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[int64]string{}
	for _, z := range zones {
		names[z.ID] = z.Name
	}
	list, err := store.DevicesAfter(ctx, db.Scope{All: true}, db.DeviceFilter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, d := range list {
		out = append(out, d.Name+"@"+names[d.ZoneID])
	}
	return fmt.Sprint(out)
}

// An Oxidized user's own files, whole: --oxidized-config reads the CSV
// source of ~/.config/oxidized/config (the router.db it names, its
// delimiter, map and vars_map) and its global and group logins for the
// lines without one. The dry run shows the mapping and which logins are
// set, never a password; the import stores the logins as sealed
// credentials.
func TestImportOxidizedConfigCLI(t *testing.T) {
	data := storeDir(t)
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "oxidized")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	config := writeFileAt(t, filepath.Join(dir, "config"), `---
username: oxidized
password: S3cr3tx
model: junos
vars:
  enable: En4ble-global
input:
  default: ssh, telnet
groups:
  lab:
    username: labuser
    password: L4b-pw
source:
  default: csv
  csv:
    file: ~/.config/oxidized/router.db
    delimiter: !ruby/regexp /:/
    map:
      name: 0
      ip: 1
      model: 2
      username: 3
      password: 4
      group: 6
    vars_map:
      enable: 5
`)
	writeFileAt(t, filepath.Join(dir, "router.db"), "rtr01.local:192.168.1.1:ios:oxidized:5uP3R53cR3T:T0p53cR3t\n"+
		"rtr02.local:192.168.1.2:ios\n"+
		"sw01.local:192.168.1.3:procurve::::lab\n"+
		"fw01.local:192.168.1.4\n")
	env := call{env: []string{"HOME=" + home}}
	secrets := []string{"S3cr3tx", "5uP3R53cR3T", "T0p53cR3t", "En4ble-global", "L4b-pw"}
	r := mustRun(t, env, "import", "oxidized", "--data", data, "--oxidized-config", config, "--dry-run")
	for _, want := range []string{
		"Oxidized configuration " + config + ", router.db " + filepath.Join(dir, "router.db"),
		`delimiter: ":"`,
		"columns: name=0,ip=1,model=2,username=3,password=4,enable=5,group=6",
		"lines without their own login take the global username, password, enable password",
		"lines without a model: junos",
		"groups with their own login: lab (username, password)",
		`line 1: would create rtr01.local: cisco_ios at 192.168.1.1, credential "Imported oxidized 1"`,
		`line 2: would create rtr02.local: cisco_ios at 192.168.1.2, credential "Imported oxidized 2"`,
		`line 3: would create sw01.local: hp_procurve at 192.168.1.3, group "lab", credential "Imported oxidized 3"`,
		`line 4: would create fw01.local: juniper_junos at 192.168.1.4, credential "Imported oxidized 2"`,
		"summary: 4 device(s) would be created, 0 updated, 0 unchanged, 0 line(s) skipped",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r)
		}
	}
	for _, s := range secrets {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("the dry run shows the password %q", s)
		}
	}
	if got := deviceNames(t, data); len(got) != 0 {
		t.Fatalf("the dry run created %v", got)
	}

	r = mustRun(t, env, "import", "oxidized", "--data", data, "--oxidized-config", config)
	if !strings.Contains(r.stdout, "summary: 4 device(s) were created") {
		t.Fatalf("import:\n%s", r)
	}
	for _, s := range secrets {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("the import shows the password %q", s)
		}
	}
	// Each login is one credential, sealed at rest.
	store := openStore(t, data)
	sealer, err := secret.LoadOrCreate(data)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	devices, err := store.DevicesAfter(ctx, db.Scope{All: true}, db.DeviceFilter{}, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]string{
		"rtr01.local": {"oxidized", "5uP3R53cR3T", "T0p53cR3t"},
		"rtr02.local": {"oxidized", "S3cr3tx", "En4ble-global"},
		"sw01.local":  {"labuser", "L4b-pw", "En4ble-global"},
		"fw01.local":  {"oxidized", "S3cr3tx", "En4ble-global"},
	}
	for _, d := range devices {
		if d.CredentialID == nil {
			t.Errorf("%s: no credential", d.Name)
			continue
		}
		if d.LoginMethod != "ssh" {
			t.Errorf("%s: login method %q, want ssh (input.default)", d.Name, d.LoginMethod)
		}
		c, err := store.GetCredential(ctx, *d.CredentialID)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if bytes.Contains(c.Password, []byte(s)) || bytes.Contains(c.EnablePassword, []byte(s)) {
				t.Errorf("%s: credential %s holds %q in clear", d.Name, c.Name, s)
			}
		}
		pw, err1 := sealer.Open(c.Password, secret.PurposePassword)
		en, err2 := sealer.Open(c.EnablePassword, secret.PurposeEnablePassword)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: opening the credential: %v, %v", d.Name, err1, err2)
		}
		if got := [3]string{c.Username, pw, en}; got != want[d.Name] {
			t.Errorf("%s: login %q, want %q", d.Name, got, want[d.Name])
		}
	}
	if len(devices) != 4 {
		t.Errorf("%d devices", len(devices))
	}
	r = mustRun(t, env, "import", "oxidized", "--data", data, "--oxidized-config", config)
	if !strings.Contains(r.stdout, "summary: 0 device(s) were created, 0 updated, 4 unchanged") {
		t.Errorf("second import:\n%s", r)
	}

	// ROUTER_DB given reads that file instead; what cannot be read says why.
	other := writeFile(t, "other.db", "edge9:192.0.2.9:eos\n")
	r = mustRun(t, env, "import", "oxidized", "--data", data, "--oxidized-config", config, "--dry-run", other)
	if !strings.Contains(r.stdout, "router.db "+other) || !strings.Contains(r.stdout, "would create edge9: arista_eos at 192.0.2.9") {
		t.Errorf("explicit router.db:\n%s", r)
	}
	mustFail(t, env, []string{"--map and --delimiter come from the Oxidized configuration"},
		"import", "oxidized", "--data", data, "--oxidized-config", config, "--map", "name=0,model=1")
	mustFail(t, env, []string{"give the router.db", "--oxidized-config"}, "import", "oxidized", "--data", data)
	gpg := writeFile(t, "gpg.config", "source:\n  csv:\n    file: ~/router.db.gpg\n    gpg: true\n    map:\n      name: 0\n      model: 1\n")
	mustFail(t, env, []string{"source.csv.gpg is set", "encrypted with GPG", "gpg --decrypt"},
		"import", "oxidized", "--data", data, "--oxidized-config", gpg)
	mustFail(t, env, []string{`uses the "sql" source`},
		"import", "oxidized", "--data", data, "--oxidized-config", writeFile(t, "sql.config", "source:\n  default: sql\n"))
	mustFail(t, env, []string{"cannot read", filepath.Join(home, "missing.db")}, "import", "oxidized", "--data", data, "--oxidized-config",
		writeFile(t, "missing.config", "source:\n  csv:\n    file: ~/missing.db\n    map:\n      name: 0\n"))
}

func writeFileAt(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
