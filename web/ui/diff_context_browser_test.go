package ui_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"backupd/app/auth"
)

// TestDiffGapsOpenInChromium opens, in both views and both languages, the
// gaps of unchanged lines a diff leaves out: each says how many lines it
// holds, opens 200 at a time (those nearest a change first), and once all
// are open the diff numbers every line of both versions once, in order,
// with noise lines dimmed as in the rest of the diff.
func TestDiffGapsOpenInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 60*time.Second, 1280, 900)
	f := newDetailFleet(t, e)
	v1, v2 := gapVersions(t, e, f)
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	b.login("viewer", "viewer-password-1")
	diff := devicePath(f.coreDev) + "/diff?from=" + url.QueryEscape(v1.ID) + "&to=" + url.QueryEscape(v2.ID)

	gapTexts := `Array.from(document.querySelectorAll("#diff-table tr.device-gap .device-gap-text"), s => s.textContent).join(" | ")`
	for _, c := range []struct {
		lang, view     string
		oldCol, newCol int // 1-based columns of the line numbers
		before, middle string
	}{
		{"en", "unified", 1, 2, "⋯ 16 unchanged lines | ⋯ 223 unchanged lines | ⋯ 47 unchanged lines", "⋯ 23 unchanged lines"},
		{"zh", "split", 1, 3, "⋯ 未变更的 16 行 | ⋯ 未变更的 223 行 | ⋯ 未变更的 47 行", "⋯ 未变更的 23 行"},
	} {
		b.setLang(c.lang)
		b.open(diff + "&view=" + c.view)
		if got := b.eval(gapTexts); got != c.before {
			t.Fatalf("%s, %s: gaps read %q, want %q", c.lang, c.view, got, c.before)
		}
		// The middle gap: its 200 lines nearest the change below open
		// first, and it then holds the 23 above them.
		b.eval(`(document.querySelectorAll("#diff-table tr.device-gap .device-gap-open")[1].click(), "")`)
		b.waitFor("the middle gap opens 200 lines", `(function () {
			const gaps = document.querySelectorAll("#diff-table tr.device-gap");
			return gaps.length === 3 && gaps[1].querySelector(".device-gap-text").textContent === `+jsString(c.middle)+`;
		})()`, 10*time.Second)
		for i := 0; i < 10 && b.eval(`String(document.querySelectorAll("#diff-table tr.device-gap").length)`) != "0"; i++ {
			n := b.eval(`String(document.querySelectorAll("#diff-table tr.device-gap").length)`)
			b.eval(`(document.querySelector("#diff-table tr.device-gap .device-gap-open").click(), "")`)
			b.waitFor("a gap opens", `String(document.querySelectorAll("#diff-table tr.device-gap").length) !== `+jsString(n), 10*time.Second)
		}
		numbers := func(col int) string {
			return b.eval(fmt.Sprintf(`(function () {
				const nos = Array.from(document.querySelectorAll("#diff-table tbody tr:not(.device-hunk) td:nth-child(%d)"), td => td.textContent).filter(Boolean).map(Number);
				const bad = nos.findIndex((n, i) => n !== i + 1);
				return nos.length + (bad < 0 ? "" : " out of order at " + bad + ": " + nos.slice(Math.max(bad - 2, 0), bad + 3).join(","));
			})()`, col))
		}
		if got := numbers(c.oldCol); got != "300" {
			t.Errorf("%s, %s: old line numbers %s, want 1 to 300 once each", c.lang, c.view, got)
		}
		if got := numbers(c.newCol); got != "300" {
			t.Errorf("%s, %s: new line numbers %s, want 1 to 300 once each", c.lang, c.view, got)
		}
		// Line 100 was in the middle gap, and is a noise line.
		row := fmt.Sprintf(`Array.from(document.querySelectorAll("#diff-table tbody tr")).find(tr => tr.children[%d] && tr.children[%d].textContent === "100")`, c.newCol-1, c.newCol-1)
		if got := b.eval(row + `.lastElementChild.className + " " + ` + row + `.lastElementChild.textContent`); got != "diff-ctx diff-noise ntp clock-period 17179869" {
			t.Errorf("%s, %s: line 100 reads %q", c.lang, c.view, got)
		}
	}
	b.checkConsole()
}
