package ui_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/collect/driver"
)

// The Platforms page in Chromium: a custom platform started from the
// built-in Cisco IOS one is tested against a simulated device before it
// is saved (the transcript shows what was sent, never a password), then
// saved and listed.
func TestPlatformsInChromium(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { driver.SetCustom(nil) })
	sim := platformSim(t)
	b := newTab(t, e, 90*time.Second, 1280, 900)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b.login("root", "root-password-1")

	b.open("/platforms")
	if got := b.eval(`document.querySelector('#sidenav a[aria-current="page"]').textContent`); got != "Platforms" {
		t.Errorf("current navigation entry %q", got)
	}
	b.submit("start from Cisco IOS", `a[href="/platforms/new?from=cisco_ios"]`)
	if got := b.eval(`document.getElementById("platform-id").value`); got != "custom_cisco_ios" {
		t.Fatalf("prefilled ID %q", got)
	}
	b.eval(`document.getElementById("platform-id").value = ""`)
	b.typeIn("#platform-id", "custom_lab_ios")
	b.eval(`document.getElementById("platform-name").value = ""`)
	b.typeIn("#platform-name", "Lab IOS")
	_, port, _ := net.SplitHostPort(sim.SSHAddr())
	b.typeIn("#platform-test-host", "127.0.0.1")
	b.typeIn("#platform-test-port", port)
	b.typeIn("#platform-test-username", "netops")
	b.typeIn("#platform-test-password", simPassword)
	b.typeIn("#platform-test-enable", simEnable)
	b.submit("test against the device", "#platform-test-submit")
	b.waitFor("test result", `!!document.getElementById("platform-test-ok")`, 5*time.Second)
	// The result is below a long form: the page opens at it.
	b.waitFor("the result in view", `(function () {
		const r = document.getElementById("platform-result").getBoundingClientRect();
		return window.scrollY > 0 && r.top > -2 && r.top < window.innerHeight;
	})()`, 5*time.Second)
	if text := b.eval(`document.getElementById("platform-test-text").textContent`); !strings.Contains(text, "hostname acme-lab") {
		t.Errorf("captured text lacks the configuration:\n%.300s", text)
	}
	transcript := b.eval(`document.getElementById("platform-test-transcript").textContent`)
	if !strings.Contains(transcript, "show running-config") || !strings.Contains(transcript, "********") {
		t.Errorf("transcript:\n%.500s", transcript)
	}
	if html := b.eval(`document.documentElement.outerHTML`); strings.Contains(html, simPassword) || strings.Contains(html, simEnable) {
		t.Fatal("the page holds a password")
	}
	if got := b.eval(`document.getElementById("platform-id").value`); got != "custom_lab_ios" {
		t.Errorf("the form lost the typed ID: %q", got)
	}
	b.shot("platforms-test")
	if n, _ := e.store.ListCustomPlatforms(t.Context()); len(n) != 0 {
		t.Fatal("the test saved the platform")
	}
	b.submit("save", "#platform-submit")
	b.waitFor("saved", `!!document.getElementById("platform-notice")`, 5*time.Second)
	if _, ok := driver.Lookup("custom_lab_ios"); !ok {
		t.Fatal("saved platform not in the registry")
	}
	b.open("/platforms")
	if got := b.eval(`document.querySelector('#custom-table a[href="/platforms/custom_lab_ios"]') !== null ? "yes" : "no"`); got != "yes" {
		t.Errorf("the saved platform is not listed")
	}
	b.checkConsole()
}

// The restore section in Chromium shows the fields of the chosen method
// only, and the ones it hides are not sent: a platform started from
// IOS-XE and switched to frr_vtysh is saved without IOS-XE's file and
// timer. In Chinese the section says 还原.
func TestPlatformRestoreSectionInChromium(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { driver.SetCustom(nil) })
	b := newTab(t, e, 90*time.Second, 1280, 900)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b.login("root", "root-password-1")

	visible := func(id string) bool {
		return b.eval(`(function () { const f = document.getElementById(`+jsString(id)+`).closest("[data-restore-field]");
			return String(!f.hidden && f.offsetParent !== null && !document.getElementById(`+jsString(id)+`).disabled); })()`) == "true"
	}
	expectShown := func(what string, want map[string]bool) {
		t.Helper()
		for id, w := range want {
			if got := visible(id); got != w {
				t.Errorf("%s: %s shown %v, want %v", what, id, got, w)
			}
		}
	}
	b.open("/platforms/new?from=cisco_xe")
	expectShown("IOS-XE", map[string]bool{"platform-restore-file": true, "platform-restore-confirm-default": true,
		"platform-restore-apply-error": true, "platform-restore-save": true})
	b.shot("platform-restore-ios-xe")
	b.chooseValue("#platform-restore-method", "junos_commit_confirmed")
	expectShown("Junos", map[string]bool{"platform-restore-file": false, "platform-restore-confirm-min": true})
	b.chooseValue("#platform-restore-method", "")
	expectShown("not supported", map[string]bool{"platform-restore-file": false, "platform-restore-confirm-max": false,
		"platform-restore-apply-error": false, "platform-restore-drop": false, "platform-restore-enter": false})
	b.chooseValue("#platform-restore-method", "frr_vtysh")
	expectShown("FRR", map[string]bool{"platform-restore-file": false, "platform-restore-confirm-default": false,
		"platform-restore-apply-error": true, "platform-restore-drop": true})
	b.submit("save", "#platform-submit")
	b.waitFor("saved", `!!document.getElementById("platform-notice")`, 5*time.Second)
	pl, ok := driver.Lookup("custom_cisco_xe")
	if !ok || pl.Restore.Method != "frr_vtysh" || pl.Restore.File != "" || pl.Restore.Timer.Max != 0 || len(pl.Restore.Save) != 1 {
		t.Fatalf("saved restore %+v (%v)", pl.Restore, ok)
	}
	expectShown("saved", map[string]bool{"platform-restore-file": false, "platform-restore-apply-error": true})

	b.setLang("zh")
	b.open("/platforms/new?from=cisco_xe")
	if got := b.eval(`document.querySelector("#platform-restore legend").textContent`); got != "还原" {
		t.Errorf("the Chinese section is %q", got)
	}
	if html := b.eval(`document.getElementById("platform-restore").textContent`); strings.Contains(html, "恢复") || !hasHan(html) {
		t.Errorf("the Chinese section:\n%s", html)
	}
	b.shot("platform-restore-ios-xe-zh")
	b.checkConsole()
}
