package ui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/db"
	"backupd/db/queue"
)

// mergeBrowserVersion is a classic IOS version with a nested line and a
// banner (the C9200L's "banner login" recorded in oxidized).
const mergeBrowserVersion = "!\nhostname merge-sw\n!\nbanner login ^C\n.\nLogin banner.\n.\n^C\n!\n" +
	"interface GigabitEthernet0/1\n description uplink to core\n switchport mode access\n!\nsnmp-server location DC1 rack 4\nend\n"

// TestRestoreMergeInChromium ticks lines of a classic IOS version in a
// real browser: the banner's lines have no box to tick and say why, two
// lines are ticked (the location, and a description under its
// interface), and the request lands on the restore's page, which lists
// the lines in the order they will be sent, the interface first as the
// description's parent. In English and Chinese; screenshots
// (merge-LANG-NN-…png) go to UI_SCREENSHOT_DIR when set. Without
// Chromium it skips, except under CI=true, where it fails.
func TestRestoreMergeInChromium(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) { mergeWalk(t, lang) })
	}
}

func mergeWalk(t *testing.T, lang string) {
	f := newRestoreFixture(t)
	e := f.e
	ctx := context.Background()
	sw, err := e.store.CreateDevice(ctx, db.Device{Name: "merge-sw", Host: "192.0.2.8", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &f.core, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := e.store.PutSnapshot(ctx, mergeBrowserVersion)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour)
	v := "00000000-0000-4000-8000-0000000000d3"
	if err := e.store.InsertBackup(ctx, db.Backup{ID: v, DeviceID: sw.ID, StartedAt: at, FinishedAt: &at, Success: true,
		SnapshotHash: &hash, Trigger: queue.TriggerManual}); err != nil {
		t.Fatal(err)
	}

	b := newTab(t, e, 120*time.Second, 1280, 900)
	shot := func(n, name string) { b.shot("merge-" + lang + "-" + n + "-" + name) }
	b.login("root", restorePassword)
	b.setLang(lang)
	if st := b.open(versionPath(sw.ID, v)); st != 200 {
		t.Fatalf("version page: status %d", st)
	}
	// The banner (lines 4-8): no box to tick, and why.
	if n := b.eval(`String(document.querySelectorAll('#version-restore-lines input[name="line"]').length)`); n != "5" {
		t.Errorf("%s boxes to tick, want 5 (hostname, the interface and its 2 lines, the location; none in the banner)", n)
	}
	why := b.eval(`document.querySelector("#version-restore-block-4").innerText`)
	want := map[string]string{"en": "Lines 4-8: a banner spans several lines", "zh": "第 4-8 行：横幅"}[lang]
	if !strings.Contains(why, want) {
		t.Errorf("the banner's note reads %q, want %q", why, want)
	}
	b.run("tick the description and the location",
		chromedp.Click(chromedp.CSS(`#version-restore-lines input[name="line"][value="11"]`)),
		chromedp.Click(chromedp.CSS(`#version-restore-lines input[name="line"][value="14"]`)))
	b.eval(`document.querySelector('#version-restore-lines input[name="line"][value="11"]').scrollIntoView({block: "center"}), ""`)
	shot("01", "ticked")
	b.typeIn("#version-restore-reason", "put the uplink description back")
	b.submit("request the merge", "#version-restore-button")
	if p := b.path(); !strings.HasPrefix(p, "/restores/") {
		t.Fatalf("the request landed on %s:\n%s", p, b.shows())
	}
	rows := b.eval(`Array.from(document.querySelectorAll("#restore-merge-lines tr"), r => r.innerText.replace(/\s+/g, " ").trim()).join(" | ")`)
	parent := map[string]string{"en": "(parent)", "zh": "(上级)"}[lang]
	for i, w := range []string{"10 interface GigabitEthernet0/1 " + parent, "11 description uplink to core", "14 snmp-server location DC1 rack 4"} {
		if !strings.Contains(rows, w) {
			t.Errorf("line %d of the plan: %q is not in %q", i+1, w, rows)
		}
	}
	if a, b2, c := strings.Index(rows, "10 interface"), strings.Index(rows, "11 description"), strings.Index(rows, "14 snmp"); a > b2 || b2 > c {
		t.Errorf("the plan is not in the order sent: %q", rows)
	}
	shot("02", "restore")
	b.checkConsole()
}
