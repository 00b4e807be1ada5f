package apiv1_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/chromedp/chromedp"

	"backupd/internal/testkit"
	"backupd/web/apiv1"
)

// browserSummarySelector matches the summary Swagger UI shows on each operation.
const browserSummarySelector = "#swagger-ui .opblock-summary-description"

// TestDocsRenderInChromium loads /docs in a real browser and checks that
// Swagger UI renders every operation, in English and in Chinese.
//
// It skips when Chromium is missing, except under CI=true, where it fails.
// Set DOCS_SCREENSHOT_DIR to keep the screenshots (default: t.TempDir()).
func TestDocsRenderInChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := testkit.Chromium(t, ctx, 1280, 1024,
		chromedp.Flag("disable-quic", true))
	defer cancelAlloc()

	mux := http.NewServeMux()
	api := apiv1.Mount(mux, apiv1.Deps{})
	api.MountDocs(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// Fail fast, with the server's own answer, if a document cannot be
	// rendered at all: the browser would only show "Failed to load".
	for _, lang := range apiv1.Languages {
		resp, err := http.Get(srv.URL + "/openapi.json?lang=" + lang)
		if err != nil {
			t.Fatalf("GET /openapi.json?lang=%s: %v", lang, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /openapi.json?lang=%s: status %d: %s", lang, resp.StatusCode, body)
		}
	}

	shots := testkit.ScreenshotDir(t, "DOCS_SCREENSHOT_DIR")

	// The browser's and the page's messages are kept, and shown only when
	// the test fails: nothing may call t.Log once the test has returned.
	var (
		logMu sync.Mutex
		logs  []string
	)
	keep := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		logs = append(logs, fmt.Sprintf(format, args...))
	}
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx,
		chromedp.WithLogf(keep), chromedp.WithErrorf(keep))
	defer cancelBrowser()
	console := chromedp.Console(browserCtx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			keep("console %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line)
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

	en := browserRenderDocs(t, browserCtx, srv.URL+"/docs", filepath.Join(shots, "docs-en.png"))
	if !slices.Contains(en.summaries, "List groups") {
		t.Errorf("English /docs: no operation summary %q among %q", "List groups", en.summaries)
	}
	for _, s := range en.summaries {
		if browserHasHan(s) {
			t.Errorf("English /docs: summary %q contains Chinese", s)
		}
	}
	if en.lang != "en" {
		t.Errorf("English /docs: <html lang=%q>, want \"en\"", en.lang)
	}

	zh := browserRenderDocs(t, browserCtx, srv.URL+"/docs?lang=zh", filepath.Join(shots, "docs-zh.png"))
	if len(zh.summaries) != len(en.summaries) {
		t.Errorf("/docs?lang=zh shows %d operation summaries, /docs shows %d", len(zh.summaries), len(en.summaries))
	}
	var untranslated []string
	for _, s := range zh.summaries {
		if !browserHasHan(s) {
			untranslated = append(untranslated, s)
		}
	}
	if len(untranslated) > 0 {
		t.Errorf("/docs?lang=zh: %d of %d operation summaries have no Chinese text (missing from embed/i18n/openapi.zh.json?): %q",
			len(untranslated), len(zh.summaries), untranslated)
	}
	if zh.lang != "zh" {
		t.Errorf("/docs?lang=zh: <html lang=%q>, want \"zh\"", zh.lang)
	}
	if !browserHasHan(zh.title) {
		t.Errorf("/docs?lang=zh: page title %q has no Chinese text", zh.title)
	}
}

// browserDocsPage is what a /docs page showed once Swagger UI had rendered.
type browserDocsPage struct {
	title, lang string
	summaries   []string
}

// browserRenderDocs opens url, waits until Swagger UI shows the operations, saves a
// full-page PNG to shot and returns the page's operation summaries.
func browserRenderDocs(t *testing.T, ctx context.Context, url, shot string) browserDocsPage {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	// Swagger UI shows either the operations or its error box; wait for
	// whichever comes. The wait ends a little before the test's deadline,
	// so that a failure can still tell what the page shows.
	waitCtx := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithDeadline(ctx, deadline.Add(-10*time.Second))
		defer cancel()
	}
	if err := chromedp.Do(waitCtx, chromedp.WaitVisible(chromedp.CSS(browserSummarySelector+", #swagger-ui .errors-wrapper"))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
		t.Fatalf("%s: Swagger UI rendered no operation: %v; the page shows:\n%s", url, err, text)
	}
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
		t.Errorf("%s: screenshot: %v", url, err)
	} else if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Errorf("%s: save screenshot: %v", url, err)
	} else {
		t.Logf("%s: screenshot %s", url, shot)
	}
	errText, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`Array.from(document.querySelectorAll("#swagger-ui .errors-wrapper"), e => e.innerText).join("\n")`))
	if err != nil {
		t.Fatalf("%s: read errors: %v", url, err)
	}
	if strings.TrimSpace(errText) != "" {
		t.Fatalf("%s: Swagger UI reports errors:\n%s", url, errText)
	}
	var got browserDocsPage
	if got.summaries, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll(`+"`"+browserSummarySelector+"`"+`), e => e.textContent.trim())`)); err != nil {
		t.Fatalf("%s: read summaries: %v", url, err)
	}
	if got.title, err = chromedp.Run(ctx, chromedp.Title()); err != nil {
		t.Fatalf("%s: read title: %v", url, err)
	}
	if got.lang, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`)); err != nil {
		t.Fatalf("%s: read lang: %v", url, err)
	}
	if len(got.summaries) == 0 {
		t.Fatalf("%s: Swagger UI shows no operation summary", url)
	}
	t.Logf("%s: title %q, %d operations: %q", url, got.title, len(got.summaries), got.summaries)
	return got
}

// browserHasHan reports whether s holds a Chinese (Han) character.
func browserHasHan(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
}
