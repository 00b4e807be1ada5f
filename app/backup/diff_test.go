package backup_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/db"
)

// checkDiff verifies a DiffResult against the texts it came from: every
// line number points at its text on its side, the counts add up, and the
// unified diff turns a into b.
func checkDiff(t *testing.T, a, b string, res backup.DiffResult) {
	t.Helper()
	oldLines, newLines := strings.Split(a, "\n"), strings.Split(b, "\n")
	added, removed := 0, 0
	for _, h := range res.Hunks {
		var nOld, nNew int
		for _, l := range h.Lines {
			switch l.Kind {
			case backup.LineContext:
				nOld++
				nNew++
				if l.OldNo < 1 || l.NewNo < 1 || oldLines[l.OldNo-1] != l.Text || newLines[l.NewNo-1] != l.Text {
					t.Fatalf("context line %+v does not match old line %d / new line %d", l, l.OldNo, l.NewNo)
				}
			case backup.LineRemoved:
				nOld++
				removed++
				if l.NewNo != 0 || l.OldNo < 1 || oldLines[l.OldNo-1] != l.Text {
					t.Fatalf("removed line %+v is not old line %d", l, l.OldNo)
				}
			case backup.LineAdded:
				nNew++
				added++
				if l.OldNo != 0 || l.NewNo < 1 || newLines[l.NewNo-1] != l.Text {
					t.Fatalf("added line %+v is not new line %d", l, l.NewNo)
				}
			default:
				t.Fatalf("line kind %q", l.Kind)
			}
		}
		if nOld != h.OldLines || nNew != h.NewLines {
			t.Fatalf("hunk counts %d/%d, lines say %d/%d", h.OldLines, h.NewLines, nOld, nNew)
		}
		if first := h.Lines[0]; first.Kind == backup.LineContext && (first.OldNo != h.OldStart || first.NewNo != h.NewStart) {
			t.Fatalf("hunk starts at %d/%d, its first line is %d/%d", h.OldStart, h.NewStart, first.OldNo, first.NewNo)
		}
	}
	if added != res.Added || removed != res.Removed {
		t.Fatalf("Added/Removed %d/%d, hunks hold %d/%d", res.Added, res.Removed, added, removed)
	}
	if got, err := applyUnified(res.Unified, a); err != nil || got != b {
		t.Fatalf("the unified diff does not turn a into b (err %v):\n%s", err, res.Unified)
	}
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)

// applyUnified applies a unified diff of one file to old, checking every
// context and removed line, as patch(1) would.
func applyUnified(diff, old string) (string, error) {
	if diff == "" {
		return old, nil
	}
	// Lines of old with their line ends.
	var src []string
	for rest := old; rest != ""; {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			src = append(src, rest)
			break
		}
		src = append(src, rest[:i+1])
		rest = rest[i+1:]
	}
	lines := strings.SplitAfter(diff, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("no file header")
	}
	var out strings.Builder
	next := 0 // next line of src to copy
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		// A "\ No newline" marker takes the line end off the line before.
		noEOL := i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\\ No newline at end of file")
		body := l[1:]
		if noEOL {
			body = strings.TrimSuffix(body, "\n")
		}
		switch l[0] {
		case '@':
			m := hunkHeader.FindStringSubmatch(strings.TrimSuffix(l, "\n"))
			if m == nil {
				return "", fmt.Errorf("bad hunk header %q", l)
			}
			from, _ := strconv.Atoi(m[1])
			if m[2] == "0" {
				from++ // an empty range names the line before it
			}
			for ; next < from-1; next++ {
				out.WriteString(src[next])
			}
			to, _ := strconv.Atoi(m[3])
			if m[4] == "0" {
				to++
			}
			if at := strings.Count(out.String(), "\n") + 1; to != at {
				return "", fmt.Errorf("hunk %q: the new side starts at line %d", strings.TrimSpace(l), at)
			}
		case ' ', '-':
			if next >= len(src) || src[next] != body {
				return "", fmt.Errorf("line %d: diff has %q, text has %q", next+1, body, src[min(next, len(src)-1)])
			}
			if l[0] == ' ' {
				out.WriteString(body)
			}
			next++
		case '+':
			out.WriteString(body)
		case '\\':
		default:
			return "", fmt.Errorf("bad diff line %q", l)
		}
	}
	for ; next < len(src); next++ {
		out.WriteString(src[next])
	}
	return out.String(), nil
}

