package driver_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"backupd/app/collect/driver"
)

const (
	restoreMethodsBegin = "<!-- restore-methods:begin (generated from app/collect/driver by TestDocsRestoreMethods; go test ./app/collect/driver -run DocsRestoreMethods -update-docs) -->"
	restoreMethodsEnd   = "<!-- restore-methods:end -->"
	unsupportedBegin    = "<!-- restore-unsupported:begin (generated from app/collect/driver by TestDocsRestoreMethods; go test ./app/collect/driver -run DocsRestoreMethods -update-docs) -->"
	unsupportedEnd      = "<!-- restore-unsupported:end -->"
)

// restoreMethodTable renders, from the platforms' restore declarations,
// how each platform that can restore does it, and how many cannot: the
// same text in README.md and docs/restore.md.
func restoreMethodTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| Platform | Method | How | Whole configuration | Undo timer on the device | Saved with |\n|---|---|---|---|---|---|\n")
	var notes []string
	n, none := 0, 0
	for _, p := range driver.Builtins() {
		if !p.CanRestore() {
			none++
			continue
		}
		n++
		m, ok := driver.LookupRestoreMethod(p.Restore.Method)
		if !ok {
			t.Errorf("%s: restore method %q is not one of driver.RestoreMethods", p.ID, p.Restore.Method)
			continue
		}
		whole := "yes: lines the version lacks are removed"
		if !m.Replaces {
			whole = "no: a merge of selected lines, labelled partial"
		}
		timer := "none: backupd puts the configuration back itself"
		if tm := p.Restore.Timer; tm != (driver.ConfirmTimer{}) {
			timer = fmt.Sprintf("%s (%s to %s)", duration(tm.Default), duration(tm.Min), duration(tm.Max))
		}
		save := "applying saves it"
		if len(p.Restore.Save) > 0 {
			save = "`" + strings.Join(p.Restore.Save, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` (%s) | `%s` | %s | %s | %s | %s |\n", p.ID, p.Name, m.ID, strings.ReplaceAll(m.Summary, "|", `\|`), whole, timer, save)
		if p.Restore.Notes != "" {
			notes = append(notes, fmt.Sprintf("- `%s`: %s", p.ID, p.Restore.Notes))
		}
	}
	if n == 0 {
		t.Error("no platform can restore; the table would be empty")
	}
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	fmt.Fprintf(&b, "\nThe other %d built-in platforms cannot restore yet: a restore of one of their devices is refused "+
		"before anything is recorded, and nothing is sent to the device.\n", none)
	return b.String()
}

// unsupportedList names the built-in platforms that cannot restore.
func unsupportedList() string {
	var ids []string
	for _, p := range driver.Builtins() {
		if !p.CanRestore() {
			ids = append(ids, "`"+p.ID+"`")
		}
	}
	return fmt.Sprintf("Not supported (%d): %s.\n", len(ids), strings.Join(ids, ", "))
}

func duration(d time.Duration) string {
	switch {
	case d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	default:
		return d.String()
	}
}

// TestDocsRestoreMethods keeps the restore method table of README.md and
// docs/restore.md, and the list of the platforms that cannot restore,
// equal to the platforms' declarations.
func TestDocsRestoreMethods(t *testing.T) {
	table := restoreMethodTable(t)
	checkGenerated(t, "../../../README.md", restoreMethodsBegin, restoreMethodsEnd, table)
	checkGenerated(t, "../../../docs/restore.md", restoreMethodsBegin, restoreMethodsEnd, table)
	checkGenerated(t, "../../../docs/restore.md", unsupportedBegin, unsupportedEnd, unsupportedList())
}
