package ui_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestWebUIInChromium walks the first-run path in a real browser against
// the real server on 127.0.0.1: sign in as admin with the initial password,
// get sent to change it, land on the dashboard with its counts and chart,
// switch to Chinese, fold the navigation on a tablet, and sign out. Every
// page must load its CSS and JavaScript under the CSP, and the console
// must stay free of errors and CSP violations.
//
// It skips when Chromium is missing, except under CI=true, where it fails.
// Set UI_SCREENSHOT_DIR to keep the screenshots (default: t.TempDir()).
func TestWebUIInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 90*time.Second, 1280, 900)
	seedFleet(t, e)

	// styled checks that the page's stylesheet and script ran despite the
	// CSP: the script marks <html class="js">, the stylesheet colours the
	// page.
	styled := func(what string) {
		t.Helper()
		if got := b.eval(`document.documentElement.classList.contains("js") ? "yes" : "no"`); got != "yes" {
			t.Errorf("%s: app.js did not run", what)
		}
		if got := b.eval(`getComputedStyle(document.documentElement).backgroundColor`); got != "rgb(244, 246, 249)" {
			t.Errorf("%s: page background %s; app.css not applied", what, got)
		}
	}

	// 1. Any page leads to sign-in.
	b.open("/")
	b.run("sign-in page", chromedp.WaitVisible(chromedp.CSS("#username")))
	if loc := b.path(); loc != "/login" {
		t.Fatalf("/ led to %s, want /login", loc)
	}
	styled("sign-in page")
	b.shot("01-login-en")

	// 2. The initial password leads to the forced change.
	b.signIn("admin", e.adminPassword)
	b.run("forced change", chromedp.WaitVisible(chromedp.CSS("#password-forced")))
	if loc := b.path(); loc != "/account/password" {
		t.Fatalf("sign-in with the initial password led to %s", loc)
	}
	if n := b.eval(`String(document.querySelectorAll(".sidenav").length)`); n != "0" {
		t.Error("the forced change page shows the navigation")
	}
	b.shot("02-forced-password-change")
	const newPassword = "browser-chosen-password-1"
	b.changePassword(e.adminPassword, newPassword)

	// 3. The dashboard, with the fleet's counts and the chart.
	b.run("dashboard", chromedp.WaitVisible(chromedp.CSS("#device-counts")))
	if loc := b.path(); loc != "/dashboard" {
		t.Fatalf("after the change the browser is at %s, want /dashboard", loc)
	}
	styled("dashboard")
	got := b.eval(`Array.from(document.querySelectorAll("[data-count]"), e => e.dataset.count + "=" + e.textContent).join(" ")`)
	if want := "total=5 reachable=2 unreachable=1 unknown=2 failing=2 changed=1"; got != want {
		t.Errorf("dashboard counts %q, want %q", got, want)
	}
	bars := b.eval(`String(document.querySelectorAll("#backup-chart g.bar").length)`)
	segments := b.eval(`String(document.querySelectorAll("#backup-chart rect.seg-ok, #backup-chart rect.seg-changed, #backup-chart rect.seg-failed").length)`)
	if bars != "30" || segments == "0" {
		t.Errorf("chart has %s bars and %s segments, want 30 bars with segments", bars, segments)
	}
	// On a page without autofocus, the first Tab reaches the skip link,
	// which is then visible.
	b.run("tab", chromedp.KeyEvent("\t"))
	if got := b.eval(`document.activeElement.className`); got != "skip-link" {
		t.Errorf("first Tab focuses %q, want the skip link", got)
	} else if top := b.eval(`String(document.activeElement.getBoundingClientRect().top >= 0)`); top != "true" {
		t.Error("the focused skip link stays off screen")
	}
	// The chart is drawn: its bars have height on screen.
	if h := b.eval(`String(Math.round(document.querySelector("#backup-chart").getBoundingClientRect().height))`); h == "0" {
		t.Error("the chart has no height")
	}
	if rows := b.eval(`String(document.querySelectorAll("#failing-devices tbody tr").length)`); rows != "2" {
		t.Errorf("%s failing devices listed, want 2", rows)
	}
	if cur := b.eval(`document.querySelector('.sidenav a[aria-current="page"]').textContent`); cur != "Dashboard" {
		t.Errorf("current navigation entry %q", cur)
	}
	b.shot("03-dashboard-en")

	// 4. Chinese.
	b.setLang("zh")
	b.run("Chinese dashboard", chromedp.WaitVisible(chromedp.CSS("#device-counts")))
	if lang := b.eval(`document.documentElement.lang`); lang != "zh-CN" {
		t.Errorf("<html lang=%q> after switching to Chinese", lang)
	}
	for _, sel := range []string{"h1", "#chart-title", ".sidenav a", "#sign-out", "#failing-title"} {
		if text := b.eval(`document.querySelector(` + "`" + sel + "`" + `).textContent`); !hasHan(text) {
			t.Errorf("%s reads %q in Chinese", sel, text)
		}
	}
	if title := b.eval(`document.title`); !hasHan(title) {
		t.Errorf("title %q in Chinese", title)
	}
	if got := b.eval(`Array.from(document.querySelectorAll("[data-count]"), e => e.textContent).join(" ")`); got != "5 2 1 2 2 1" {
		t.Errorf("Chinese dashboard counts %q", got)
	}
	b.shot("04-dashboard-zh")

	// 5. A tablet in portrait: the navigation folds behind the menu
	// button, which opens it.
	b.run("tablet", chromedp.EmulateViewport(768, 1024))
	if d := b.eval(`getComputedStyle(document.getElementById("sidenav")).display`); d != "none" {
		t.Errorf("on a tablet the navigation shows (display %s) before the menu opens", d)
	}
	b.run("open the menu", chromedp.Click(chromedp.CSS(".nav-toggle")))
	if d := b.eval(`getComputedStyle(document.getElementById("sidenav")).display`); d == "none" {
		t.Error("the menu button did not open the navigation")
	}
	if exp := b.eval(`document.querySelector(".nav-toggle").getAttribute("aria-expanded")`); exp != "true" {
		t.Errorf("menu button aria-expanded=%s when open", exp)
	}
	b.shot("05-dashboard-zh-tablet")
	b.run("desktop", chromedp.EmulateViewport(1280, 900))

	// 6. Sign out: back at sign-in, in Chinese, with nothing left on the
	// server.
	b.submit("sign out", "#sign-out")
	b.run("signed out", chromedp.WaitVisible(chromedp.CSS("#username")))
	if text := b.eval(`document.querySelector(".alert").textContent`); !hasHan(text) {
		t.Errorf("sign-out notice %q is not Chinese", text)
	}
	if n := e.sessionCount(); n != 0 {
		t.Errorf("%d sessions left after signing out", n)
	}
	b.open("/dashboard")
	if loc := b.path(); loc != "/login" {
		t.Errorf("after sign-out /dashboard shows %s, want /login", loc)
	}
	b.shot("06-signed-out-zh")

	b.checkConsole()
}
