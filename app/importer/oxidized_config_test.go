package importer

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// oxidizedFixture parses testdata/oxidized/<name>.config and its
// <name>.router.db (see the README there: the examples of Oxidized's
// documentation).
func oxidizedFixture(t *testing.T, name string) (*OxidizedConfig, *Parsed) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "oxidized", name+".config"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseOxidizedConfig(raw)
	if err != nil {
		t.Fatalf("%s.config: %v", name, err)
	}
	db, err := os.ReadFile(filepath.Join("testdata", "oxidized", name+".router.db"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.ParseRouterDB(db)
	if err != nil {
		t.Fatalf("%s.router.db: %v", name, err)
	}
	return c, p
}

// login is what the tests compare of an entry.
type login struct{ Name, Host, Platform, Group, Username, Password, Enable, LoginMethod string }

func logins(p *Parsed) []login {
	var out []login
	for _, e := range p.Entries {
		out = append(out, login{e.Name, e.Host, e.Platform, e.Group, e.Username, e.Password, e.Enable, e.LoginMethod})
	}
	return out
}

// Sources.md's CSV example: name:ip:model:username:password with the
// enable password in vars_map; lines without a login (short, empty or
// "nil" fields) take the global username, password and vars.enable.
func TestOxidizedConfigSourcesExample(t *testing.T) {
	c, p := oxidizedFixture(t, "sources-csv")
	if c.File != "/var/lib/oxidized/router.db" || c.Delimiter != ":" || c.GPG {
		t.Errorf("file %q, delimiter %q, gpg %v", c.File, c.Delimiter, c.GPG)
	}
	if want := (Map{"name": 0, "ip": 1, "model": 2, "username": 3, "password": 4, "enable": 5}); !reflect.DeepEqual(c.Map, want) {
		t.Errorf("map %v, want %v", c.Map, want)
	}
	want := []login{
		{"rtr01.local", "192.168.1.1", "cisco_ios", "", "oxidized", "5uP3R53cR3T", "T0p53cR3t", ""},
		{"rtr02.local", "192.168.1.2", "cisco_ios", "", "oxidized", "S3cr3tx", "S3cr3tx", ""},
		{"sw01.local", "192.168.1.3", "hp_procurve", "", "oxidized", "S3cr3tx", "S3cr3tx", ""},
		{"sw02.local", "192.168.1.4", "arista_eos", "", "oxidized", "S3cr3tx", "S3cr3tx", ""},
	}
	if got := logins(p); !reflect.DeepEqual(got, want) {
		t.Errorf("entries:\n got %+v\nwant %+v", got, want)
	}
	if len(p.Skipped) != 0 {
		t.Errorf("skipped %+v", p.Skipped)
	}
}

// Configuration.md's advanced example, whole (Ruby regular expressions,
// symbols, extensions): model_map by name and by regular expression, the
// global model for a line without one, input.default for the login
// method.
func TestOxidizedConfigAdvancedExample(t *testing.T) {
	c, p := oxidizedFixture(t, "advanced")
	if c.File != "~/.config/oxidized/router.db" {
		t.Errorf("file %q", c.File)
	}
	want := []login{
		{"core1.example.com", "core1.example.com", "cisco_ios", "", "oxidized", "S3cr3tx", "S3cr3tx", "ssh"},
		{"edge1.example.com", "edge1.example.com", "juniper_junos", "", "netops", "Edg3pw", "S3cr3tx", "ssh"},
		{"sw1.example.com", "sw1.example.com", "hp_procurve", "", "admin", "Sw1pw", "Sw1en", "ssh"},
		{"fw1.example.com", "fw1.example.com", "juniper_junos", "", "oxidized", "S3cr3tx", "S3cr3tx", "ssh"},
	}
	if got := logins(p); !reflect.DeepEqual(got, want) {
		t.Errorf("entries:\n got %+v\nwant %+v", got, want)
	}
}

// Configuration.md's group examples: a group's login, a group's login
// for one model, a model's login (an empty username written "nil"),
// group_map by name and by regular expression, a regular-expression
// delimiter, the input column and input.default, and a vars_map column
// backupd does not read.
func TestOxidizedConfigGroupsExample(t *testing.T) {
	c, p := oxidizedFixture(t, "groups")
	if c.DelimiterRegexp != `/\s*,\s*/` || p.Delimiter != `/\s*,\s*/` {
		t.Errorf("delimiter %q", c.DelimiterRegexp)
	}
	if !reflect.DeepEqual(c.Ignored, []string{"vars_map.ssh_port=6"}) {
		t.Errorf("ignored %q", c.Ignored)
	}
	want := []login{
		{"mt1", "192.0.2.1", "mikrotik_routeros", "mikrotik", "admin", "blank", "", "telnet"},
		{"ub1", "192.0.2.2", "ubiquiti_edgeos", "ubiquiti", "ubnt", "ubnt", "", "telnet"},
		{"ar1", "192.0.2.3", "arista_eos", "foo", "admin", "password", "", "telnet"},
		{"vy1", "192.0.2.4", "vyos", "bar", "admin", "pass", "", "telnet"},
		{"vy2", "192.0.2.5", "vyos", "foo", "oxidized", "S3cr3tx", "", "telnet"},
		{"jn1", "192.0.2.6", "juniper_junos", "groupA", "admin", "password", "", "telnet"},
		{"ir1", "192.0.2.7", "ruckus_fastiron", "groupS", "admin", "password", "enablepassword", "ssh"},
		{"ap1", "192.0.2.8", "apc_aos", "", "apc", "password", "", "ssh"},
		{"c1", "192.0.2.9", "cisco_ios", "", "", "pass", "en", "telnet"},
		{"ar2", "192.0.2.10", "arista_eos", "", "oxidized", "S3cr3tx", "", "ssh"},
	}
	if got := logins(p); !reflect.DeepEqual(got, want) {
		t.Errorf("entries:\n got %+v\nwant %+v", got, want)
	}
}

// Describe names what is set, at which level, and never a password.
func TestOxidizedConfigDescribeHidesSecrets(t *testing.T) {
	for _, name := range []string{"sources-csv", "advanced", "groups"} {
		c, _ := oxidizedFixture(t, name)
		text := strings.Join(c.Describe(), "\n")
		for _, secret := range []string{"S3cr3tx", "5uP3R53cR3T", "blank", "ubnt\"", "enablepassword", "pass\n"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s: the description shows %q:\n%s", name, secret, text)
			}
		}
		if !strings.Contains(text, "columns: name=0") {
			t.Errorf("%s: no columns in\n%s", name, text)
		}
	}
	c, _ := oxidizedFixture(t, "groups")
	text := strings.Join(c.Describe(), "\n")
	for _, want := range []string{
		`delimiter: regular expression /\s*,\s*/`,
		"columns: name=0,model=1,group=2,ip=3,input=4,enable=5",
		"not read (backupd has no such setting): vars_map.ssh_port=6",
		"lines without their own login take the global username, password",
		"models with their own login: apc_aos (username, password); cisco (username, password); ironware (username, password, enable password); junos (username, password)",
		"groups with their own login: mikrotik (username, password); ubiquiti (username, password)",
		"group bar, models with their own login: vyatta (username, password)",
		`group_map: "alias1" → groupA, "alias2" → groupA, /specialgroup/ → groupS`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("description lacks %q:\n%s", want, text)
		}
	}
}