func TestDiffTextsLineNumbers(t *testing.T) {
	a := "hostname r1\n!\ninterface Gi0/1\n description one\n!\ninterface Gi0/2\n description two\n!\nline vty 0 4\n transport input ssh\nend\n"
	b := "hostname r1\n!\ninterface Gi0/1\n description ONE\n!\ninterface Gi0/2\n description two\n!\ninterface Gi0/3\n shutdown\n!\nline vty 0 4\n transport input ssh\nend\n"
	res := backup.DiffTexts(a, b, nil)
	checkDiff(t, a, b, res)
	if !res.Changed || res.Added != 4 || res.Removed != 1 {
		t.Errorf("Changed %v, +%d -%d; want true, +4 -1", res.Changed, res.Added, res.Removed)
	}
	if !strings.HasPrefix(res.Unified, "--- a\n+++ b\n@@ ") || !strings.Contains(res.Unified, "\n- description one\n+ description ONE\n") {
		t.Errorf("unified diff:\n%s", res.Unified)
	}
	// The removed line is old line 4, the first added new line 4.
	var got []string
	for _, h := range res.Hunks {
		for _, l := range h.Lines {
			if l.Kind != backup.LineContext {
				got = append(got, fmt.Sprintf("%s %d %d %s", l.Kind, l.OldNo, l.NewNo, l.Text))
			}
		}
	}
	want := []string{"removed 4 0  description one", "added 0 4  description ONE",
		"added 0 8 !", "added 0 9 interface Gi0/3", "added 0 10  shutdown"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("changed lines\n got %q\nwant %q", got, want)
	}
	if same := backup.DiffTexts(a, a, nil); same.Changed || len(same.Hunks) != 0 || same.Unified != "" {
		t.Errorf("diff of a text with itself: %+v", same)
	}
	// From and to nothing.
	checkDiff(t, "", b, backup.DiffTexts("", b, nil))
	checkDiff(t, a, "", backup.DiffTexts(a, "", nil))
}

// TestDiffTextsRandom checks line numbers and the unified form on many
// random edits of a configuration.
func TestDiffTextsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := strings.Split(syntheticConfig(20_000), "\n")
	for i := range 50 {
		lines := append([]string(nil), base...)
		for range rng.IntN(30) + 1 {
			at := rng.IntN(len(lines))
			switch rng.IntN(3) {
			case 0:
				lines[at] = fmt.Sprintf(" description edited %d", i)
			case 1:
				lines = append(lines[:at], lines[at+1:]...)
			default:
				lines = append(lines[:at], append([]string{fmt.Sprintf("ip route 0.0.0.0 0.0.0.0 192.0.2.%d", rng.IntN(250))}, lines[at:]...)...)
			}
		}
		a, b := strings.Join(base, "\n"), strings.Join(lines, "\n")
		checkDiff(t, a, b, backup.DiffTexts(a, b, nil))
	}
}

func TestDiffTextsNoise(t *testing.T) {
	f, err := backup.NewNoiseFilter("cisco_ios", nil)
	if err != nil {
		t.Fatal(err)
	}
	res := backup.DiffTexts(iosBefore, iosAfter, f)
	checkDiff(t, iosBefore, iosAfter, res)
	if res.Changed {
		t.Error("noise-only diff reported changed")
	}
	if res.Added == 0 {
		t.Fatal("noise-only diff shows no lines; the view should show them, dimmed")
	}
	if res.NoiseAdded != res.Added || res.NoiseRemoved != res.Removed {
		t.Errorf("noise-only diff: +%d -%d lines, of which noise +%d -%d; want all noise", res.Added, res.Removed, res.NoiseAdded, res.NoiseRemoved)
	}
	for _, h := range res.Hunks {
		for _, l := range h.Lines {
			if l.Kind != backup.LineContext && !l.Noise {
				t.Errorf("changed line %q not flagged as noise", l.Text)
			}
		}
	}
	noise := res.NoiseAdded
	changed := strings.Replace(iosAfter, " description uplink", " description uplink to core-2", 1)
	res = backup.DiffTexts(iosBefore, changed, f)
	checkDiff(t, iosBefore, changed, res)
	if !res.Changed {
		t.Error("a real change is not reported")
	}
	if res.Added-res.NoiseAdded != 1 || res.Removed-res.NoiseRemoved != 1 || res.NoiseAdded != noise {
		t.Errorf("one description changed beside the noise: +%d -%d lines, noise +%d -%d; want one line each beside the same noise",
			res.Added, res.Removed, res.NoiseAdded, res.NoiseRemoved)
	}
	flags := map[string]bool{}
	for _, h := range res.Hunks {
		for _, l := range h.Lines {
			flags[l.Kind+" "+l.Text] = l.Noise
		}
	}
	for line, want := range map[string]bool{
		"removed  description uplink":                                                  false,
		"added  description uplink to core-2":                                          false,
		"added ntp clock-period 17179871":                                              true,
		"removed ! Last configuration change at 11:54:34 UTC Thu Aug 29 2024 by admin": true,
		"context version 15.2":                                                         false,
	} {
		got, ok := flags[line]
		if !ok {
			t.Errorf("line %q not in the diff", line)
		} else if got != want {
			t.Errorf("%q: Noise = %v, want %v", line, got, want)
		}
	}

	// A masked value pairs a removed and an added line: both noise. An
	// admin hash is not masked: its change is real.
	fortinet, err := backup.NewNoiseFilter("fortinet", nil)
	if err != nil {
		t.Fatal(err)
	}
	a := "config system admin\n    edit \"admin\"\n        set password ENC SH2aGFzaDE=\n    next\nend\nconfig vpn ipsec phase1-interface\n    edit \"b1\"\n        set psksecret ENC Zmlyc3Q=\n    next\nend\n"
	b := strings.Replace(a, "ENC Zmlyc3Q=", "ENC c2Vjb25k", 1)
	res = backup.DiffTexts(a, b, fortinet)
	checkDiff(t, a, b, res)
	if res.Changed || res.Added != 1 || res.Removed != 1 {
		t.Fatalf("re-encrypted PSK: Changed %v +%d -%d", res.Changed, res.Added, res.Removed)
	}
	for _, l := range res.Hunks[0].Lines {
		if l.Kind != backup.LineContext && !l.Noise {
			t.Errorf("re-encrypted PSK line %q not flagged noise", l.Text)
		}
	}
	b = strings.Replace(b, "ENC SH2aGFzaDE=", "ENC SH2aGFzaDI=", 1)
	res = backup.DiffTexts(a, b, fortinet)
	if !res.Changed {
		t.Error("an admin password change was ignored")
	}
	for _, h := range res.Hunks {
		for _, l := range h.Lines {
			if strings.Contains(l.Text, "SH2") && l.Kind != backup.LineContext && l.Noise {
				t.Errorf("admin hash line %q flagged noise", l.Text)
			}
		}
	}
}

