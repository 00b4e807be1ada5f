package ui_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/app/restore"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/internal/testfrr"
)

// TestChangeSetInChromium is the walk of a change set in a real browser,
// against the real server and two real FRR routers (internal/testfrr),
// in English and in Chinese:
//
//  1. Ana, who may push, writes a change set from the list's "New change
//     set": a prefix-list line, a long description and a template line
//     with a variable, for both routers by name; its page shows the dry
//     run, each router's own lines; she cannot approve it; the page
//     writes a device's state the store changes in place;
//  2. Bo, who may approve, finds it among those waiting and approves it,
//     and the page follows the run by itself to "done";
//  3. both routers succeeded, each with a backup after (trigger push)
//     linked from the page, vtysh shows the lines, and a router's page
//     shows the session.
//
// Screenshots (changeset-LANG-NN-….png) go to UI_SCREENSHOT_DIR when set,
// else to a temporary directory; with CS_SCREENSHOT_COPY set they are
// copied there too. Without Chromium or FRR it skips, except under
// CI=true, where it fails.
func TestChangeSetInChromium(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) { changeSetWalk(t, lang) })
	}
}

// changeSetWords are what the walk reads on the pages, by language.
var changeSetWords = map[string]struct{ ready, done, succeeded, created, queued string }{
	"en": {"Waiting for approval", "Done", "Succeeded", "Change set created and dry-run.", "Queued"},
	"zh": {"等待审批", "已完成", "成功", "变更集已创建并完成试运行。", "已排队"},
}

