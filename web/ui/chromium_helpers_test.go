package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"backupd/internal/testkit"
)

// stepTimeout bounds every single browser step of a tab.
const stepTimeout = 20 * time.Second

// tab is one headless Chromium tab on a test server, what every browser
// test drives. The console is watched from the start: every console error,
// uncaught exception and CSP violation is a problem, which checkConsole
// (and, for a test that never got that far, the tab's cleanup) reports as
// a test error. The browser's own log is kept and printed when the test
// fails.
//
// Each step runs under stepTimeout and the whole tab under the limit given
// to newTab. A step that fails ends the test (t.Fatalf) with the start of
// the page's text.
type tab struct {
	t *testing.T
	// ctx is the tab's context; steps run under shorter-lived children.
	ctx   context.Context
	base  string
	shots string

	mu       sync.Mutex
	logs     []string
	problems []string
	allowed  []func(chromedp.ConsoleMessage) bool
	checked  bool
	// where is the page being looked at, for the problem report.
	where string
}

// newTab starts a headless Chromium (width×height, with opts added to
// testkit.Chromium's; passwords stay in the "basic" store so that nothing
// pops up) with one tab on e's server, all of it bounded by limit. Without
// Chromium the test is skipped, except under CI=true, where it fails. The
// browser is closed when the test ends.
func newTab(t *testing.T, e *env, limit time.Duration, width, height int, opts ...chromedp.ExecAllocatorOption) *tab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	allocCtx, cancelAlloc := testkit.Chromium(t, ctx, width, height,
		append([]chromedp.ExecAllocatorOption{chromedp.Flag("password-store", "basic")}, opts...)...)
	t.Cleanup(cancelAlloc)

	b := &tab{t: t, base: e.srv.URL}
	keep := func(format string, args ...any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.logs = append(b.logs, fmt.Sprintf(format, args...))
	}
	var cancelTab context.CancelFunc
	b.ctx, cancelTab = chromedp.NewContext(allocCtx, chromedp.WithLogf(keep), chromedp.WithErrorf(keep))
	t.Cleanup(func() {
		b.mu.Lock()
		checked := b.checked
		b.mu.Unlock()
		if !checked {
			b.checkConsole()
		}
		if t.Failed() {
			b.mu.Lock()
			for _, l := range b.logs {
				t.Log("browser:", l)
			}
			b.mu.Unlock()
		}
		cancelTab()
	})
	// Console starts the browser, so it must come before any step (which
	// runs under a shorter-lived context), and not from the goroutine.
	console := chromedp.Console(b.ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			line := fmt.Sprintf("console %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line)
			keep("%s", line)
			if m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleException && !strings.Contains(m.Text, "Content Security Policy") {
				continue
			}
			b.mu.Lock()
			if !b.allowedLocked(m) {
				if b.where != "" {
					line = b.where + ": " + line
				}
				b.problems = append(b.problems, line)
			}
			b.mu.Unlock()
		}
	}()
	return b
}

// allow makes console errors for which ok is true no problem from now on,
// for an error status the test asks for on purpose (Chromium logs every
// 4xx answer).
func (b *tab) allow(ok func(chromedp.ConsoleMessage) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.allowed = append(b.allowed, ok)
}

func (b *tab) allowedLocked(m chromedp.ConsoleMessage) bool {
	for _, ok := range b.allowed {
		if ok(m) {
			return true
		}
	}
	return false
}

// checkConsole fails the test for every console error, exception or CSP
// violation seen so far.
func (b *tab) checkConsole() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.checked = true
	for _, p := range b.problems {
		b.t.Errorf("browser reported: %s", p)
	}
}

func (b *tab) at(where string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.where = where
}

func (b *tab) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, stepTimeout)
}