// Configurations that cannot be imported say why, and so does an
// encrypted router.db.
func TestOxidizedConfigRefusals(t *testing.T) {
	gpg, err := os.ReadFile(filepath.Join("testdata", "oxidized", "gpg.config"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseOxidizedConfig(gpg)
	if err != nil || !c.GPG {
		t.Fatalf("gpg.config: %v, gpg %v", err, c != nil && c.GPG)
	}
	for _, encrypted := range []string{"-----BEGIN PGP MESSAGE-----\n\nhQEMA…\n", "\x85\x01\x0c\x03\x00", "\xc1\xc0\x4c\x03"} {
		if _, err := c.ParseRouterDB([]byte(encrypted)); err == nil || !strings.Contains(err.Error(), "encrypted with GPG") {
			t.Errorf("%q: err = %v", encrypted, err)
		}
	}
	for _, tc := range []struct{ config, want string }{
		{"source:\n  default: sql\n  sql:\n    adapter: sqlite\n", `uses the "sql" source`},
		{"username: x\n", "no source section"},
		{"source:\n  default: csv\n", "no source.csv section"},
		{"source:\n  csv:\n    map:\n      model: 1\n", "no name column"},
		{"source:\n  csv:\n    map:\n      name: first\n", "map.name: the column must be a number"},
		{"source:\n  csv:\n    map:\n      name: 99\n", "map.name: the column must be a number"},
		{"source:\n  csv:\n    delimiter: !ruby/regexp /a*/\n    map:\n      name: 0\n", "not a regular expression backupd can split"},
		{"source:\n  csv:\n    delimiter: !ruby/regexp /(?<x>:/\n    map:\n      name: 0\n", "not a regular expression backupd can split"},
		{"source:\n  csv:\n    map:\n      name: 0\nmodel_map:\n  !ruby/regexp /[/: ios\n", "model_map: /[/ is not a regular expression"},
		{"source: [\n", "not YAML"},
		{"- a\n- b\n", "not a YAML mapping"},
		{"\xff\xfe", "not UTF-8"},
		{strings.Repeat("#", MaxConfigBytes+1), "larger than"},
	} {
		_, err := ParseOxidizedConfig([]byte(tc.config))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: err = %v, want %q", tc.config, err, tc.want)
		}
	}
}

// Literal delimiters written as regular expressions split as strings;
// the others split as regular expressions.
func TestOxidizedConfigDelimiters(t *testing.T) {
	for _, tc := range []struct{ yaml, literal, line string }{
		{`!ruby/regexp /:/`, ":", "r1:ios"},
		{`!ruby/regexp /\t/`, "\t", "r1\tios"},
		{`!ruby/regexp /\|/`, "|", "r1|ios"},
		{`!ruby/regexp /;/`, ";", "r1;ios"},
		{`","`, ",", "r1,ios"},
		{`!ruby/regexp /\s+/`, "", "r1   ios"},
		{`!ruby/regexp /[,;]/i`, "", "r1;ios"},
	} {
		c, err := ParseOxidizedConfig([]byte("source:\n  csv:\n    delimiter: " + tc.yaml + "\n    map:\n      name: 0\n      model: 1\n"))
		if err != nil {
			t.Errorf("%s: %v", tc.yaml, err)
			continue
		}
		if c.Delimiter != tc.literal {
			t.Errorf("%s: literal %q, want %q", tc.yaml, c.Delimiter, tc.literal)
		}
		p, err := c.ParseRouterDB([]byte(tc.line + "\n"))
		if err != nil || len(p.Entries) != 1 || p.Entries[0].Platform != "cisco_ios" {
			t.Errorf("%s: %+v, %v", tc.yaml, p, err)
		}
	}
	// An IPv6 address split by a delimiter that matches ":" is refused,
	// as with --delimiter.
	c, err := ParseOxidizedConfig([]byte("source:\n  csv:\n    delimiter: !ruby/regexp /[:]/\n    map:\n      name: 0\n      ip: 1\n      model: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.ParseRouterDB([]byte("r1:2001:db8::1:ios\n"))
	if err != nil || len(p.Entries) != 0 || len(p.Skipped) != 1 || p.Skipped[0].Code != ReasonIPv6Delimiter {
		t.Errorf("IPv6: %+v, %v", p, err)
	}
}

// FuzzOxidizedConfig: no configuration and router.db make the reader
// panic or hang, and what Describe says does not depend on the passwords
// (it names which are set, never what they are).
func FuzzOxidizedConfig(f *testing.F) {
	for _, name := range []string{"sources-csv", "advanced", "groups", "gpg"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "oxidized", name+".config"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, []byte("r1:192.0.2.1:ios:u:p:e\nr2 , eos , g , 192.0.2.2\n"))
	}
	f.Add([]byte("source:\n  csv:\n    delimiter: !ruby/regexp /[,;]+/i\n    map: {name: 0, model: 1}\npassword: &p hunter2\nmodels: {ios: {password: *p}}\n"), []byte("a;ios\n"))
	f.Fuzz(func(t *testing.T, config, routerDB []byte) {
		c, err := ParseOxidizedConfig(config)
		if err != nil {
			return
		}
		_, _ = c.ParseRouterDB(routerDB)
		before := strings.Join(c.Describe(), "\n")
		other := "other-secret"
		hide := func(l *oxLogin) {
			for _, v := range []**string{&l.password, &l.enable} {
				if *v != nil {
					*v = &other
				}
			}
		}
		hide(&c.global)
		for k, m := range c.models {
			hide(&m)
			c.models[k] = m
		}
		for k, g := range c.groups {
			hide(&g.oxLogin)
			for mk, m := range g.models {
				hide(&m)
				g.models[mk] = m
			}
			c.groups[k] = g
		}
		if after := strings.Join(c.Describe(), "\n"); after != before {
			t.Fatalf("the description depends on the passwords:\n%s\n---\n%s", before, after)
		}
	})
}
