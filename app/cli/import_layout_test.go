package cli_test

import (
	"context"
	"strings"
	"testing"

	"backupd/app/secret"
	"backupd/db"
)

// A router.db in the layout Oxidized's documentation gives
// (name:model:username:password:enable) imports as Oxidized reads it:
// the dry run says first which columns it used, the import stores the
// username, the password and the enable password, both sealed. The same
// file read with backupd's earlier default as --map is refused line by
// line where a password would become the username.
func TestImportOxidizedDefaultLayoutCLI(t *testing.T) {
	data := storeDir(t)
	routerDB := writeFile(t, "router.db", "rtr01.local:ios:oxidized:5uP3R53cR3T:T0p53cR3t\nrtr02.local:junos:netops:plain-pw\n")
	secrets := []string{"5uP3R53cR3T", "T0p53cR3t", "plain-pw"}
	r := mustRun(t, call{}, "import", "oxidized", "--data", data, "--dry-run", routerDB)
	lines := strings.Split(r.stdout, "\n")
	if want := routerDB + ` read with delimiter ":" and columns name=0,model=1,username=2,password=3,enable=4`; lines[0] != want {
		t.Errorf("first line %q, want %q:\n%s", lines[0], want, r)
	}
	if !strings.Contains(r.stdout, "layout name:model:group:username:password needs --map name=0,model=1,group=2,username=3,password=4") {
		t.Errorf("the dry run does not say how to read a file of the earlier default:\n%s", r)
	}
	for _, s := range secrets {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("the dry run shows %q", s)
		}
	}
	r = mustRun(t, call{}, "import", "oxidized", "--data", data, routerDB)
	if !strings.HasPrefix(r.stdout, routerDB+" read with delimiter") || !strings.Contains(r.stdout, "summary: 2 device(s) were created") {
		t.Fatalf("import:\n%s", r)
	}
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
	want := map[string][3]string{"rtr01.local": {"oxidized", "5uP3R53cR3T", "T0p53cR3t"}, "rtr02.local": {"netops", "plain-pw", ""}}
	for _, d := range devices {
		if d.CredentialID == nil || d.GroupID != nil {
			t.Fatalf("%s: %+v", d.Name, d)
		}
		c, err := store.GetCredential(ctx, *d.CredentialID)
		if err != nil {
			t.Fatal(err)
		}
		pw, err := sealer.Open(c.Password, secret.PurposePassword)
		if err != nil {
			t.Fatal(err)
		}
		en := ""
		if c.EnablePassword != nil {
			if en, err = sealer.Open(c.EnablePassword, secret.PurposeEnablePassword); err != nil {
				t.Fatal(err)
			}
		}
		if got := [3]string{c.Username, pw, en}; got != want[d.Name] {
			t.Errorf("%s: login %q, want %q", d.Name, got, want[d.Name])
		}
	}

	// The earlier default as --map: rtr01's password would be its
	// username; the line is refused and nothing of it written.
	other := storeDir(t)
	r = mustRun(t, call{}, "import", "oxidized", "--data", other, "--map", "name=0,model=1,group=2,username=3,password=4", "--dry-run", routerDB)
	if !strings.HasPrefix(r.stdout, routerDB+` read with delimiter ":" and columns name=0,model=1,group=2,username=3,password=4`+"\n") ||
		strings.Contains(r.stdout, "Oxidized's documented layout") {
		t.Errorf("mapping of an explicit --map:\n%s", r)
	}
	if !strings.Contains(r.stdout, "line 1: skip rtr01.local: the username column (3) holds what looks like a password, not a username") {
		t.Errorf("shifted line not refused:\n%s", r)
	}
	for _, s := range secrets[:2] {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("the dry run shows %q", s)
		}
	}
}

