package importer

import (
	"reflect"
	"strings"
	"testing"
)

func skipCodes(p *Parsed) map[int]string {
	out := map[int]string{}
	for _, s := range p.Skipped {
		out[s.Line] = s.Code
	}
	return out
}

func TestParseOxidized(t *testing.T) {
	file := "\xef\xbb\xbf# Oxidized router.db\r\n" +
		"\r\n" +
		"core-1:ios:dc1/core:admin:s3cret\r\n" +
		"  # indented comment\n" +
		"core-2:NXOS:dc1/core:admin:s3cret\n" +
		"edge-1:junos\n" +
		"weird:nosuchmodel:dc1\n" +
		"CORE-1:eos\n" +
		"2001:db8::1:ios\n" +
		":ios\n" +
		"lonely\n"
	p, err := ParseOxidized([]byte(file), "", LegacyMap())
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Line: 3, Name: "core-1", Host: "core-1", Model: "ios", Platform: "cisco_ios", Group: "dc1/core", Username: "admin", Password: "s3cret"},
		{Line: 5, Name: "core-2", Host: "core-2", Model: "NXOS", Platform: "cisco_nxos", Group: "dc1/core", Username: "admin", Password: "s3cret"},
		{Line: 6, Name: "edge-1", Host: "edge-1", Model: "junos", Platform: "juniper_junos"},
	}
	if !reflect.DeepEqual(p.Entries, want) {
		t.Errorf("entries:\n got %+v\nwant %+v", p.Entries, want)
	}
	wantSkips := map[int]string{7: ReasonUnknownModel, 8: ReasonDuplicate, 9: ReasonIPv6Delimiter, 10: ReasonBlankName, 11: ReasonFieldCount}
	if got := skipCodes(p); !reflect.DeepEqual(got, wantSkips) {
		t.Errorf("skipped: got %v, want %v", got, wantSkips)
	}
	for _, s := range p.Skipped {
		if s.Reason() == "" || s.Reason() == s.Code {
			t.Errorf("line %d: no readable reason for %s", s.Line, s.Code)
		}
		if s.Code == ReasonDuplicate && !strings.Contains(s.Reason(), "first on line 3") {
			t.Errorf("duplicate reason does not name the first line: %s", s.Reason())
		}
	}
}

func TestParseOxidizedCustomMapAndIPv6(t *testing.T) {
	m, err := ParseMap("name=0, ip=1, model=2, group=3, enable=4")
	if err != nil {
		t.Fatal(err)
	}
	file := "r1;2001:db8::1;eos;lab;en4ble\nr2;192.0.2.7;routeros\nr3;not a host!;ios\n"
	p, err := ParseOxidized([]byte(file), ";", m)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Line: 1, Name: "r1", Host: "2001:db8::1", Model: "eos", Platform: "arista_eos", Group: "lab", Enable: "en4ble"},
		{Line: 2, Name: "r2", Host: "192.0.2.7", Model: "routeros", Platform: "mikrotik_routeros"},
		// The host is checked when planning, by inventory's rules.
		{Line: 3, Name: "r3", Host: "not a host!", Model: "ios", Platform: "cisco_ios"},
	}
	if !reflect.DeepEqual(p.Entries, want) {
		t.Errorf("entries:\n got %+v\nwant %+v", p.Entries, want)
	}
	// The same hosts with ':' as the delimiter are refused clearly, not
	// split into a name "r1" of model "2001".
	p, err = ParseOxidized([]byte("r1:2001:db8::1:eos\nr2:[2001:db8::2]:ios\n"), ":", Map{"name": 0, "ip": 1, "model": 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 0 || !reflect.DeepEqual(skipCodes(p), map[int]string{1: ReasonIPv6Delimiter, 2: ReasonIPv6Delimiter}) {
		t.Errorf("IPv6 with ':' delimiter: entries %+v skipped %+v", p.Entries, p.Skipped)
	}
}

func TestParseOxidizedTab(t *testing.T) {
	p, err := ParseOxidized([]byte("r1\tios\tlab\n"), `\t`, LegacyMap())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 1 || p.Entries[0].Group != "lab" {
		t.Errorf("tab-separated: %+v %+v", p.Entries, p.Skipped)
	}
}

func TestParseMapErrors(t *testing.T) {
	for _, bad := range []string{"name=0", "model=1", "name=0,model=x", "name=0,model=1,colour=2", "name=0,name=1,model=2", "name=-1,model=1", "name"} {
		if _, err := ParseMap(bad); err == nil {
			t.Errorf("ParseMap(%q) accepted", bad)
		}
	}
}

func TestParseRancid(t *testing.T) {
	rc := `# .cloginrc
add method * ssh
add user core-* {netops}
add user * fallback
add password core-1 {p1} {e1}
add password core-* "p2"
add password * p3 e3
`
	for _, tc := range []struct{ name, file string }{
		{"semicolon", "# RANCID 3\r\ncore-1;cisco;up;rack 4\r\ncore-2;cisco-nx;up\r\nold-sw;hp;down;spare\r\n\r\nfw-1;fortigate;UP\r\nodd;avocent;up\r\ncore-2;cisco;up\r\nshort;cisco\r\n"},
		{"colon", "# RANCID 2\ncore-1:cisco:up:rack 4\ncore-2:cisco-nx:up\nold-sw:hp:down:spare\n\nfw-1:fortigate:UP\nodd:avocent:up\ncore-2:cisco:up\nshort:cisco\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseRancid([]byte(tc.file), []byte(rc))
			if err != nil {
				t.Fatal(err)
			}
			want := []Entry{
				{Line: 2, Name: "core-1", Host: "core-1", Model: "cisco", Platform: "cisco_ios", Username: "netops", Password: "p1", Enable: "e1"},
				{Line: 3, Name: "core-2", Host: "core-2", Model: "cisco-nx", Platform: "cisco_nxos", Username: "netops", Password: "p2"},
				{Line: 6, Name: "fw-1", Host: "fw-1", Model: "fortigate", Platform: "fortinet", Username: "fallback", Password: "p3", Enable: "e3"},
			}
			if !reflect.DeepEqual(p.Entries, want) {
				t.Errorf("entries:\n got %+v\nwant %+v", p.Entries, want)
			}
			wantSkips := map[int]string{4: ReasonNotUp, 7: ReasonUnknownModel, 8: ReasonDuplicate, 9: ReasonFieldCount}
			if got := skipCodes(p); !reflect.DeepEqual(got, wantSkips) {
				t.Errorf("skipped: got %v, want %v", got, wantSkips)
			}
		})
	}
}