func TestDiffBackups(t *testing.T) {
	ctx := context.Background()
	s := histStore(t)
	r1 := histDevice(t, s, "core-1", "cisco_ios", nil)
	r2 := histDevice(t, s, "core-2", "cisco_ios", nil)
	t0 := time.Date(2024, 8, 29, 2, 0, 0, 0, time.UTC)
	v1 := histVersion(t, s, r1.ID, t0, backup.Normalise(iosBefore))
	v2 := histVersion(t, s, r1.ID, t0.Add(24*time.Hour), backup.Normalise(iosAfter))
	changedText := backup.Normalise(strings.Replace(iosAfter, "switchport mode trunk", "switchport mode access", 1))
	v3 := histVersion(t, s, r1.ID, t0.Add(48*time.Hour), changedText)
	v4 := histVersion(t, s, r1.ID, t0.Add(72*time.Hour), changedText)
	failed := histFailure(t, s, r1.ID, t0.Add(96*time.Hour), "connect: connection refused")
	other := histVersion(t, s, r2.ID, t0, backup.Normalise(iosBefore))

	res, err := backup.Diff(ctx, s, v1.ID, v3.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, backup.Normalise(iosBefore), changedText, res)
	if !res.Changed {
		t.Error("v1 -> v3 changed the switchport mode")
	}
	if !strings.HasPrefix(res.Unified, "--- core-1\t2024-08-29 02:00:00.000 UTC\n+++ core-1\t2024-08-31 02:00:00.000 UTC\n") {
		t.Errorf("labels do not name the device and times:\n%s", res.Unified)
	}
	if !strings.Contains(res.Unified, "\n- switchport mode trunk\n+ switchport mode access\n") {
		t.Errorf("unified diff misses the change:\n%s", res.Unified)
	}

	// Newer first is allowed: the sides swap.
	back, err := backup.Diff(ctx, s, v3.ID, v1.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if back.Added != res.Removed || back.Removed != res.Added {
		t.Errorf("reverse diff +%d -%d, forward +%d -%d", back.Added, back.Removed, res.Added, res.Removed)
	}

	if res, err := backup.Diff(ctx, s, v1.ID, v2.ID, nil); err != nil || res.Changed || len(res.Hunks) == 0 {
		t.Errorf("v1 -> v2 (noise only): Changed %v, %d hunks, err %v", res.Changed, len(res.Hunks), err)
	}
	// A user rule joins the built-in ones.
	rules := []db.NoiseRule{{Pattern: `^ switchport mode `, Platform: "cisco_ios"}}
	if res, err := backup.Diff(ctx, s, v1.ID, v3.ID, rules); err != nil || res.Changed {
		t.Errorf("with a rule ignoring the switchport mode: Changed %v, err %v", res.Changed, err)
	}
	if res, err := backup.Diff(ctx, s, v3.ID, v4.ID, nil); err != nil || res.Changed || res.Unified != "" || len(res.Hunks) != 0 {
		t.Errorf("same snapshot: %+v, %v", res, err)
	}

	if _, err := backup.Diff(ctx, s, v1.ID, other.ID, nil); !errors.Is(err, backup.ErrDifferentDevices) {
		t.Errorf("different devices: %v", err)
	}
	_, err = backup.Diff(ctx, s, v4.ID, failed.ID, nil)
	if !errors.Is(err, backup.ErrNoSnapshot) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("failed backup: %v", err)
	}
	if _, err := backup.Diff(ctx, s, "no-such-backup", v1.ID, nil); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("unknown backup: %v", err)
	}
	bad := []db.NoiseRule{{Pattern: `(`}}
	var rerr *backup.NoiseRuleError
	if _, err := backup.Diff(ctx, s, v1.ID, v3.ID, bad); !errors.As(err, &rerr) {
		t.Errorf("bad user rule: %v", err)
	}
}

