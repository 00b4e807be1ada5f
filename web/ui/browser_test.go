package ui_test

import (
	"backupd/internal/testkit"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

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
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := testkit.Chromium(t, ctx, 1280, 900,
		// The browser offers to save passwords; nothing else may pop up.
		chromedp.Flag("password-store", "basic"))
	defer cancelAlloc()

	e := newEnv(t)
	seedFleet(t, e)

	shots := testkit.ScreenshotDir(t, "UI_SCREENSHOT_DIR")

	var (
		logMu    sync.Mutex
		logs     []string
		problems []string
	)
	keep := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		logs = append(logs, fmt.Sprintf(format, args...))
	}
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(keep), chromedp.WithErrorf(keep))
	defer cancelBrowser()
	console := chromedp.Console(browserCtx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			line := fmt.Sprintf("console %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line)
			keep("%s", line)
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException || strings.Contains(m.Text, "Content Security Policy") {
				logMu.Lock()
				problems = append(problems, line)
				logMu.Unlock()
			}
		}
	}()
	defer func() {
		if t.Failed() {
			logMu.Lock()
			defer logMu.Unlock()
			for _, l := range logs {
				t.Log("browser:", l)
			}
		}
	}()

	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browserCtx, steps...); err != nil {
			text, _ := chromedp.Run(browserCtx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
			t.Fatalf("%s: %v; the page shows:\n%s", what, err, text)
		}
	}
	// submit clicks a button that sends a form and waits for the next page.
	submit := func(what, selector string) {
		t.Helper()
		if _, err := chromedp.RunResponse(browserCtx, chromedp.Click(chromedp.CSS(selector))); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(browserCtx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(browserCtx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Errorf("screenshot %s: %v", name, err)
			return
		}
		path := filepath.Join(shots, name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Errorf("save screenshot: %v", err)
		}
		t.Logf("screenshot %s", path)
	}
	// styled checks that the page's stylesheet and script ran despite the
	// CSP: the script marks <html class="js">, the stylesheet colours the
	// page.
	styled := func(what string) {
		t.Helper()
		if got := eval(`document.documentElement.classList.contains("js") ? "yes" : "no"`); got != "yes" {
			t.Errorf("%s: app.js did not run", what)
		}
		if got := eval(`getComputedStyle(document.documentElement).backgroundColor`); got != "rgb(244, 246, 249)" {
			t.Errorf("%s: page background %s; app.css not applied", what, got)
		}
	}

	// 1. Any page leads to sign-in.
	if _, err := chromedp.RunResponse(browserCtx, chromedp.Navigate(e.srv.URL+"/")); err != nil {
		t.Fatalf("open /: %v", err)
	}
	run("sign-in page", chromedp.WaitVisible(chromedp.CSS("#username")))
	if loc := eval(`location.pathname`); loc != "/login" {
		t.Fatalf("/ led to %s, want /login", loc)
	}
	styled("sign-in page")
	shot("01-login-en")

	// 2. The initial password leads to the forced change.
	run("type credentials",
		chromedp.SendKeys(chromedp.CSS("#username"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#password"), e.adminPassword))
	submit("sign in", "#sign-in")
	run("forced change", chromedp.WaitVisible(chromedp.CSS("#password-forced")))
	if loc := eval(`location.pathname`); loc != "/account/password" {
		t.Fatalf("sign-in with the initial password led to %s", loc)
	}
	if n := eval(`String(document.querySelectorAll(".sidenav").length)`); n != "0" {
		t.Error("the forced change page shows the navigation")
	}
	shot("02-forced-password-change")
	const newPassword = "browser-chosen-password-1"
	run("type the new password",
		chromedp.SendKeys(chromedp.CSS("#current"), e.adminPassword),
		chromedp.SendKeys(chromedp.CSS("#new"), newPassword),
		chromedp.SendKeys(chromedp.CSS("#confirm"), newPassword))
	submit("change password", "#change-password")

	// 3. The dashboard, with the fleet's counts and the chart.
	run("dashboard", chromedp.WaitVisible(chromedp.CSS("#device-counts")))
	if loc := eval(`location.pathname`); loc != "/dashboard" {
		t.Fatalf("after the change the browser is at %s, want /dashboard", loc)
	}
	styled("dashboard")
	got := eval(`Array.from(document.querySelectorAll("[data-count]"), e => e.dataset.count + "=" + e.textContent).join(" ")`)
	if want := "total=5 reachable=2 unreachable=1 unknown=2 failing=2 changed=1"; got != want {
		t.Errorf("dashboard counts %q, want %q", got, want)
	}
	bars := eval(`String(document.querySelectorAll("#backup-chart g.bar").length)`)
	segments := eval(`String(document.querySelectorAll("#backup-chart rect.seg-ok, #backup-chart rect.seg-changed, #backup-chart rect.seg-failed").length)`)
	if bars != "30" || segments == "0" {
		t.Errorf("chart has %s bars and %s segments, want 30 bars with segments", bars, segments)
	}
	// On a page without autofocus, the first Tab reaches the skip link,
	// which is then visible.
	run("tab", chromedp.KeyEvent("\t"))
	if got := eval(`document.activeElement.className`); got != "skip-link" {
		t.Errorf("first Tab focuses %q, want the skip link", got)
	} else if top := eval(`String(document.activeElement.getBoundingClientRect().top >= 0)`); top != "true" {
		t.Error("the focused skip link stays off screen")
	}
	// The chart is drawn: its bars have height on screen.
	if h := eval(`String(Math.round(document.querySelector("#backup-chart").getBoundingClientRect().height))`); h == "0" {
		t.Error("the chart has no height")
	}
	if rows := eval(`String(document.querySelectorAll("#failing-devices tbody tr").length)`); rows != "2" {
		t.Errorf("%s failing devices listed, want 2", rows)
	}
	if cur := eval(`document.querySelector('.sidenav a[aria-current="page"]').textContent`); cur != "Dashboard" {
		t.Errorf("current navigation entry %q", cur)
	}
	shot("03-dashboard-en")

	// 4. Chinese.
	submit("switch to Chinese", `.lang-switch button[value="zh"]`)
	run("Chinese dashboard", chromedp.WaitVisible(chromedp.CSS("#device-counts")))
	if lang := eval(`document.documentElement.lang`); lang != "zh-CN" {
		t.Errorf("<html lang=%q> after switching to Chinese", lang)
	}
	for _, sel := range []string{"h1", "#chart-title", ".sidenav a", "#sign-out", "#failing-title"} {
		if text := eval(`document.querySelector(` + "`" + sel + "`" + `).textContent`); !hasHan(text) {
			t.Errorf("%s reads %q in Chinese", sel, text)
		}
	}
	if title := eval(`document.title`); !hasHan(title) {
		t.Errorf("title %q in Chinese", title)
	}
	if got := eval(`Array.from(document.querySelectorAll("[data-count]"), e => e.textContent).join(" ")`); got != "5 2 1 2 2 1" {
		t.Errorf("Chinese dashboard counts %q", got)
	}
	shot("04-dashboard-zh")

	// 5. A tablet in portrait: the navigation folds behind the menu
	// button, which opens it.
	run("tablet", chromedp.EmulateViewport(768, 1024))
	if d := eval(`getComputedStyle(document.getElementById("sidenav")).display`); d != "none" {
		t.Errorf("on a tablet the navigation shows (display %s) before the menu opens", d)
	}
	run("open the menu", chromedp.Click(chromedp.CSS(".nav-toggle")))
	if d := eval(`getComputedStyle(document.getElementById("sidenav")).display`); d == "none" {
		t.Error("the menu button did not open the navigation")
	}
	if exp := eval(`document.querySelector(".nav-toggle").getAttribute("aria-expanded")`); exp != "true" {
		t.Errorf("menu button aria-expanded=%s when open", exp)
	}
	shot("05-dashboard-zh-tablet")
	run("desktop", chromedp.EmulateViewport(1280, 900))

	// 6. Sign out: back at sign-in, in Chinese, with nothing left on the
	// server.
	submit("sign out", "#sign-out")
	run("signed out", chromedp.WaitVisible(chromedp.CSS("#username")))
	if text := eval(`document.querySelector(".alert").textContent`); !hasHan(text) {
		t.Errorf("sign-out notice %q is not Chinese", text)
	}
	if n := e.sessionCount(); n != 0 {
		t.Errorf("%d sessions left after signing out", n)
	}
	if _, err := chromedp.RunResponse(browserCtx, chromedp.Navigate(e.srv.URL+"/dashboard")); err != nil {
		t.Fatal(err)
	}
	if loc := eval(`location.pathname`); loc != "/login" {
		t.Errorf("after sign-out /dashboard shows %s, want /login", loc)
	}
	shot("06-signed-out-zh")

	logMu.Lock()
	defer logMu.Unlock()
	for _, p := range problems {
		t.Errorf("browser reported: %s", p)
	}
}

// hasHan reports whether s holds a Chinese (Han) character.
func hasHan(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
}
