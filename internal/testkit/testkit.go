// Package testkit holds what several packages' tests share: a log buffer
// safe for concurrent writers and the headless Chromium the browser tests
// drive. Only tests import it.
package testkit

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/app/secret"
	"backupd/db"
	"backupd/internal/dbtest"
)

// LockedBuffer collects log lines written from many goroutines, so a test
// can look through them (for leaked secrets, for instance).
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ChromiumPath is Debian's Chromium (package chromium); .ci/run installs it.
const ChromiumPath = "/usr/bin/chromium"

// Chromium returns an allocator context for a headless Chromium with a
// fresh profile, sized width×height, under ctx. Without Chromium the test
// is skipped, except under CI=true, where it fails.
//
// A browser test tests what the pages show and do, not the store: on
// PostgreSQL it is skipped (dbtest.OnceOnSQLite) and runs once, on
// SQLite, in the race stage of .ci/run. The handler tests beside it,
// which read and write the same rows without a browser, run on both.
func Chromium(t *testing.T, ctx context.Context, width, height int, extra ...chromedp.ExecAllocatorOption) (context.Context, context.CancelFunc) {
	t.Helper()
	dbtest.OnceOnSQLite(t, "a browser test, the page is under test, not the store")
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %s is missing (%v): .ci/run must install Debian's chromium package", ChromiumPath, err)
		}
		t.Skipf("skipping: %s not found (%v); install it with `apt-get install chromium fonts-noto-cjk` to run this test", ChromiumPath, err)
	}
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}, extra...)
	return chromedp.NewExecAllocator(ctx, opts...)
}

// OpenData opens a fresh store the way `serve` does: a migrated store
// (from dbtest, so SQLite or PostgreSQL), the secret key in a data
// directory, the built-in roles and the admin user, whose initial password
// it returns.
func OpenData(t testing.TB) (*db.Store, *secret.Sealer, string) {
	t.Helper()
	ctx := context.Background()
	store := dbtest.Open(t)
	sealer, err := secret.LoadOrCreate(dbtest.DataDir(t, store))
	if err != nil {
		t.Fatal(err)
	}
	pw, err := auth.Bootstrap(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	return store, sealer, pw
}

// ScreenshotDir is where a browser test saves its screenshots: the
// directory named by the environment variable env (created when missing)
// to keep them, otherwise a temporary one.
func ScreenshotDir(t *testing.T, env string) string {
	t.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
