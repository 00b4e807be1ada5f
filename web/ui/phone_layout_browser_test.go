package ui_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/db"
)

// layoutPages are the pages of the day's work with something in each
// list, for the layout tests; diff is a diff page without a view asked
// for.
func layoutPages(t *testing.T, e *env) (pages []string, diff string) {
	t.Helper()
	f := newDetailFleet(t, e)
	v1 := f.version(t, e, f.coreDev, 3*time.Hour, detailConfigV1, true, "")
	f.version(t, e, f.coreDev, 2*time.Hour, "", false, "192.0.2.10:2222: host key changed: the device presented another key")
	v2 := f.version(t, e, f.coreDev, time.Hour, detailConfigV2, true, "")
	dev := devicePath(f.coreDev)
	diff = dev + "/diff?from=" + url.QueryEscape(v1.ID) + "&to=" + url.QueryEscape(v2.ID)
	// A restore of v1 waiting for approval, its preview v2 → v1.
	ctx := context.Background()
	rs, err := e.store.CreateRestore(ctx, db.NewRestore{DeviceID: f.coreDev.ID, TargetBackupID: v1.ID, Method: "frr_vtysh",
		RequestedByName: "admin", Reason: "the change of the night broke the uplink"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.SetRestorePreview(ctx, rs.ID, db.RestorePreview{BackupID: v2.ID, Hash: *v2.SnapshotHash,
		ExpiresAt: time.Now().Add(time.Hour)}, nil); err != nil {
		t.Fatal(err)
	}
	// A change set for the device, dry-run, with a long line.
	long := "ip prefix-list PL-LAYOUT description " + strings.Repeat("a-long-description-", 12)
	cs, err := e.store.CreateChangeSet(ctx, db.NewChangeSet{Name: "prefix lists for the layout", Body: long + "\n",
		CreatedByName: "admin", Targets: []db.NewTarget{{DeviceID: f.coreDev.ID}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := e.store.ChangeSetTargets(ctx, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.SetChangeSetRendered(ctx, cs.ID, []db.TargetRender{{TargetID: targets[0].ID, Rendered: long + "\n"}}, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	return []string{
		"/dashboard", "/devices", dev, dev + "/edit", "/devices/new", "/devices/import",
		diff + "&view=unified", diff + "&view=split", dev + "/versions/" + url.PathEscape(v2.ID),
		"/jobs", "/jobs?state=finished", "/changes?range=30d", "/search?q=interface",
		"/groups", "/credentials", "/templates", "/schedules", "/rules", "/notifications", "/platforms",
		"/collectors", "/users", "/roles", "/api-keys", "/audit", "/settings", "/account/password",
		"/restores", "/restores/" + id(rs.ID),
		"/change-sets", "/change-sets/new", "/change-sets/" + id(cs.ID),
	}, diff
}

var shotName = regexp.MustCompile(`[^a-z0-9]+`)

// wideParts names what sticks out past the right edge of a viewport
// width wide, outside any box that scrolls it: "" when nothing does.
const wideParts = `(function (width) {
	if (document.documentElement.scrollWidth <= width) return "";
	const out = Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > width + 1 &&
		!Array.from(e.children).some(c => c.getBoundingClientRect().right > width + 1));
	return document.documentElement.scrollWidth + " px: " + out.slice(0, 3).map(e => e.tagName + "." + e.className).join(", ");
})`

// hiddenActions names the tables whose row actions (the last column of a
// with-actions table) are not in view in their box, or that are wider
// than their box with no cue on the edge that has more: "" for none.
const hiddenActions = `(function () {
	const out = [];
	document.querySelectorAll(".table-wrap").forEach(wrap => {
		const box = wrap.getBoundingClientRect();
		if (wrap.scrollWidth > wrap.clientWidth + 1 && wrap.scrollLeft === 0 && !wrap.classList.contains("more-right")) {
			out.push(wrap.querySelector("table").id + ": no cue of more to the right");
		}
		const cell = wrap.querySelector("table.with-actions > tbody > tr > :last-child");
		if (!cell) return;
		const r = cell.getBoundingClientRect();
		if (r.left < box.left - 1 || r.right > box.right + 1) {
			out.push(wrap.querySelector("table").id + ": actions at " + Math.round(r.left) + "–" + Math.round(r.right) +
				" outside " + Math.round(box.left) + "–" + Math.round(box.right));
		}
	});
	return out.join("; ");
})()`

// TestTablesFitInChromium opens every page of the day's work on a phone
// (390 px) and on a wide screen (1440 px), in English and in Chinese: no
// page is wider than the screen, a table wider than its box scrolls in it
// with a shaded edge where there is more, and each row's actions stay in
// view. On a phone the dashboard's lists are one block a row and a diff
// is unified unless the side-by-side view was asked for; /docs fits the
// phone and leads back to the app.
func TestTablesFitInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 240*time.Second, 500, 844)
	pages, diff := layoutPages(t, e)
	e.createUser("boss", "boss-password-1", auth.RoleAdministrator, true)
	b.open("/login?next=/dashboard")
	b.signIn("boss", "boss-password-1")

	for _, screen := range []struct {
		name          string
		width, height int64
	}{{"phone", 390, 844}, {"wide screen", 1440, 900}} {
		if screen.width < 500 {
			// Chromium's window is at least 500 px wide: a phone is emulated.
			b.run(screen.name, chromedp.EmulateViewport(screen.width, screen.height, chromedp.EmulateMobile))
		} else {
			b.run(screen.name, chromedp.EmulateViewport(screen.width, screen.height))
		}
		width := b.eval(`String(window.innerWidth)`)
		for _, lang := range []string{"en", "zh"} {
			b.setLang(lang)
			for _, p := range pages {
				b.open(p)
				if wide := b.eval(wideParts + `(` + width + `)`); wide != "" {
					t.Errorf("%s, %s, %s: the page is wider than the screen, %s", screen.name, lang, p, wide)
				}
				if hidden := b.eval(hiddenActions); hidden != "" {
					t.Errorf("%s, %s, %s: %s", screen.name, lang, p, hidden)
				}
				if os.Getenv("UI_SCREENSHOT_DIR") != "" {
					// For a person to look at; CI does not.
					b.shot(fmt.Sprintf("layout-%d-%s-%s", screen.width, lang, shotName.ReplaceAllString(p, "_")))
				}
			}
		}
	}

	// The phone again, for what it alone does.
	b.run("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.setLang("en")
	b.open("/devices")
	wrap := `document.querySelector("#devices-table").parentElement`
	if got := b.eval(`String(` + wrap + `.scrollWidth > ` + wrap + `.clientWidth) + " " + ` + wrap + `.className`); got != "true table-wrap more-right" {
		t.Errorf("on a phone the devices table's box reads %q, want wider than the box, shaded right", got)
	}
	b.eval(`(` + wrap + `.scrollLeft = 100000, "")`)
	b.waitFor("the box is scrolled to its end", wrap+`.className === "table-wrap more-left"`, 5*time.Second)

	b.open("/dashboard")
	if got := b.eval(`Array.from(document.querySelectorAll("#changed-configs tr, #failing-devices tr"), tr => getComputedStyle(tr).display).join(" ")`); got == "" || strings.Trim(got, "block ") != "" {
		t.Errorf("on a phone the dashboard's rows display as %q, want blocks", got)
	}

	b.open(diff)
	b.waitFor("a phone's diff is unified", `location.search.includes("view=unified") && !!document.querySelector("#diff-table.device-diff-unified")`, 10*time.Second)
	b.open(diff + "&view=split")
	if got := b.eval(`document.getElementById("diff-table").className`); !strings.Contains(got, "device-diff-split") {
		t.Errorf("side by side asked for on a phone shows %q", got)
	}

	for _, lang := range []string{"en", "zh"} {
		b.open("/docs?lang=" + lang)
		b.waitFor("the docs are drawn", `!!document.querySelector("#swagger-ui .info")`, 20*time.Second)
		if wide := b.eval(wideParts + `(390)`); wide != "" {
			t.Errorf("/docs in %s on a phone is wider than the screen, %s", lang, wide)
		}
		if got := b.eval(`document.querySelector('meta[name="viewport"]').content + " " + document.getElementById("docs-back").getAttribute("href")`); got != "width=device-width, initial-scale=1 /" {
			t.Errorf("/docs in %s: viewport and way back %q", lang, got)
		}
		b.run("back to the app", chromedp.Click(chromedp.CSS("#docs-back")), chromedp.WaitVisible(chromedp.CSS("#device-counts")))
		if p := b.path(); p != "/dashboard" {
			t.Errorf("/docs leads back to %s", p)
		}
	}
	b.checkConsole()
}