func TestRancidTypesResolve(t *testing.T) {
	res := resolver{}
	for _, typ := range []string{"cisco", "cisco-nx", "cisco-xr", "cisco-wlc4", "cisco-wlc5", "cisco-sb", "juniper", "arista",
		"foundry", "hp", "fortigate", "mikrotik", "netscreen", "force10", "dell", "paloalto", "aruba", "extreme", "a10", "f5", "h3c", "huawei", "zte"} {
		if _, ok := res.resolve(typ); !ok {
			t.Errorf("RANCID type %q has no platform", typ)
		}
	}
}

func TestCloginrcGlobs(t *testing.T) {
	rc, err := ParseCloginrc([]byte("add user {rtr[0-9]*.example.net} a\nadd user sw?.lab b\nadd user * c\nadd password [bad * x\nadd password * {pw with space} {en}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"rtr1.example.net": "a", "RTR7.EXAMPLE.NET": "a", "rtrx.example.net": "c", "sw1.lab": "b", "sw12.lab": "c"} {
		if u, _, _ := rc.For(name); u != want {
			t.Errorf("user for %s = %q, want %q", name, u, want)
		}
	}
	if _, pw, en := rc.For("any"); pw != "pw with space" || en != "en" {
		t.Errorf("password = %q, %q; the malformed glob must match nothing and the braces keep the space", pw, en)
	}
}

func TestFileErrors(t *testing.T) {
	if _, err := ParseOxidized([]byte("a:ios\n\xff\xfe\n"), ":", nil); err == nil {
		t.Error("a file that is not UTF-8 was accepted")
	}
	if _, err := ParseRancid([]byte("a;cisco;up\n"), []byte("\xff")); err == nil {
		t.Error("a .cloginrc that is not UTF-8 was accepted")
	}
}

func TestParseCSV(t *testing.T) {
	file := "\xef\xbb\xbfName;Host;Platform;Port;Enabled;Remarks;Login Method\r\n" +
		"sw-1;192.0.2.1;ios;2222;no;'=1+1;telnet\r\n" +
		";;;;;;\r\n" +
		"sw-2;192.0.2.2;cisco_nxos;;;;\r\n" +
		"sw-3;192.0.2.3;ios;99999;;;\r\n" +
		"sw-4;192.0.2.4;ios;;perhaps;;\r\n" +
		"sw-5;192.0.2.5\r\n" +
		"SW-1;192.0.2.6;ios;;;;\r\n"
	p, err := ParseCSV([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 2 {
		t.Fatalf("entries %+v", p.Entries)
	}
	e := p.Entries[0]
	if e.Line != 2 || e.Platform != "cisco_ios" || e.Port != 2222 || e.Enabled == nil || *e.Enabled || e.Remarks == nil || *e.Remarks != "=1+1" || e.LoginMethod != "telnet" {
		t.Errorf("sw-1 = %+v", e)
	}
	want := map[int]string{5: ReasonBadPort, 6: ReasonBadEnabled, 7: ReasonFieldCount, 8: ReasonDuplicate}
	if got := skipCodes(p); !reflect.DeepEqual(got, want) {
		t.Errorf("skipped %v, want %v", got, want)
	}
	for _, bad := range []string{"", "name,host\n", "name,host,platform,colour\n", "name,host,platform,name\n", "name,host,platform\n\"a,b\n"} {
		if _, err := ParseCSV([]byte(bad)); err == nil {
			t.Errorf("ParseCSV(%q) accepted", bad)
		}
	}
}

// Empty fields at the end of a line ("r1:ios:::", a login left to the
// defaults) are not an IPv6 address split by the delimiter: they join
// into "::" only.
func TestParseOxidizedEmptyFieldsAreNotIPv6(t *testing.T) {
	p, err := ParseOxidized([]byte("r1:ios:::\nr2:ios:admin::\nr3:2001:db8::3:ios\n"), ":", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 2 || p.Entries[0].Name != "r1" || p.Entries[1].Username != "admin" {
		t.Errorf("entries %+v", p.Entries)
	}
	if !reflect.DeepEqual(skipCodes(p), map[int]string{3: ReasonIPv6Delimiter}) {
		t.Errorf("skipped %+v", p.Skipped)
	}
}
