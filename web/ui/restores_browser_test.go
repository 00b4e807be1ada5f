package ui_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/app/restore"
	"backupd/app/restore/frrplan"
	"backupd/app/secret"
	"backupd/db"
	"backupd/internal/testfrr"
)

// TestRestoreInChromium is the walk of a restore in a real
// browser, against the real server and a real FRR router (internal/testfrr:
// bgpd behind OpenSSH, its sessions vtysh), in English and in Chinese:
//
//  1. the router is backed up, changed by hand (a neighbour added, a
//     description and a password changed, a route-map entry removed) and
//     backed up again; four eyes are on;
//  2. Ana, who may ask for restores, opens the first version and asks
//     for it back with a reason, and her restore's page shows, by itself,
//     the preview once the fresh backup for it is in: the diff from the
//     router now to the version, its password masked; she cannot approve;
//  3. Bo, who may approve, finds it among those waiting, approves it
//     with a note, and the page follows the run to "succeeded, verified";
//  4. vtysh then shows the first version, and the page lists the
//     backups before and after and the session's transcript.
//
// Screenshots (restore-LANG-NN-…png) go to UI_SCREENSHOT_DIR when set.
// Without Chromium or FRR it skips, except under CI=true, where it fails.
func TestRestoreInChromium(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) { restoreWalk(t, lang) })
	}
}

// restoreWords are what the walk reads on the pages, by language.
var restoreWords = map[string]struct{ pending, succeeded, verified, approved string }{
	"en": {"Waiting for approval", "Succeeded", "Verified: a backup after the change equals the version", "Restore approved."},
	"zh": {"等待审批", "成功", "已验证：变更后的备份与该版本一致", "已批准还原。"},
}

