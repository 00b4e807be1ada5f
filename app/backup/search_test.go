package backup_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/db"
)

// searchFleet is a small fleet across two group trees:
//
//	dc (core-1, core-2 in its child dc/row1), branch (edge-1)
//
// core-1's older version had a community line its latest one lost; core-2
// runs the same latest configuration as core-1 (one snapshot, two devices);
// edge-1 has only a failed attempt after its version.
type searchFleet struct {
	store               *db.Store
	dc, row1, branch    db.Group
	core1, core2, edge1 db.Device
	core1Old, core1Old2 db.Backup
	core1Latest         db.Backup
	core2Latest         db.Backup
	edge1Latest         db.Backup
	latestText          string
}

const searchCore = `hostname core
!
snmp-server community Pub1ic RO
ntp server 192.0.2.10
interface Vlan10
 description Users VLAN
 ip address 10.0.10.1 255.255.255.0
interface Vlan20
 description users vlan (guest)
 ip address 10.0.20.1 255.255.255.0
end
`

func newSearchFleet(t *testing.T) searchFleet {
	t.Helper()
	ctx := context.Background()
	s := histStore(t)
	f := searchFleet{store: s}
	var err error
	if f.dc, err = s.CreateGroup(ctx, "dc", nil); err != nil {
		t.Fatal(err)
	}
	if f.row1, err = s.CreateGroup(ctx, "row1", &f.dc.ID); err != nil {
		t.Fatal(err)
	}
	if f.branch, err = s.CreateGroup(ctx, "branch", nil); err != nil {
		t.Fatal(err)
	}
	f.core1 = histDevice(t, s, "core-1", "cisco_ios", &f.dc.ID)
	f.core2 = histDevice(t, s, "core-2", "cisco_ios", &f.row1.ID)
	f.edge1 = histDevice(t, s, "edge-1", "cisco_ios", &f.branch.ID)
	t0 := time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)
	old := strings.Replace(searchCore, "snmp-server community Pub1ic RO\n", "snmp-server community OldSecret RO\nsnmp-server community Pub1ic RO\n", 1)
	f.core1Old = histVersion(t, s, f.core1.ID, t0, old)
	f.core1Old2 = histVersion(t, s, f.core1.ID, t0.Add(time.Hour), old) // same snapshot, newer backup
	f.latestText = searchCore
	f.core1Latest = histVersion(t, s, f.core1.ID, t0.Add(24*time.Hour), f.latestText)
	f.core2Latest = histVersion(t, s, f.core2.ID, t0.Add(24*time.Hour), f.latestText)
	f.edge1Latest = histVersion(t, s, f.edge1.ID, t0, "hostname edge-1\nntp server 192.0.2.10\ninterface Gi0/1\n description uplink to core-1\nend\n")
	histFailure(t, s, f.edge1.ID, t0.Add(24*time.Hour), "timeout")
	return f
}

