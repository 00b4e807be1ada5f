package notify_test

import (
	"fmt"
	"strings"
	"testing"

	"backupd/app/backup"
	"backupd/app/notify"
)

const iosOld = `!
! Last configuration change at 11:54:34 UTC Thu Aug 29 2024 by admin
version 15.2
hostname core-1
ntp clock-period 17179870
interface Gi0/1
 description uplink
`

const iosNew = `!
! Last configuration change at 09:12:01 UTC Fri Aug 30 2024 by admin
version 15.2
hostname core-1
ntp clock-period 17179871
interface Gi0/1
 description uplink to core-2
`

func TestNewDiffMarksNoise(t *testing.T) {
	f, err := backup.NewNoiseFilter("cisco_ios", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := notify.NewDiff(iosOld, iosNew, f, 0)
	if d == nil {
		t.Fatal("no diff for different texts")
	}
	if d.Truncated || d.TotalLines != len(strings.Split(strings.TrimSuffix(d.Unified, "\n"), "\n")) {
		t.Errorf("small diff: truncated %v, total %d, unified:\n%s", d.Truncated, d.TotalLines, d.Unified)
	}
	want := map[string]bool{
		"-! Last configuration change at 11:54:34 UTC Thu Aug 29 2024 by admin": true,
		"+! Last configuration change at 09:12:01 UTC Fri Aug 30 2024 by admin": true,
		"-ntp clock-period 17179870":     true,
		"+ntp clock-period 17179871":     true,
		"- description uplink":           false,
		"+ description uplink to core-2": false,
		" version 15.2":                  false,
		"--- a":                          false,
	}
	seen := 0
	for i, l := range strings.Split(strings.TrimSuffix(d.Unified, "\n"), "\n") {
		if w, ok := want[l]; ok {
			seen++
			if got := d.IsNoise(i + 1); got != w {
				t.Errorf("line %d %q: noise %v, want %v", i+1, l, got, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of %d expected lines in:\n%s", seen, len(want), d.Unified)
	}
	if notify.NewDiff(iosOld, iosOld, f, 0) != nil {
		t.Error("equal texts have a diff")
	}
}

// A text without a final newline adds "\ No newline at end of file"
// lines that belong to no hunk line: the marks after it stay aligned.
func TestNewDiffNoNewlineAtEnd(t *testing.T) {
	f, err := backup.NewNoiseFilter("cisco_ios", nil)
	if err != nil {
		t.Fatal(err)
	}
	a := "hostname x\nntp clock-period 1"
	b := "hostname x\nntp clock-period 2\nvlan 9\n"
	d := notify.NewDiff(a, b, f, 0)
	lines := strings.Split(strings.TrimSuffix(d.Unified, "\n"), "\n")
	for i, l := range lines {
		noise := strings.Contains(l, "clock-period") && l[0] != ' '
		if d.IsNoise(i+1) != noise {
			t.Errorf("line %d %q: noise %v, want %v\n%s", i+1, l, d.IsNoise(i+1), noise, d.Unified)
		}
	}
}

func TestDiffLimit(t *testing.T) {
	var a, b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&a, "interface Gi0/%d\n", i)
		fmt.Fprintf(&b, "interface Gi1/%d\n", i)
	}
	for _, tc := range []struct{ limit, want int }{{0, notify.DiffLimit}, {-1, notify.DiffLimit}, {50, 50}, {5000, 1003}} {
		d := notify.NewDiff(a.String(), b.String(), nil, tc.limit)
		got := strings.Count(d.Unified, "\n")
		if got != tc.want {
			t.Errorf("limit %d: %d lines, want %d", tc.limit, got, tc.want)
		}
		if d.TotalLines != 1003 || d.Truncated != (tc.want < 1003) {
			t.Errorf("limit %d: total %d truncated %v", tc.limit, d.TotalLines, d.Truncated)
		}
	}
	// One huge line: cut by size, not only by count.
	huge := "description " + strings.Repeat("x", 2*notify.DiffMaxBytes) + "\n"
	d := notify.NewDiff("hostname a\n", "hostname a\n"+huge, nil, 0)
	if !d.Truncated || len(d.Unified) > notify.DiffMaxBytes {
		t.Errorf("huge line: truncated %v, %d bytes", d.Truncated, len(d.Unified))
	}
}

// DiffOf takes a diff the engine already made, with its noise marks.
func TestDiffOfEngineResult(t *testing.T) {
	f, err := backup.NewNoiseFilter("cisco_ios", nil)
	if err != nil {
		t.Fatal(err)
	}
	res := backup.DiffTexts(iosOld, iosNew, f)
	d := notify.DiffOf(res, 3)
	if d.Unified != "--- a\n+++ b\n"+strings.SplitAfter(res.Unified, "\n")[2] || !d.Truncated {
		t.Errorf("cut to 3 lines: %q truncated %v", d.Unified, d.Truncated)
	}
	if notify.DiffOf(backup.DiffResult{}, 0) != nil {
		t.Error("an empty result has a diff")
	}
}

type backupFilter = backup.NoiseFilter

func newIOSFilter() (*backup.NoiseFilter, error) { return backup.NewNoiseFilter("cisco_ios", nil) }
