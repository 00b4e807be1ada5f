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