func changeSetWalk(t *testing.T, lang string) {
	routers := []*testfrr.Router{
		testfrr.Start(t, testfrr.Options{Hostname: "cs-" + lang + "-1"}),
		testfrr.Start(t, testfrr.Options{Hostname: "cs-" + lang + "-2"}),
	}
	e := newEnv(t)
	ctx := context.Background()
	words := changeSetWords[lang]
	for _, router := range routers {
		cred, err := e.store.CreateCredential(ctx, db.Credential{Name: "frr " + router.Hostname, Username: router.User,
			PrivateKey: e.sealer.Seal(string(router.PrivateKey), secret.PurposePrivateKey)})
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := net.SplitHostPort(router.Addr)
		p, _ := strconv.Atoi(port)
		if _, err := e.store.CreateDevice(ctx, db.Device{Name: router.Hostname, Host: "127.0.0.1", Port: p, Platform: "frr",
			LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := restore.SaveSettings(ctx, e.store, restore.Settings{FourEyes: true, PendingHours: 24, ApprovedHours: 1}); err != nil {
		t.Fatal(err)
	}
	for name, perm := range map[string]string{"Pushers": auth.PermPush, "Change approvers": auth.PermApprove} {
		if _, err := e.store.CreateRole(ctx, name, "", []string{"devices.view", "backups.view", perm}); err != nil {
			t.Fatal(err)
		}
	}
	e.createUser("ana", restorePassword, "Pushers", true)
	e.createUser("bo", restorePassword, "Change approvers", true)
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

	b := newTab(t, e, 240*time.Second, 1280, 900)
	t.Cleanup(func() { copyShots(t, b.shots) })
	shot := func(n, name string) { b.shot("changeset-" + lang + "-" + n + "-" + name) }
	description := "pushed-by-backupd-change-set-walk-with-a-long-description-that-must-wrap-or-scroll-inside-its-box-and-never-overflow-the-page"

	// 1. Ana writes the change set.
	b.login("ana", restorePassword)
	b.setLang(lang)
	b.open("/change-sets")
	b.submit("new change set", "#changesets-new")
	b.typeIn("#cs-name", "BACKUPD-TEST prefix list "+lang)
	b.typeIn("#cs-body", "ip prefix-list BACKUPD-TEST seq 5 permit 10.9.0.0/16\nip prefix-list BACKUPD-TEST description "+description+
		"\nbgp community-list standard CL-{{.Name}} seq 5 permit 65001:{{.Vars.tag}}")
	b.run("template", chromedp.Click(chromedp.CSS("#cs-template")))
	b.typeIn("#cs-vars", "tag=900")
	b.typeIn("#cs-names", routers[0].Hostname+"\n"+routers[1].Hostname)
	shot("01", "form")
	b.submit("create", "#changeset-create")
	if path := b.path(); !strings.HasPrefix(path, "/change-sets/") {
		t.Fatalf("the form led to %s:\n%s", path, b.shows())
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(b.path(), "/change-sets/"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.eval(`document.getElementById("changeset-notice").textContent.trim()`); !strings.HasPrefix(got, words.created) {
		t.Errorf("notice %q, want %q", got, words.created)
	}
	if got := b.eval(`document.getElementById("changeset-state").textContent.trim()`); got != words.ready {
		t.Errorf("state %q, want %q", got, words.ready)
	}
	if b.eval(`String(!!document.getElementById("changeset-approve"))`) != "false" {
		t.Error("ana, who may not approve, has an approve button")
	}
	b.eval(`(document.querySelectorAll("#changeset-targets details").forEach(d => d.open = true), "")`)
	dry := b.eval(`document.getElementById("changeset-targets").textContent`)
	for _, r := range routers {
		if !strings.Contains(dry, "bgp community-list standard CL-"+r.Hostname+" seq 5 permit 65001:900") {
			t.Errorf("the dry run lacks %s's own line:\n%s", r.Hostname, dry)
		}
	}
	noOverflow(t, b, "the dry run")
	shot("02", "dry-run")
	// The page follows the set in place: a device the store now says is
	// queued reads so, and the counts with it, without the page loading
	// again (a mark left on the window stays).
	targets, err := e.store.ChangeSetTargets(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	b.eval(`(window.csMark = "still", "")`)
	poke := func(state string) {
		t.Helper()
		if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE change_set_targets SET state = ? WHERE id = ?`, state, targets[0].ID); err != nil {
			t.Fatal(err)
		}
	}
	poke(db.TargetQueued)
	row := `#changeset-targets tr[data-target="` + strconv.FormatInt(targets[0].ID, 10) + `"]`
	b.waitFor("the device's state in place", `document.querySelector('`+row+`').getAttribute("data-state") === "queued"`, 10*time.Second)
	if got := b.eval(`document.querySelector('` + row + ` [data-role="state"]').textContent.trim()`); got != words.queued {
		t.Errorf("the queued device reads %q, want %q", got, words.queued)
	}
	if got := b.eval(`document.querySelector('#changeset-counts li[data-state="queued"] .cs-count').textContent`); got != "1" {
		t.Errorf("queued count %q", got)
	}
	if b.eval(`String(window.csMark)`) != "still" {
		t.Error("the page loaded itself again to show a device's state")
	}
	poke(db.TargetPending)
	b.waitFor("the device's state back in place", `document.querySelector('`+row+`').getAttribute("data-state") === "pending"`, 10*time.Second)
	b.submit("sign out", "#sign-out")

	// 2. Bo approves it; the page follows the run to its end.
	b.login("bo", restorePassword)
	b.setLang(lang)
	b.open("/change-sets?state=waiting")
	b.run("waiting list", chromedp.WaitVisible(chromedp.CSS("#changesets-table")))
	shot("03", "waiting")
	b.submit("open the change set", `#changesets-table th a[href="`+changeSetPath(id)+`"]`)
	b.run("approve form", chromedp.WaitVisible(chromedp.CSS("#changeset-approve")))
	b.typeIn("#changeset-note-input", "checked the dry run")
	b.submit("approve", "#changeset-approve")
	// The page writes each device's state in place while the set runs
	// (when a poll falls inside a push: a look, not an assertion).
	if changeSetSeenRunning(b, 30*time.Second) {
		shot("04", "running")
	} else {
		t.Log("no poll of the page fell inside a push")
	}
	b.waitAcrossLoads("the run ends on the page", `document.getElementById("changeset-status").getAttribute("data-state") === "done"`,
		120*time.Second)
	c, err := e.store.ChangeSet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != db.ChangeSetDone {
		t.Fatalf("change set %s: %s", c.State, deref(c.Error))
	}
	if got := b.eval(`document.getElementById("changeset-state").textContent.trim()`); got != words.done {
		t.Errorf("state %q, want %q", got, words.done)
	}
	targets, err = e.store.ChangeSetTargets(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for i, tg := range targets {
		if tg.State != db.TargetSucceeded || tg.PostBackupID == nil {
			t.Errorf("%s: %s %s", tg.DeviceName, tg.State, deref(tg.Error))
			continue
		}
		row := `#changeset-targets tr[data-target="` + strconv.FormatInt(tg.ID, 10) + `"]`
		if got := b.eval(`document.querySelector('` + row + ` [data-role="state"]').textContent.trim()`); got != words.succeeded {
			t.Errorf("%s's row says %q, want %q", tg.DeviceName, got, words.succeeded)
		}
		after := b.eval(`document.querySelector('` + row + ` a[data-role="after"]').getAttribute("href")`)
		if after != "/devices/"+strconv.FormatInt(tg.DeviceID, 10)+"/versions/"+*tg.PostBackupID {
			t.Errorf("%s's backup after links to %q", tg.DeviceName, after)
		}
		bk, err := e.store.GetBackup(ctx, *tg.PostBackupID)
		if err != nil || !bk.Success || !bk.Changed || bk.Trigger != queue.TriggerPush {
			t.Errorf("%s's backup after: %+v %v", tg.DeviceName, bk, err)
		}
		conf := routers[i].RunningConfig(t)
		if !strings.Contains(conf, "ip prefix-list BACKUPD-TEST seq 5 permit 10.9.0.0/16") ||
			!strings.Contains(conf, "CL-"+routers[i].Hostname+" seq 5 permit 65001:900") {
			t.Errorf("%s does not run the change:\n%s", routers[i].Hostname, conf)
		}
	}
	noOverflow(t, b, "the ended change set")
	shot("05", "done")

	// 3. A router's session.
	b.submit("open a session", `#changeset-targets a[data-role="session"]`)
	transcript := b.eval(`document.getElementById("changeset-transcript-text").textContent`)
	if !strings.Contains(transcript, "ip prefix-list BACKUPD-TEST seq 5 permit 10.9.0.0/16") || !strings.Contains(transcript, "write memory") {
		t.Errorf("transcript:\n%s", transcript)
	}
	noOverflow(t, b, "a device's session")
	shot("06", "session")
	b.checkConsole()
}

// changeSetSeenRunning reports whether the change set's page showed a
// device queued or being pushed to, written by its script, within limit,
// through the page loading itself again meanwhile.
func changeSetSeenRunning(b *tab, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
			const s = document.getElementById("changeset-status");
			if (!s) return "";
			if (document.querySelector('#changeset-targets tr[data-state="running"], #changeset-targets tr[data-state="queued"]')) return "live";
			return s.getAttribute("data-state");
		})()`))
		cancel()
		switch {
		case err == nil && got == "live":
			return true
		case err == nil && got == "done":
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// noOverflow fails when the page is wider than the window: a long line
// must wrap or scroll in its own box.
func noOverflow(t *testing.T, b *tab, what string) {
	t.Helper()
	if got := b.eval(`String(document.documentElement.scrollWidth > window.innerWidth + 1)`); got != "false" {
		t.Errorf("%s: the page is %s px wide in a %s px window", what,
			b.eval(`String(document.documentElement.scrollWidth)`), b.eval(`String(window.innerWidth)`))
	}
}

// copyShots copies the screenshots in dir to CS_SCREENSHOT_COPY, when
// set, for people to look at after the test.
func copyShots(t *testing.T, dir string) {
	to := os.Getenv("CS_SCREENSHOT_COPY")
	if to == "" || dir == "" {
		return
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Log(err)
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "changeset-*.png"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err == nil {
			err = os.WriteFile(filepath.Join(to, filepath.Base(f)), raw, 0o644)
		}
		if err != nil {
			t.Log(err)
		}
	}
}