// shows is the address and the start of the page's own text (its <main>,
// else its body), for failure messages.
func (b *tab) shows() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + location.search + "\n" +
		((document.querySelector("main") || document.body || {}).innerText || "").slice(0, 2000)`))
	return text
}

// run runs the steps and ends the test if one fails.
func (b *tab) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v; the page shows:\n%s", what, err, b.shows())
	}
}

// eval is the string value of the JavaScript expression, awaited when it
// is a promise.
func (b *tab) eval(expr string) string {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// path is the page's location.pathname.
func (b *tab) path() string {
	b.t.Helper()
	return b.eval(`location.pathname`)
}

// shown is "shown" or "hidden" after the hidden property of the element
// that selector finds.
func (b *tab) shown(selector string) string {
	b.t.Helper()
	return b.eval(`document.querySelector(` + jsString(selector) + `).hidden ? "hidden" : "shown"`)
}

// poll waits, at most limit, until the page's expression is true.
func (b *tab) poll(expr string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(b.ctx, limit+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(limit)))
	return err
}

// waitFor is poll that ends the test when the expression does not become
// true in time.
func (b *tab) waitFor(what, expr string, limit time.Duration) {
	b.t.Helper()
	if err := b.poll(expr, limit); err != nil {
		b.t.Fatalf("%s: %v; the page shows:\n%s", what, err, b.shows())
	}
}

// open loads path on the server and returns the HTTP status of the page.
func (b *tab) open(path string) int64 {
	b.t.Helper()
	b.at(path)
	ctx, cancel := b.step()
	defer cancel()
	res, err := chromedp.RunResponse(ctx, chromedp.Navigate(b.base+path))
	if err != nil {
		b.t.Fatalf("open %s: %v", path, err)
	}
	return res.Status
}

// submit clicks what leads to another page (a form's button, a link),
// waits for that page and ends the test unless it loaded without an error
// status.
func (b *tab) submit(what, selector string) {
	b.t.Helper()
	b.at(what)
	ctx, cancel := b.step()
	defer cancel()
	res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(selector)))
	if err != nil {
		b.t.Fatalf("%s: %v; the page shows:\n%s", what, err, b.shows())
	}
	if res.Status >= 400 {
		b.t.Fatalf("%s: status %d; the page shows:\n%s", what, res.Status, b.shows())
	}
}

// typeIn types text into the field, as a user does.
func (b *tab) typeIn(selector, text string) {
	b.t.Helper()
	b.run("type into "+selector, chromedp.WaitVisible(chromedp.CSS(selector)), chromedp.SendKeys(chromedp.CSS(selector), text))
}

// signIn fills in the sign-in form on the page and sends it, and ends the
// test if that leaves the browser on the sign-in page.
func (b *tab) signIn(user, password string) {
	b.t.Helper()
	b.typeIn("#username", user)
	b.typeIn("#password", password)
	b.submit("sign in as "+user, "#sign-in")
	if p := b.path(); p == "/login" {
		b.t.Fatalf("sign in as %s: still on the sign-in page:\n%s", user, b.shows())
	}
}

// login opens the sign-in page and signs in.
func (b *tab) login(user, password string) {
	b.t.Helper()
	b.open("/login")
	b.signIn(user, password)
}

// changePassword fills in the password change form on the page and sends
// it.
func (b *tab) changePassword(current, next string) {
	b.t.Helper()
	b.typeIn("#current", current)
	b.typeIn("#new", next)
	b.typeIn("#confirm", next)
	b.submit("change the password", "#change-password")
}

// chooseValue picks the option with value in the <select>, as a user does:
// the select then fires "change".
func (b *tab) chooseValue(selector, value string) {
	b.t.Helper()
	b.choose(selector, "o.value", value)
}

// chooseLabel picks the option of the <select> by its visible text.
func (b *tab) chooseLabel(selector, label string) {
	b.t.Helper()
	b.choose(selector, "o.textContent.trim()", label)
}

func (b *tab) choose(selector, key, want string) {
	b.t.Helper()
	if msg := b.eval(fmt.Sprintf(`(() => {
		const s = document.querySelector(%s);
		if (!s) return "no such list";
		const o = Array.from(s.options).find(o => %s === %s);
		if (!o) return "no such option among: " + Array.from(s.options, o => %s).join(", ");
		s.value = o.value;
		s.dispatchEvent(new Event("change", {bubbles: true}));
		return "";
	})()`, jsString(selector), key, jsString(want), key)); msg != "" {
		b.t.Fatalf("choose %q in %s: %s", want, selector, msg)
	}
}

// setLang switches the language with the control in the page's header,
// unless the page is in lang already.
func (b *tab) setLang(lang string) {
	b.t.Helper()
	want := map[string]string{"en": "en", "zh": "zh-CN"}[lang]
	if b.eval(`document.documentElement.lang`) == want {
		return
	}
	b.submit("switch to "+lang, `.lang-switch button[value="`+lang+`"]`)
	if got := b.eval(`document.documentElement.lang`); got != want {
		b.t.Fatalf("after switching to %s the page is in %q", lang, got)
	}
}

// grant gives the server's pages the browser permissions, such as
// "clipboard-read".
func (b *tab) grant(permissions ...string) {
	b.t.Helper()
	for _, name := range permissions {
		if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: b.base,
		}); err != nil {
			b.t.Fatalf("grant %s: %v", name, err)
		}
	}
}

// shot saves a full-page screenshot name.png in UI_SCREENSHOT_DIR (when
// set, else in a temporary directory).
func (b *tab) shot(name string) {
	b.t.Helper()
	if b.shots == "" {
		b.shots = testkit.ScreenshotDir(b.t, "UI_SCREENSHOT_DIR")
	}
	ctx, cancel := b.step()
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Errorf("save screenshot %s: %v", name, err)
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	q, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(q)
}

// hasHan reports whether s holds a Chinese (Han) character.
func hasHan(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
}
