package ui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
)

// TestTwoFactorInChromium sets up a second factor in a real browser, in
// English and in Chinese, as a role requires it at the first sign-in:
// the QR code shows (a data: image under the CSP), the secret read from
// the page gives the code the test computes, the ten recovery codes are
// shown once, and the next sign-in asks for a code and lets the right
// one in. Screenshots of the enrolment, the recovery codes and the code
// page in both languages go to UI_SCREENSHOT_DIR when set.
func TestTwoFactorInChromium(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	op, err := e.store.RoleByName(ctx, auth.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetRoleRequire2FA(ctx, op.ID, true); err != nil {
		t.Fatal(err)
	}
	b := newTab(t, e, 120*time.Second, 1100, 1000)
	b.grant("clipboard-read")

	for _, c := range []struct{ lang, user, password string }{
		{"en", "ann", "ann-password-123"},
		{"zh", "bo", "bo-password-1234"},
	} {
		e.createUser(c.user, c.password, auth.RoleOperator, true)
		b.open("/login")
		b.setLang(c.lang)
		b.signIn(c.user, c.password)
		if p := b.path(); p != "/account/2fa" {
			t.Fatalf("%s: after the password the browser is on %s, want the enrolment", c.lang, p)
		}
		b.run("enrolment page", chromedp.WaitVisible(chromedp.CSS("#twofa-qr")), chromedp.WaitVisible(chromedp.CSS("#twofa-secret")))
		b.waitFor("QR code drawn", `document.getElementById("twofa-qr").complete && document.getElementById("twofa-qr").naturalWidth >= 200`, 5*time.Second)
		if b.eval(`document.getElementById("sidenav") ? "nav" : "none"`) != "none" {
			t.Errorf("%s: the enrolment of a pending sign-in shows the navigation", c.lang)
		}
		main := b.eval(`document.querySelector("main").innerText`)
		if c.lang == "zh" && !hasHan(main) {
			t.Errorf("the Chinese enrolment page has no Chinese:\n%s", main)
		}
		b.shot("2fa-01-enrol-" + c.lang)

		secret := strings.ReplaceAll(b.eval(`document.getElementById("twofa-secret").textContent`), " ", "")
		code, err := auth.TOTPCode(secret, e.clock.Now())
		if err != nil {
			t.Fatalf("%s: the page's secret %q: %v", c.lang, secret, err)
		}
		b.typeIn("#confirm-code", code)
		b.submit("confirm the code", "#confirm-2fa")
		b.run("recovery codes", chromedp.WaitVisible(chromedp.CSS("#recovery-code-list")))
		shown := b.eval(`Array.from(document.querySelectorAll("#recovery-code-list li"), li => li.textContent).join("\n")`)
		if n := len(strings.Split(shown, "\n")); n != 10 {
			t.Errorf("%s: %d recovery codes shown, want 10", c.lang, n)
		}
		// Copy puts them on the clipboard one a line.
		b.run("copy the codes", chromedp.WaitVisible(chromedp.CSS("#copy-codes")), chromedp.Click(chromedp.CSS("#copy-codes")))
		b.waitFor("copied", `document.querySelector(".admin-copy-status").textContent !== ""`, 5*time.Second)
		if clip := b.eval(`navigator.clipboard.readText()`); clip != shown {
			t.Errorf("%s: the clipboard holds %q, want the codes %q", c.lang, clip, shown)
		}
		if b.eval(`document.getElementById("sign-out") ? "signed in" : "not"`) != "signed in" {
			t.Errorf("%s: the recovery codes page is not of a signed-in session", c.lang)
		}
		b.shot("2fa-02-recovery-codes-" + c.lang)
		b.submit("continue", "#twofa-continue")
		if p := b.path(); p == "/account/2fa" || p == "/login" {
			t.Errorf("%s: after the recovery codes the browser is on %s", c.lang, p)
		}
		b.submit("sign out", "#sign-out")

		// The next sign-in asks for a code; a new step's code lets in
		// (the confirming code was spent).
		b.open("/login")
		b.signIn(c.user, c.password)
		if p := b.path(); p != "/login/2fa" {
			t.Fatalf("%s: after the password the browser is on %s, want the code page", c.lang, p)
		}
		b.run("code page", chromedp.WaitVisible(chromedp.CSS("#code")))
		if c.lang == "zh" && !hasHan(b.eval(`document.querySelector("main").innerText`)) {
			t.Error("the Chinese code page has no Chinese")
		}
		b.shot("2fa-03-code-" + c.lang)
		e.clock.Advance(30 * time.Second)
		code, _ = auth.TOTPCode(secret, e.clock.Now())
		b.typeIn("#code", code)
		b.submit("verify the code", "#verify-code")
		if p := b.path(); p == "/login/2fa" || p == "/login" {
			t.Fatalf("%s: the right code left the browser on %s:\n%s", c.lang, p, b.shows())
		}
		b.run("signed in", chromedp.WaitVisible(chromedp.CSS("#sidenav")))
		b.open("/account/2fa")
		b.run("account page", chromedp.WaitVisible(chromedp.CSS("#twofa-state")))
		b.shot("2fa-04-account-" + c.lang)
		b.submit("sign out", "#sign-out")
	}
	b.checkConsole()
}
