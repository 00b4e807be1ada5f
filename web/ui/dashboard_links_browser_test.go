package ui_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
)

// TestDashboardNumbersLeadToTheirRows follows, in Chromium, every number
// the dashboard shows (the device counts, "enabled", failing, changed in
// 24 h) and checks that the page it leads to lists exactly that many
// rows, for an administrator and for a user who sees one group, in both
// languages. The names in the failing and changed lists lead to the
// device, a change's time to its diff.
func TestDashboardNumbersLeadToTheirRows(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 90*time.Second, 1440, 900)
	f := seedFleet(t, e)
	e.createUser("boss", "boss-password-1", auth.RoleAdministrator, true)
	e.createUser("corewatch", "corewatch-password-1", auth.RoleViewer, false, f.core)

	// rows counts the rows the page at path lists: its table's rows (one
	// page holds them all here), which must agree with the total its
	// heading gives: the last number of "Showing 1–5 of 5" on the device
	// list, the first of "5 changes" on the changes list.
	rows := func(path string) int {
		t.Helper()
		if status := b.open(path); status != 200 {
			t.Fatalf("%s answered %d", path, status)
		}
		var sel, title string
		last := true
		switch {
		case strings.HasPrefix(path, "/devices"):
			sel, title = "#devices-table tbody tr", "#devices-list-title"
		case strings.HasPrefix(path, "/changes"):
			sel, title, last = "#changes-list tbody tr", "#changes-list-title", false
		default:
			t.Fatalf("the dashboard links %s, which this test does not know", path)
		}
		n, err := strconv.Atoi(b.eval(`String(document.querySelectorAll("` + sel + `").length)`))
		if err != nil {
			t.Fatal(err)
		}
		numbers := regexp.MustCompile(`\d+`).FindAllString(b.eval(`document.querySelector("`+title+`").textContent`), -1)
		total := "0"
		if len(numbers) > 0 {
			total = numbers[0]
			if last {
				total = numbers[len(numbers)-1]
			}
		}
		if total != strconv.Itoa(n) {
			t.Errorf("%s lists %d rows but its heading counts %s", path, n, total)
		}
		return n
	}

	check := func(who, lang string, want map[string]string) {
		t.Helper()
		b.setLang(lang)
		b.open("/dashboard")
		b.run("dashboard", chromedp.WaitVisible(chromedp.CSS("#device-counts")))
		raw := b.eval(`JSON.stringify(Array.from(document.querySelectorAll("#device-counts a"), a => [a.dataset.count || a.dataset.countLink, a.getAttribute("href"), a.textContent]))`)
		var links [][3]string
		if err := json.Unmarshal([]byte(raw), &links); err != nil {
			t.Fatalf("%s: %v: %s", who, err, raw)
		}
		got := map[string]string{}
		for _, l := range links {
			name, href, text := l[0], l[1], l[2]
			digits := strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return r
				}
				return -1
			}, text)
			got[name] = digits
			want, err := strconv.Atoi(digits)
			if err != nil {
				t.Errorf("%s (%s): %s reads %q, no number", who, lang, name, text)
				continue
			}
			if n := rows(href); n != want {
				t.Errorf("%s (%s): %s shows %d and links %s, which lists %d", who, lang, name, want, href, n)
			}
			b.open("/dashboard")
		}
		for name, n := range want {
			if got[name] != n {
				t.Errorf("%s (%s): %s = %q linked, want %s (links %v)", who, lang, name, got[name], n, got)
			}
		}
	}

	b.open("/login?next=/dashboard")
	b.signIn("boss", "boss-password-1")
	all := map[string]string{"total": "5", "enabled": "4", "reachable": "2", "unreachable": "1", "unknown": "2", "failing": "2", "changed": "1"}
	check("administrator", "en", all)
	check("administrator", "zh", all)

	// The lists' names and times lead to the device and the diff.
	b.setLang("en")
	b.open("/dashboard")
	for _, sel := range []string{"#failing-devices tbody th a", "#changed-configs tbody th a"} {
		if href := b.eval(`document.querySelector("` + sel + `")?.getAttribute("href") ?? ""`); !strings.HasPrefix(href, "/devices/") {
			t.Errorf("%s leads to %q, want a device page", sel, href)
		}
	}
	if href := b.eval(`document.querySelector("#changed-configs a.change-diff")?.getAttribute("href") ?? ""`); !strings.Contains(href, "/diff?to=") {
		t.Errorf("a change's time leads to %q, want its diff", href)
	}

	b.submit("sign out", "#sign-out")
	b.open("/login?next=/dashboard")
	b.signIn("corewatch", "corewatch-password-1")
	core := map[string]string{"total": "3", "failing": "1", "changed": "1"}
	check("a user of the Core group", "en", core)
}

// On a phone, in Chinese, no column header of the lists breaks one
// character to a line (a header of two or more characters keeps at least
// its first two on its first line).
func TestChineseHeadersKeepTheirWordsOnAPhone(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 60*time.Second, 500, 844)
	seedFleet(t, e)
	// Chromium's window is at least 500 px wide: the phone's 390 are
	// emulated.
	b.run("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	e.createUser("boss", "boss-password-1", auth.RoleAdministrator, true)
	b.open("/login?next=/dashboard")
	b.signIn("boss", "boss-password-1")
	b.setLang("zh")
	for _, path := range []string{"/devices", "/jobs?state=finished", "/changes?range=30d", "/users", "/schedules"} {
		b.open(path)
		lines := b.eval(`JSON.stringify(Array.from(document.querySelectorAll("thead th"), th => {
			const text = th.textContent.trim();
			const node = Array.from(th.childNodes).find(n => n.nodeType === 3 && n.textContent.trim().length >= 2);
			if ([...text].length < 2 || !node) return "";
			const from = node.textContent.indexOf(node.textContent.trim());
			const r = document.createRange();
			r.setStart(node, from);
			r.setEnd(node, from + 2);
			return r.getClientRects().length > 1 ? text : "";
		}).filter(Boolean))`)
		if lines != "[]" {
			t.Errorf("%s in Chinese on a phone breaks the headers %s after their first character", path, lines)
		}
	}
}
