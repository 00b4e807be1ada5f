package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The default column map is the layout Oxidized's documentation gives
// (docs/Configuration.md: name:model:username:password:enable), so a
// router.db written for Oxidized reads the same here as there: the
// fixture of that example read without the configuration gives the
// logins the configuration gives.
func TestDefaultMapIsOxidizeds(t *testing.T) {
	if got := DefaultMap().String(); got != "name=0,model=1,username=2,password=3,enable=4" {
		t.Fatalf("default map %s", got)
	}
	file := "rtr01.local:ios:oxidized:5uP3R53cR3T:T0p53cR3t\nrtr02.local:ios:netops:plain-pw\nrtr03.local:ios\n"
	p, err := ParseOxidized([]byte(file), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []login{
		{"rtr01.local", "rtr01.local", "cisco_ios", "", "oxidized", "5uP3R53cR3T", "T0p53cR3t", ""},
		{"rtr02.local", "rtr02.local", "cisco_ios", "", "netops", "plain-pw", "", ""},
		{"rtr03.local", "rtr03.local", "cisco_ios", "", "", "", "", ""},
	}
	if got := logins(p); !reflect.DeepEqual(got, want) || len(p.Skipped) != 0 {
		t.Fatalf("entries:\n got %+v\nwant %+v\nskipped %+v", got, want, p.Skipped)
	}
	if p.Map.String() != DefaultMap().String() {
		t.Errorf("the parsed file does not say which map read it: %v", p.Map)
	}

	_, withConfig := oxidizedFixture(t, "advanced")
	raw, err := os.ReadFile(filepath.Join("testdata", "oxidized", "advanced.router.db"))
	if err != nil {
		t.Fatal(err)
	}
	without, err := ParseOxidized(raw, ":", nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Entry{}
	for _, e := range withConfig.Entries {
		byName[e.Name] = e
	}
	compared := 0
	for _, e := range without.Entries {
		c := byName[e.Name]
		compared++
		// Without the configuration nothing is inherited: compare what
		// the line itself says.
		if e.Password != "" && (e.Username != c.Username || e.Password != c.Password || e.Enable != "" && e.Enable != c.Enable) {
			t.Errorf("%s: login %q/%q/%q without the configuration, %q/%q/%q with it", e.Name, e.Username, e.Password, e.Enable, c.Username, c.Password, c.Enable)
		}
	}
	if compared < 2 {
		t.Errorf("only %d lines of the example compared", compared)
	}
}

// A line whose username, group or model column holds what another
// column would is refused, with what it looks like and never the value.
func TestShiftedColumns(t *testing.T) {
	legacy := LegacyMap()
	for _, tc := range []struct {
		line  string
		m     Map
		field string // "" when the line is a device
		kind  string
	}{
		{"r1:ios:10.0.0.1:admin:pw", nil, "username", LooksIP},
		{"r1:ios:[2001:db8::1]:admin:pw", nil, "", ""}, // split by ":" first: an IPv6 delimiter problem
		{"r1:ios:$1$abcd$efghijklmnop:x", nil, "username", LooksHash},
		{"r1:ios:$9$Ab3fGh.kL:x", nil, "username", LooksHash},
		{"r1:ios:0822455D0A16:x", nil, "username", LooksHash},
		{"r1:ios:5f4dcc3b5aa765d61d8327deb882cf99:x", nil, "username", LooksHash},
		{"r1:ios:{SSHA}abcdefghijkl:x", nil, "username", LooksHash},
		{"r1:ios:p@ss!word:x", nil, "username", LooksSecret},
		{"r1:ios:5uP3R53cR3T:T0p53cR3t", nil, "username", LooksSecret},
		{"r1:ios:S3cr3tx", nil, "username", LooksSecret},
		{"r1:juniper:junos:admin:pw", nil, "username", LooksPlatform},
		{"r1:192.0.2.1:ios:admin:pw", nil, "model", LooksIP},
		// Oxidized's documented layout read with backupd's earlier
		// default: the password would have become the username.
		{"rtr01.local:ios:oxidized:5uP3R53cR3T:T0p53cR3t", legacy, "username", LooksSecret},
		{"r1:ios:192.0.2.1:admin:pw", legacy, "group", LooksIP},
		{"r1:ios:$6$saltsalt$hashhashhash:admin:pw", legacy, "group", LooksHash},
		// Usernames as they are.
		{"r1:ios:cisco:cisco", nil, "", ""},
		{"r1:netscreen:netscreen:netscreen", nil, "", ""},
		{"r1:ios:admin", nil, "", ""},
		{`r1:ios:CORP\jdoe:pw`, nil, "", ""},
		{"r1:ios:john.doe@example.com:pw", nil, "", ""},
		{"r1:ios:svc-backup_2:pw", nil, "", ""},
		{"r1:ios:NetOps01:pw", nil, "", ""},
		{"r1:ios:r2d2:pw", nil, "", ""},
		{"r1:ios:100234:pw", nil, "", ""},
		{"r1:ios:dc1/core:admin:pw", legacy, "", ""},
		{"r1:ios:juniper:admin:pw", legacy, "", ""}, // a group named after a vendor
		{"r1:ios:nil:nil", nil, "", ""},
	} {
		t.Run(tc.line, func(t *testing.T) {
			p, err := ParseOxidized([]byte(tc.line+"\n"), ":", tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if tc.field == "" {
				if strings.Contains(tc.line, "[") {
					if len(p.Skipped) != 1 || p.Skipped[0].Code != ReasonIPv6Delimiter {
						t.Errorf("skipped %+v", p.Skipped)
					}
					return
				}
				if len(p.Entries) != 1 {
					t.Fatalf("refused: %+v", p.Skipped)
				}
				return
			}
			if len(p.Entries) != 0 || len(p.Skipped) != 1 {
				t.Fatalf("entries %+v, skipped %+v", p.Entries, p.Skipped)
			}
			s := p.Skipped[0]
			m := tc.m
			if m == nil {
				m = DefaultMap()
			}
			if s.Code != ReasonShifted || !reflect.DeepEqual(s.Args, []any{tc.field, m[tc.field], tc.kind}) || s.Name != "r1" && s.Name != "rtr01.local" {
				t.Fatalf("skip %+v, want %s column %d %s", s, tc.field, m[tc.field], tc.kind)
			}
			value := strings.Split(tc.line, ":")[m[tc.field]]
			if strings.Contains(s.Reason(), value) {
				t.Errorf("the reason shows the value %q: %s", value, s.Reason())
			}
			if !strings.Contains(s.Reason(), fmt.Sprintf("the %s column (%d) holds %s", tc.field, m[tc.field], lookPhrases[tc.kind])) {
				t.Errorf("reason %q", s.Reason())
			}
		})
	}
}

// A map that reads a password column as a field that is shown is
// refused; the password and the enable password may share a column.
func TestMapSecretColumns(t *testing.T) {
	for _, bad := range []string{"name=0,model=1,password=0", "name=0,model=1,group=2,enable=2", "name=0,model=1,ip=3,password=3"} {
		if _, err := ParseMap(bad); err == nil || !strings.Contains(err.Error(), "a password column cannot be another field too") {
			t.Errorf("ParseMap(%q) = %v", bad, err)
		}
	}
	if _, err := ParseMap("name=0,model=1,username=2,password=3,enable=3"); err != nil {
		t.Errorf("password and enable in one column: %v", err)
	}
	_, err := ParseOxidizedConfig([]byte("source:\n  csv:\n    map:\n      name: 0\n      model: 1\n      username: 2\n    vars_map:\n      enable: 2\n"))
	if err == nil || !strings.Contains(err.Error(), "enable and username both read column 2") {
		t.Errorf("configuration with enable in the username column: %v", err)
	}
}

func TestPrintable(t *testing.T) {
	long := strings.Repeat("é", 300)
	for in, want := range map[string]string{
		"core-1":                 "core-1",
		"a\x00b":                 `a\x00b`,
		"\x1b[31mred":            `\x1b[31mred`,
		"tab\there\r\n":          `tab\there\r\n`,
		"del\x7f":                `del\x7f`,
		"evil\u202etxt.exe":      `evil\u202etxt.exe`,
		"c1\u0085":               `c1\u0085`,
		"bad\xff\xfeutf8":        `bad\xff\xfeutf8`,
		long:                     strings.Repeat("é", MaxShown) + "…",
		"中文名称":                   "中文名称",
		strings.Repeat("x", 128): strings.Repeat("x", 128),
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// Skip messages name the line and the fields that are not secret: a
// line split by another delimiter, one too long, one with control bytes
// never echo a password, and no message is longer than a few hundred
// bytes.
func TestSkipMessagesShowNoSecrets(t *testing.T) {
	secrets := []string{"Pw-Secret-1", "Secret-2", "En-Secret-3", "Secret-4", "Secret-5", "Secret-6"}
	huge := strings.Repeat("A", 10<<20)
	file := strings.Join([]string{
		"r1,192.0.2.1,ios,admin,Pw-Secret-1",    // 1: comma file read with ":"
		"r2,192.0.2.2,ios,admin,pa:ss-Secret-2", // 2: still split once by ":"
		"r3\tios\tadmin\tEn-Secret-3",           // 3: tabs
		"r4;ios;admin;Secret-4:Secret-4",        // 4: semicolons
		"r\x00x:ios:admin:Secret-5",             // 5: a NUL in the name
		huge + "Secret-6",                       // 6: 10 MB, no delimiter
		huge + ":ios:admin:Secret-6",            // 7: 10 MB name
		"\x1b[2J:nosuch\x07:admin:Secret-6",     // 8: terminal escapes
	}, "\n")
	p, err := ParseOxidized([]byte(file), ":", nil)
	if err != nil {
		t.Fatal(err)
	}
	codes := skipCodes(p)
	want := map[int]string{1: ReasonFieldCount, 2: ReasonOtherDelimiter, 3: ReasonFieldCount, 4: ReasonOtherDelimiter,
		5: ReasonControl, 6: ReasonFieldCount, 8: ReasonControl}
	if !reflect.DeepEqual(codes, want) {
		t.Errorf("skipped %v, want %v", codes, want)
	}
	// Line 7 is a device as far as the file goes; the plan refuses its
	// name (tested with the store in plan_test.go). Here: its name is
	// kept whole for the plan, and shown cut.
	if len(p.Entries) != 1 || len(p.Entries[0].Name) != len(huge) {
		t.Fatalf("entries %d", len(p.Entries))
	}
	p.Skipped = append(p.Skipped, newSkip(7, p.Entries[0].Name, ReasonInvalid, "name: must be at most 128 characters"))
	for _, s := range p.Skipped {
		msg := fmt.Sprintf("line %d: skip %s: %s", s.Line, s.Name, s.Reason())
		for _, sec := range secrets {
			if strings.Contains(msg, sec) {
				t.Errorf("line %d shows %q: %s", s.Line, sec, msg)
			}
		}
		if len(msg) > 600 || strings.ContainsAny(msg, "\x00\x1b\x07") {
			t.Errorf("line %d: %d bytes: %q", s.Line, len(msg), msg[:min(len(msg), 300)])
		}
		switch s.Code {
		case ReasonFieldCount, ReasonOtherDelimiter:
			if s.Name != "" {
				t.Errorf("line %d: a line that does not split shows a name %q", s.Line, s.Name)
			}
		}
	}
	if r := p.Skipped[0].Reason(); !strings.Contains(r, "1 fields, at least 2 expected (the line, 34 bytes, is not shown; is the delimiter right?)") {
		t.Errorf("field count reason %q", r)
	}
	if r := p.Skipped[1].Reason(); !strings.Contains(r, `the name column holds ","`) {
		t.Errorf("other delimiter reason %q", r)
	}
	if s := p.Skipped[4]; s.Name != `r\x00x` || !strings.Contains(s.Reason(), "the name column holds a control character") {
		t.Errorf("NUL: %q %q", s.Name, s.Reason())
	}
}

// An IPv6 address in a RANCID router.db that puts ":" between its
// fields says why it cannot be read, not `state is ""`; in RANCID 3's
// format it is a device.
func TestRancidColonIPv6(t *testing.T) {
	p, err := ParseRancid([]byte("r1:cisco:up\n2001:db8::1:cisco:up\nfe80::1:juniper:up:core\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 1 || !reflect.DeepEqual(skipCodes(p), map[int]string{2: ReasonRancidColon, 3: ReasonRancidColon}) {
		t.Fatalf("entries %+v, skipped %+v", p.Entries, p.Skipped)
	}
	r := p.Skipped[0].Reason()
	for _, want := range []string{"IPv6", `puts ":" between its fields`, `RANCID 3 changed the delimiter to ";"`, "name;type;state"} {
		if !strings.Contains(r, want) {
			t.Errorf("reason lacks %q: %s", want, r)
		}
	}
	// The first device line decides: an IPv6 line first is explained too.
	if p, err = ParseRancid([]byte("2001:db8::1:cisco:up\n"), nil); err != nil || skipCodes(p)[1] != ReasonRancidColon {
		t.Errorf("IPv6 first: %+v %v", p, err)
	}
	p, err = ParseRancid([]byte("2001:db8::1;cisco;up\nr1;cisco;up\n"), nil)
	if err != nil || len(p.Entries) != 2 || p.Entries[0].Host != "2001:db8::1" {
		t.Errorf("RANCID 3 with IPv6: %+v %v", p, err)
	}
	// Lines too short show no text of theirs.
	p, _ = ParseRancid([]byte("r1;cisco;up\nr2 cisco up secret-ish\n"), nil)
	if s := p.Skipped; len(s) != 1 || s[0].Name != "" || !strings.Contains(s[0].Reason(), "1 fields, at least 3 expected (the line, 22 bytes") {
		t.Errorf("short line: %+v", s)
	}
}