// Skip messages never show a password: not with a wrong delimiter, not
// for a 10 MB line, and control bytes are escaped (real file, real
// binary, dry run and import).
func TestImportSkipMessagesCLI(t *testing.T) {
	data := storeDir(t)
	secrets := []string{"Pw-Secret-1", "Secret-2", "En-Secret-3", "Secret-4", "Secret-5", "Secret-6"}
	huge := strings.Repeat("A", 10<<20)
	routerDB := writeFile(t, "router.db", strings.Join([]string{
		"ok-1:ios:admin:pw",
		"r1,192.0.2.1,ios,admin,Pw-Secret-1",
		"r2,192.0.2.2,ios,admin,pa:ss-Secret-2",
		"r3\tios\tadmin\tEn-Secret-3",
		"r4;ios;admin;Secret-4:Secret-4",
		"r\x00x:ios:admin:Secret-5",
		huge + "Secret-6",
		huge + ":ios:admin:Secret-6",
		"\x1b[2J\x1b[31mred\x07:ios:admin:Secret-6",
	}, "\n")+"\n")
	for _, args := range [][]string{
		{"import", "oxidized", "--data", data, "--dry-run", routerDB},
		{"import", "oxidized", "--data", data, routerDB},
	} {
		r := mustRun(t, call{}, args...)
		out := r.stdout + r.stderr
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s: the output shows %q", args[len(args)-2], s)
			}
		}
		if len(out) > 4096 || strings.ContainsAny(out, "\x00\x1b\x07") {
			t.Errorf("%d bytes of output, control bytes %v:\n%.2000q", len(out), strings.ContainsAny(out, "\x00\x1b\x07"), out)
		}
		for _, want := range []string{
			"line 2: skip: 1 fields, at least 2 expected (the line, 34 bytes, is not shown; is the delimiter right?)",
			`line 3: skip: the name column holds ",": the file seems to use another delimiter than ":"`,
			"line 4: skip: 1 fields, at least 2 expected (the line, 24 bytes, is not shown",
			`line 5: skip: the name column holds ";"`,
			`line 6: skip r\x00x: the name column holds a control character (shown escaped)`,
			"line 7: skip: 1 fields, at least 2 expected (the line, 10485768 bytes, is not shown",
			"line 8: skip " + strings.Repeat("A", 128) + "…: name: must be at most 128 characters",
			`line 9: skip \x1b[2J\x1b[31mred\x07: the name column holds a control character`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%.3000s", want, out)
			}
		}
	}
	if got := deviceNames(t, data); len(got) != 1 || got[0] != "ok-1=cisco_ios" {
		t.Errorf("devices %v", got)
	}
}

// 999.1.1.1 is no host; an IPv6 line in a RANCID file of the format
// before 3.0 says why it cannot be read.
func TestImportHostsCLI(t *testing.T) {
	data := storeDir(t)
	r := mustFail(t, call{}, []string{"nothing to import"}, "import", "oxidized", "--data", data, "--map", "name=0,model=1,ip=2",
		writeFile(t, "router.db", "r1:ios:999.1.1.1\nr2:ios:10.1.1\n"))
	for _, want := range []string{
		`line 1: skip r1: bad host "999.1.1.1": not an IPv4 address (four numbers from 0 to 255, without leading zeros), and a DNS name does not end in a number`,
		`line 2: skip r2: bad host "10.1.1": not an IPv4 address`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("output lacks %q:\n%s", want, r)
		}
	}
	rancid := writeFile(t, "rancid.db", "r1:cisco:up\n2001:db8::1:cisco:up\n")
	r = mustRun(t, call{}, "import", "rancid", "--data", data, "--dry-run", rancid)
	for _, want := range []string{
		rancid + ` read as name:type:state, the format before RANCID 3 (":" between fields; it cannot hold IPv6 addresses)`,
		`line 2: skip: the line holds an IPv6 address, but this router.db puts ":" between its fields (the format before RANCID 3)`,
		`RANCID 3 changed the delimiter to ";" for this reason. Convert the file to name;type;state`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.stdout, `state is ""`) {
		t.Errorf("the IPv6 line is explained by its state:\n%s", r)
	}
	r = mustRun(t, call{}, "import", "rancid", "--data", data, "--dry-run", writeFile(t, "rancid3.db", "2001:db8::1;cisco;up\n"))
	if !strings.Contains(r.stdout, "read as name;type;state, RANCID 3's format") || !strings.Contains(r.stdout, "would create 2001:db8::1: cisco_ios at 2001:db8::1") {
		t.Errorf("RANCID 3 with IPv6:\n%s", r)
	}
}
