package ui_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/internal/testoidc"
)

// TestSSOBrowserSignInAndOut signs in the way a person does: "Sign in
// with Test IdP" on backupd's page, the username and password on the
// provider's own page, and back on backupd's dashboard with the role the
// person's group maps to; then signs out at both; then a person whose
// groups map to nothing is told so on the sign-in page. In English and
// Chinese, with screenshots of the sign-in page and the refusal.
func TestSSOBrowserSignInAndOut(t *testing.T) {
	for _, c := range []struct{ lang, button, settingsNav, notMapped string }{
		{"en", "Sign in with Test IdP", "Settings", "Your account at Test IdP is in no group that gives access to backupd."},
		{"zh", "使用 Test IdP 登录", "设置", "您在 Test IdP 的账户不属于任何可访问 backupd 的组。"},
	} {
		t.Run(c.lang, func(t *testing.T) {
			e, idp := ssoEnv(t)
			b := newTab(t, e, 2*time.Minute, 1280, 860)
			// The provider's pages are not ours to judge (it has no
			// favicon, say).
			b.allow(func(m chromedp.ConsoleMessage) bool { return strings.HasPrefix(m.URL, idp.Issuer) })

			b.open("/login")
			b.setLang(c.lang)
			if got := b.eval(`document.querySelector("#sign-in-oidc").textContent.trim()`); got != c.button {
				t.Fatalf("the button says %q, want %q", got, c.button)
			}
			if b.shown("#password") != "shown" || b.shown("#sign-in") != "shown" {
				t.Fatal("the password form is gone beside single sign-on")
			}
			b.shot("sso-login-" + c.lang)

			b.submit("sign in with Test IdP", "#sign-in-oidc")
			if href := b.eval(`location.href`); !strings.HasPrefix(href, idp.Issuer+"/login/username?") {
				t.Fatalf("after the button the browser is at %s, want the provider's login page", href)
			}
			b.typeIn("#username", "alice")
			b.typeIn("#password", "alice-at-idp")
			b.submit("sign in at the provider", `button[type="submit"]`)
			waitAcrossPages(b, "the dashboard", `location.origin + location.pathname === `+jsString(e.srv.URL+"/dashboard"), 15*time.Second)
			if who := b.eval(`document.querySelector(".account-name").textContent.trim()`); !strings.HasSuffix(who, "alice") {
				t.Fatalf("signed in as %q, want alice", who)
			}
			// Operator, from netops: the settings, not the users.
			nav := b.eval(`Array.from(document.querySelectorAll(".sidenav a"), a => a.textContent.trim()).join("|")`)
			if !strings.Contains(nav, c.settingsNav) {
				t.Fatalf("the navigation %q lacks %q: not the Operator role", nav, c.settingsNav)
			}
			if n := b.eval(`String(document.querySelectorAll('.sidenav a[href="/users"]').length)`); n != "0" {
				t.Fatal("an Operator sees the users page in the navigation")
			}
			if status := b.open("/settings"); status != http.StatusOK {
				t.Fatalf("the settings page answered %d", status)
			}
			b.shot("sso-signed-in-" + c.lang)

			// Signing out ends ours, then the provider's, and comes back.
			b.submit("sign out", "#sign-out")
			waitAcrossPages(b, "the sign-in page after the provider", `location.origin + location.pathname + location.search === `+
				jsString(e.srv.URL+"/login?out=1"), 15*time.Second)
			if n := idp.Requests(testoidc.EndSessionPath); n != 1 {
				t.Fatalf("the browser called the provider's end-session endpoint %d times, want once", n)
			}
			if n := e.sessionCount(); n != 0 {
				t.Fatalf("%d sessions after signing out", n)
			}

			// Bob's groups give nothing: back on the sign-in page, told why.
			b.allow(func(m chromedp.ConsoleMessage) bool {
				return strings.Contains(m.Text, "status of 403") && strings.HasPrefix(m.URL, e.srv.URL+"/login/oidc/callback")
			})
			b.at("bob")
			b.run("sign in with Test IdP as bob", chromedp.Click(chromedp.CSS("#sign-in-oidc")))
			waitAcrossPages(b, "the provider's login page", `location.pathname === "/login/username"`, 15*time.Second)
			b.typeIn("#username", "bob")
			b.typeIn("#password", "bob-at-idp")
			b.run("sign in at the provider as bob", chromedp.Click(chromedp.CSS(`button[type="submit"]`)))
			waitAcrossPages(b, "the refusal", `document.querySelector("#login-error") !== null`, 15*time.Second)
			if msg := b.eval(`document.querySelector("#login-error").textContent.trim()`); !strings.HasPrefix(msg, c.notMapped) {
				t.Fatalf("the refusal says %q, want %q", msg, c.notMapped)
			}
			b.shot("sso-refused-" + c.lang)
			b.checkConsole()
		})
	}
}

// waitAcrossPages is waitFor while the browser goes from page to page on
// its own (redirects, a Refresh): a poll the next page cuts off starts
// again on it, a bounded number of times within limit.
func waitAcrossPages(b *tab, what, expr string, limit time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(limit)
	var err error
	for range 50 {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		if err = b.poll(expr, left); err == nil {
			return
		}
	}
	b.t.Fatalf("%s: %v; the page shows:\n%s", what, err, b.shows())
}