func restoreWalk(t *testing.T, lang string) {
	router := testfrr.Start(t, testfrr.Options{Hostname: "edge-" + lang})
	e := newEnv(t)
	ctx := context.Background()
	words := restoreWords[lang]

	// 1. The router, its two versions, four eyes and the people.
	cred, err := e.store.CreateCredential(ctx, db.Credential{Name: "frr", Username: router.User,
		PrivateKey: e.sealer.Seal(string(router.PrivateKey), secret.PurposePrivateKey)})
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(router.Addr)
	p, _ := strconv.Atoi(port)
	dev, err := e.store.CreateDevice(ctx, db.Device{Name: router.Hostname, Host: "127.0.0.1", Port: p, Platform: "frr",
		LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	first := restoreBackup(t, e, dev.ID)
	router.Vtysh(t, "configure terminal",
		"router bgp 65001", "neighbor 192.0.2.99 remote-as 65099", "neighbor 192.0.2.99 description added-by-hand",
		"neighbor 192.0.2.10 description customer-a-renamed", "neighbor 192.0.2.20 password n3w-s3cret", "exit",
		"no route-map RM-TRANSIT-OUT deny 20")
	if second := restoreBackup(t, e, dev.ID); !second.Changed {
		t.Fatal("the change by hand was not seen")
	}
	if err := restore.SaveSettings(ctx, e.store, restore.Settings{FourEyes: true, PendingHours: 24, ApprovedHours: 1}); err != nil {
		t.Fatal(err)
	}
	for name, perm := range map[string]string{"Restore requesters": auth.PermRestore, "Restore approvers": auth.PermApprove} {
		if _, err := e.store.CreateRole(ctx, name, "", []string{"devices.view", "backups.view", perm}); err != nil {
			t.Fatal(err)
		}
	}
	e.createUser("ana", restorePassword, "Restore requesters", true)
	e.createUser("bo", restorePassword, "Restore approvers", true)
	// The leader's loop, a tick every 100 ms while the test runs.
	tickCtx, stopTicks := context.WithCancel(ctx)
	var ticks sync.WaitGroup
	ticks.Add(1)
	go func() {
		defer ticks.Done()
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-tickCtx.Done():
				return
			case <-tk.C:
				_ = e.dispatcher.Tick(tickCtx)
			}
		}
	}()
	t.Cleanup(func() { stopTicks(); ticks.Wait() })

	b := newTab(t, e, 180*time.Second, 1280, 900)
	shot := func(n, name string) { b.shot("restore-" + lang + "-" + n + "-" + name) }

	// 2. Ana asks for the first version back.
	b.login("ana", restorePassword)
	b.setLang(lang)
	b.open(versionPath(dev.ID, first.ID))
	b.run("the restore action", chromedp.WaitVisible(chromedp.CSS("#version-restore-form")))
	b.typeIn("#version-restore-reason", "undo the change by hand")
	shot("01", "version")
	b.submit("restore this version", "#version-restore-button")
	if path := b.path(); !strings.HasPrefix(path, "/restores/") {
		t.Fatalf("the request led to %s", path)
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(b.path(), "/restores/"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	b.waitAcrossLoads("the preview appears by itself", `!!document.getElementById("restore-diff")`, 45*time.Second)
	if got := b.eval(`document.getElementById("restore-state").textContent.trim()`); got != words.pending {
		t.Errorf("state %q, want %q", got, words.pending)
	}
	diff := b.eval(`document.getElementById("restore-diff").textContent`)
	for _, want := range []string{"192.0.2.99", "customer-a-renamed", "route-map RM-TRANSIT-OUT deny 20", "<secret:"} {
		if !strings.Contains(diff, want) {
			t.Errorf("the preview lacks %q:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, "n3w-s3cret") || strings.Contains(diff, "s3cret-bgp") {
		t.Errorf("the preview shows a password to a user who may not see secrets:\n%s", diff)
	}
	if b.eval(`String(!!document.getElementById("restore-approve"))`) != "false" {
		t.Error("ana, who may not approve, has an approve button")
	}
	shot("02", "pending")
	b.submit("sign out", "#sign-out")

	// 3. Bo approves it.
	b.login("bo", restorePassword)
	b.setLang(lang)
	b.open("/restores?state=waiting")
	b.run("waiting list", chromedp.WaitVisible(chromedp.CSS("#restores-table")))
	shot("03", "waiting")
	b.submit("open the restore", `#restores-table a[href="`+restorePath(id)+`"]`)
	b.run("approve form", chromedp.WaitVisible(chromedp.CSS("#restore-approve")))
	b.typeIn("#restore-note-input", "checked the preview")
	shot("04", "approve")
	b.submit("approve", "#restore-approve")
	b.waitAcrossLoads("the run ends on the page", `!!document.getElementById("restore-result")`, 90*time.Second)
	r, err := e.store.Restore(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s (%s): %s", r.State, deref(r.ErrorReason), deref(r.Error))
	}
	if got := b.eval(`document.getElementById("restore-state").textContent.trim()`); got != words.succeeded {
		t.Errorf("state %q, want %q", got, words.succeeded)
	}
	if got := b.eval(`document.getElementById("restore-verified").textContent`); !strings.Contains(got, words.verified) {
		t.Errorf("verification %q, want %q", got, words.verified)
	}
	if n := b.eval(`String(document.querySelectorAll("#restore-backups li").length)`); n != "3" {
		t.Errorf("%s backups listed, want the preview, before and after", n)
	}
	if b.eval(`String(document.getElementById("restore-transcript").open)`) != "false" {
		t.Error("the transcript is not folded")
	}
	shot("05", "succeeded")
	b.run("open the transcript", chromedp.Click(chromedp.CSS("#restore-transcript summary")))
	transcript := b.eval(`document.getElementById("restore-transcript-text").textContent`)
	if !strings.Contains(transcript, "no neighbor 192.0.2.99") || strings.Contains(transcript, "s3cret-bgp") {
		t.Errorf("transcript:\n%s", transcript)
	}
	shot("06", "transcript")

	// 4. The router runs the first version again.
	want, err := e.store.SnapshotText(ctx, *first.SnapshotHash)
	if err != nil {
		t.Fatal(err)
	}
	if got := router.RunningConfig(t); !frrplan.Equal(got, want) {
		t.Errorf("vtysh does not show the first version:\n%s", strings.Join(frrplan.Diff(got, want), "\n"))
	}
	b.checkConsole()
}

// waitAcrossLoads waits, at most limit, until the page's expression is
// true, through the page loading itself again meanwhile (a live page
// does when its state changes), which a chromedp poll does not survive.
func (b *tab) waitAcrossLoads(what, expr string, limit time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.t.Fatalf("%s: not within %s; the page shows:\n%s", what, limit, b.shows())
}