// hitKeys renders hits as "device backup line: text [ranges]" for comparison.
func hitKeys(f searchFleet, hits []backup.SearchHit) []string {
	names := map[string]string{f.core1Old.ID: "core1Old", f.core1Old2.ID: "core1Old2", f.core1Latest.ID: "core1Latest",
		f.core2Latest.ID: "core2Latest", f.edge1Latest.ID: "edge1Latest"}
	var out []string
	for _, h := range hits {
		b, ok := names[h.BackupID]
		if !ok {
			b = "other:" + h.BackupID
		}
		var marked []string
		for _, m := range h.Matches {
			marked = append(marked, h.Line[m[0]:m[1]])
		}
		out = append(out, fmt.Sprintf("%s %s %d: %s %q", h.DeviceName, b, h.LineNo, h.Line, marked))
	}
	return out
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	f := newSearchFleet(t)
	all := db.Scope{All: true}
	for _, c := range []struct {
		name  string
		scope db.Scope
		opts  backup.SearchOptions
		want  []string
	}{
		{"substring ignores case", all, backup.SearchOptions{Query: "users vlan"}, []string{
			`core-1 core1Latest 6:  description Users VLAN ["Users VLAN"]`,
			`core-1 core1Latest 9:  description users vlan (guest) ["users vlan"]`,
			`core-2 core2Latest 6:  description Users VLAN ["Users VLAN"]`,
			`core-2 core2Latest 9:  description users vlan (guest) ["users vlan"]`,
		}},
		{"case sensitive", all, backup.SearchOptions{Query: "Users VLAN", CaseSensitive: true}, []string{
			`core-1 core1Latest 6:  description Users VLAN ["Users VLAN"]`,
			`core-2 core2Latest 6:  description Users VLAN ["Users VLAN"]`,
		}},
		{"every match of a line", all, backup.SearchOptions{Query: "10.0.10."}, []string{
			`core-1 core1Latest 7:  ip address 10.0.10.1 255.255.255.0 ["10.0.10."]`,
			`core-2 core2Latest 7:  ip address 10.0.10.1 255.255.255.0 ["10.0.10."]`,
		}},
		{"regex", all, backup.SearchOptions{Query: `^ntp server (\d+\.){3}\d+$`, Regex: true}, []string{
			`core-1 core1Latest 4: ntp server 192.0.2.10 ["ntp server 192.0.2.10"]`,
			`core-2 core2Latest 4: ntp server 192.0.2.10 ["ntp server 192.0.2.10"]`,
			`edge-1 edge1Latest 2: ntp server 192.0.2.10 ["ntp server 192.0.2.10"]`,
		}},
		{"regex, several matches", all, backup.SearchOptions{Query: `\d+\.\d+\.20\.\d+|255\.255\.255\.0`, Regex: true, CaseSensitive: true}, []string{
			`core-1 core1Latest 7:  ip address 10.0.10.1 255.255.255.0 ["255.255.255.0"]`,
			`core-1 core1Latest 10:  ip address 10.0.20.1 255.255.255.0 ["10.0.20.1" "255.255.255.0"]`,
			`core-2 core2Latest 7:  ip address 10.0.10.1 255.255.255.0 ["255.255.255.0"]`,
			`core-2 core2Latest 10:  ip address 10.0.20.1 255.255.255.0 ["10.0.20.1" "255.255.255.0"]`,
		}},
		{"regex ignores case unless told", all, backup.SearchOptions{Query: `^HOSTNAME`, Regex: true}, []string{
			`core-1 core1Latest 1: hostname core ["hostname"]`,
			`core-2 core2Latest 1: hostname core ["hostname"]`,
			`edge-1 edge1Latest 1: hostname edge-1 ["hostname"]`,
		}},
		{"regex case sensitive", all, backup.SearchOptions{Query: `^HOSTNAME`, Regex: true, CaseSensitive: true}, nil},
		{"text anchors mean the line", all, backup.SearchOptions{Query: `\Aend\z`, Regex: true}, []string{
			`core-1 core1Latest 11: end ["end"]`,
			`core-2 core2Latest 11: end ["end"]`,
			`edge-1 edge1Latest 5: end ["end"]`,
		}},
		{"no match across lines", all, backup.SearchOptions{Query: `core\s+!`, Regex: true}, nil},
		{"latest only", all, backup.SearchOptions{Query: "OldSecret"}, nil},
		{"all versions", all, backup.SearchOptions{Query: "community", AllVersions: true}, []string{
			`core-1 core1Latest 3: snmp-server community Pub1ic RO ["community"]`,
			// The newest backup using the old snapshot reports it.
			`core-1 core1Old2 3: snmp-server community OldSecret RO ["community"]`,
			`core-1 core1Old2 4: snmp-server community Pub1ic RO ["community"]`,
			`core-2 core2Latest 3: snmp-server community Pub1ic RO ["community"]`,
		}},
		{"scope: a group and its children", db.Scope{GroupIDs: []int64{f.dc.ID}}, backup.SearchOptions{Query: "hostname"}, []string{
			`core-1 core1Latest 1: hostname core ["hostname"]`,
			`core-2 core2Latest 1: hostname core ["hostname"]`,
		}},
		{"scope: a child group", db.Scope{GroupIDs: []int64{f.row1.ID}}, backup.SearchOptions{Query: "core", AllVersions: true}, []string{
			`core-2 core2Latest 1: hostname core ["core"]`,
		}},
		{"scope: another tree", db.Scope{GroupIDs: []int64{f.branch.ID}}, backup.SearchOptions{Query: "core"}, []string{
			`edge-1 edge1Latest 4:  description uplink to core-1 ["core"]`,
		}},
		{"scope: nothing", db.Scope{}, backup.SearchOptions{Query: "hostname"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := backup.Search(ctx, f.store, c.scope, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := hitKeys(f, res.Hits)
			if !slices.Equal(got, c.want) {
				t.Errorf("hits\n got %q\nwant %q", got, c.want)
			}
			if res.Truncated {
				t.Error("Truncated without a limit reached")
			}
			for _, h := range res.Hits {
				if h.DeviceID == f.edge1.ID && len(c.scope.GroupIDs) > 0 && c.scope.GroupIDs[0] != f.branch.ID {
					t.Errorf("device outside the scope found: %+v", h)
				}
			}
		})
	}
}

func TestSearchHitFields(t *testing.T) {
	f := newSearchFleet(t)
	res, err := backup.Search(context.Background(), f.store, db.Scope{All: true}, backup.SearchOptions{Query: "uplink"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 {
		t.Fatalf("hits %+v", res.Hits)
	}
	h := res.Hits[0]
	want := backup.SearchHit{DeviceID: f.edge1.ID, DeviceName: "edge-1", BackupID: f.edge1Latest.ID,
		StartedAt: f.edge1Latest.StartedAt, LineNo: 4, Line: " description uplink to core-1", Matches: [][2]int{{13, 19}}}
	if h.DeviceID != want.DeviceID || h.DeviceName != want.DeviceName || h.BackupID != want.BackupID ||
		!h.StartedAt.Equal(want.StartedAt) || h.LineNo != want.LineNo || h.Line != want.Line || !slices.Equal(h.Matches, want.Matches) {
		t.Errorf("hit %+v\nwant %+v", h, want)
	}
}

func TestSearchInvalid(t *testing.T) {
	f := newSearchFleet(t)
	for _, o := range []backup.SearchOptions{
		{Query: ""},
		{Query: `interface (Vlan`, Regex: true},
		{Query: `a{2000}`, Regex: true},
		{Query: `.*`, Regex: true},
		{Query: `x|`, Regex: true},
		{Query: strings.Repeat("x", backup.MaxSearchQuery+1)},
		{Query: "two\nlines"},
	} {
		_, err := backup.Search(context.Background(), f.store, db.Scope{All: true}, o)
		if !errors.Is(err, backup.ErrInvalidQuery) {
			t.Errorf("%+v: err %v, want ErrInvalidQuery", o, err)
		}
	}
	_, err := backup.Search(context.Background(), f.store, db.Scope{All: true}, backup.SearchOptions{Query: `(Vlan`, Regex: true})
	if err == nil || !strings.Contains(err.Error(), "missing closing )") {
		t.Errorf("a bad regex's error should say why: %v", err)
	}
	// A substring is never a regex.
	res, err := backup.Search(context.Background(), f.store, db.Scope{All: true}, backup.SearchOptions{Query: "(guest)"})
	if err != nil || len(res.Hits) != 2 {
		t.Errorf("substring with regex syntax: %d hits, %v", len(res.Hits), err)
	}
}

func TestSearchLimits(t *testing.T) {
	ctx := context.Background()
	s := histStore(t)
	var big strings.Builder
	for i := range backup.MaxHitsPerVersion + 50 {
		fmt.Fprintf(&big, "interface Gi0/%d\n description port %d\n", i, i)
	}
	t0 := time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)
	for i := range 8 {
		d := histDevice(t, s, fmt.Sprintf("sw-%d", i), "cisco_ios", nil)
		histVersion(t, s, d.ID, t0, fmt.Sprintf("hostname sw-%d\n%s", i, big.String()))
	}
	all := db.Scope{All: true}

	// The limit: exactly the first hits in device order, then Truncated.
	res, err := backup.Search(ctx, s, all, backup.SearchOptions{Query: "hostname", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Hits) != 5 || res.Hits[4].DeviceName != "sw-4" {
		t.Errorf("limit 5: %d hits, truncated %v", len(res.Hits), res.Truncated)
	}
	res, err = backup.Search(ctx, s, all, backup.SearchOptions{Query: "hostname", Limit: 8})
	if err != nil || res.Truncated || len(res.Hits) != 8 {
		t.Errorf("limit 8 of 8: %d hits, truncated %v, %v", len(res.Hits), res.Truncated, err)
	}

	// One version gives at most MaxHitsPerVersion lines.
	res, err = backup.Search(ctx, s, all, backup.SearchOptions{Query: "description", Limit: backup.MaxSearchLimit})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Hits) != 8*backup.MaxHitsPerVersion {
		t.Errorf("per-version cap: %d hits, truncated %v", len(res.Hits), res.Truncated)
	}
	// The default limit.
	res, err = backup.Search(ctx, s, all, backup.SearchOptions{Query: "interface"})
	if err != nil || len(res.Hits) != backup.DefaultSearchLimit || !res.Truncated {
		t.Errorf("default limit: %d hits, truncated %v, %v", len(res.Hits), res.Truncated, err)
	}
	for _, h := range res.Hits {
		if want := fmt.Sprintf("interface Gi0/%d", (h.LineNo-2)/2); h.Line != want {
			t.Fatalf("line %d is %q, want %q", h.LineNo, h.Line, want)
		}
	}

	// A cancelled search stops.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := backup.Search(cancelled, s, all, backup.SearchOptions{Query: "interface"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
}

func TestSearchLongLine(t *testing.T) {
	s := histStore(t)
	d := histDevice(t, s, "fw-1", "fortinet", nil)
	blob := strings.Repeat("Qm9ndXM", 1000)
	histVersion(t, s, d.ID, time.Now(), "config vpn certificate local\n    set private-key \""+blob+"NEEDLE"+blob+"\"\nend\n")
	res, err := backup.Search(context.Background(), s, db.Scope{All: true}, backup.SearchOptions{Query: "needle"})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	h := res.Hits[0]
	if len(h.Line) > backup.MaxHitLine || len(h.Matches) != 1 || h.Line[h.Matches[0][0]:h.Matches[0][1]] != "NEEDLE" || h.LineNo != 2 {
		t.Errorf("long line: %d bytes, matches %v, line %d", len(h.Line), h.Matches, h.LineNo)
	}
}

// BenchmarkSearch searches the latest versions of 300 devices with a
// 100 KB configuration each (30 MB of text); one device in ten has the
// line searched for.
//
//	go test -run XXX -bench Search -benchtime 20x ./app/backup/
func BenchmarkSearch(b *testing.B) {
	s := histStore(b)
	base := syntheticConfig(100_000)
	t0 := time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)
	for i := range 300 {
		d := histDevice(b, s, fmt.Sprintf("sw-%03d", i), "cisco_ios", nil)
		text := strings.Replace(base, "hostname big-1", fmt.Sprintf("hostname sw-%03d", i), 1)
		if i%10 == 0 {
			text += "snmp-server host 192.0.2.99 version 2c monitoring\n"
		}
		histVersion(b, s, d.ID, t0, text)
	}
	for _, o := range []backup.SearchOptions{
		{Query: "192.0.2.99"},
		{Query: "192.0.2.99", CaseSensitive: true},
		{Query: `^snmp-server host \S+ version 2c`, Regex: true},
		{Query: `description access port \d+ to room 7$`, Regex: true},
	} {
		b.Run(fmt.Sprintf("%q regex=%v case=%v", o.Query, o.Regex, o.CaseSensitive), func(b *testing.B) {
			for b.Loop() {
				res, err := backup.Search(context.Background(), s, db.Scope{All: true}, o)
				if err != nil || len(res.Hits) == 0 {
					b.Fatalf("%d hits, %v", len(res.Hits), err)
				}
			}
		})
	}
}

// TestSearchUnicode: case folding beyond ASCII works in substrings and
// expressions, including the folds a byte-wise search would miss (ſ is a
// long s, K the Kelvin sign).
func TestSearchUnicode(t *testing.T) {
	s := histStore(t)
	d := histDevice(t, s, "sw-ü", "huawei_vrp", nil)
	histVersion(t, s, d.ID, time.Now(), "#\n sysname Zürich-1\n#\ninterface GE0/0/1\n description ſnmp uplink ÜBER Kabel\n#\nreturn\n")
	for _, c := range []struct {
		opts backup.SearchOptions
		want string
	}{
		{backup.SearchOptions{Query: "über"}, `5 ["ÜBER"]`},
		{backup.SearchOptions{Query: "zürich"}, `2 ["Zürich"]`},
		{backup.SearchOptions{Query: "snmp uplink", Regex: true}, `5 ["ſnmp uplink"]`},
		{backup.SearchOptions{Query: "kabel", Regex: true}, `5 ["Kabel"]`},
		{backup.SearchOptions{Query: "snmp uplink"}, ``}, // substrings fold ASCII letters only
		{backup.SearchOptions{Query: "Über", CaseSensitive: true}, ``},
	} {
		res, err := backup.Search(context.Background(), s, db.Scope{All: true}, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range res.Hits {
			var marked []string
			for _, m := range h.Matches {
				marked = append(marked, h.Line[m[0]:m[1]])
			}
			got = append(got, fmt.Sprintf("%d %q", h.LineNo, marked))
		}
		if strings.Join(got, "|") != c.want {
			t.Errorf("%+v: %q, want %q", c.opts, got, c.want)
		}
	}
}