// syntheticConfig returns an IOS-like configuration of about size bytes.
func syntheticConfig(size int) string {
	var b strings.Builder
	b.WriteString("Building configuration...\n\nCurrent configuration : 512000 bytes\n!\n! Last configuration change at 11:54:34 UTC Thu Aug 29 2024 by admin\n!\nversion 15.2\nhostname big-1\n!\nntp clock-period 17179823\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "interface GigabitEthernet%d/0/%d\n description access port %d to room %d\n switchport access vlan %d\n switchport mode access\n spanning-tree portfast\n ip access-group ACL-%d in\n!\n",
			i/48+1, i%48, i, i*7%311, 100+i%50, i%20)
	}
	b.WriteString("end\n")
	return b.String()
}

// BenchmarkDiff500KB diffs a 500 KB configuration against itself with 20
// lines changed here and there and the timestamps moved, with the IOS
// noise rules.
func BenchmarkDiff500KB(b *testing.B) {
	old := syntheticConfig(500_000)
	lines := strings.Split(old, "\n")
	for i := range 20 {
		at := 20 + i*(len(lines)-40)/20
		lines[at] = fmt.Sprintf(" description changed %d", i)
	}
	cur := strings.Join(lines, "\n")
	cur = strings.Replace(cur, "11:54:34 UTC Thu Aug 29 2024", "02:00:00 UTC Fri Aug 30 2024", 1)
	f, err := backup.NewNoiseFilter("cisco_ios", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(old)))
	b.ResetTimer()
	for b.Loop() {
		res := backup.DiffTexts(old, cur, f)
		if !res.Changed || res.Added != 21 {
			b.Fatalf("Changed %v, +%d", res.Changed, res.Added)
		}
	}
}

// A hunk names the block its first change is in, as git names a
// function: the nearest line above that starts with a letter, found
// however far above the hunk it is; none for a change at the top level.
func TestDiffHunkSections(t *testing.T) {
	var a strings.Builder
	a.WriteString("hostname r1\n!\nrouter bgp 65000\n")
	for i := range 40 {
		fmt.Fprintf(&a, " neighbor 10.0.0.%d remote-as 65001\n", i)
	}
	a.WriteString("!\ninterface Gi0/1\n description one\n shutdown\n!\nline vty 0 4\n transport input ssh\nend\n")
	before := a.String()
	after := strings.Replace(before, " neighbor 10.0.0.30 remote-as 65001\n", " neighbor 10.0.0.30 remote-as 65002\n", 1)
	after = strings.Replace(after, " description one\n", " description uplink\n", 1)
	after = strings.Replace(after, "hostname r1\n", "hostname r2\n", 1)
	res := backup.DiffTexts(before, after, nil)
	checkDiff(t, before, after, res)
	var got []string
	for _, h := range res.Hunks {
		got = append(got, h.Section)
	}
	if want := []string{"", "router bgp 65000", "interface Gi0/1"}; !slices.Equal(got, want) {
		t.Errorf("hunk sections %q, want %q", got, want)
	}
	junos := "system {\n    host-name r1;\n}\nprotocols {\n    ospf {\n        area 0.0.0.0;\n    }\n}\n"
	res = backup.DiffTexts(junos, strings.Replace(junos, "area 0.0.0.0", "area 0.0.0.1", 1), nil)
	if len(res.Hunks) != 1 || res.Hunks[0].Section != "protocols {" {
		t.Errorf("Junos hunk sections %+v, want protocols {", res.Hunks)
	}
}
