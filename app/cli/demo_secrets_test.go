package cli_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/app/demo"
	"backupd/app/notify"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/internal/dbtest"
)

// bodyRecorder is a webhook receiver that keeps every body.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies []string
}

func (b *bodyRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	b.mu.Lock()
	b.bodies = append(b.bodies, string(raw))
	b.mu.Unlock()
}

// webhookRule stores a webhook channel to url, signed with key, and a
// rule sending it the events (their diffs with includeDiff) of every
// device.
func webhookRule(t *testing.T, store *db.Store, sealer *secret.Sealer, name, url string, key []byte, includeDiff bool, events ...outbox.EventKind) int64 {
	t.Helper()
	ctx := context.Background()
	cfg, sealed, err := notify.ChannelToStore(notify.Channel{Type: notify.TypeWebhook, Name: name, Secret: key,
		Webhook: &notify.WebhookConfig{URL: url}}, notify.Sealer(sealer))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := store.CreateNotificationChannel(ctx, db.NotificationChannel{Name: name, Type: db.ChannelWebhook, Enabled: true, Config: cfg, Secret: sealed})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateNotificationRule(ctx, db.NotificationRule{Name: "rule " + name, Enabled: true, Scope: db.RuleScopeAll,
		Events: events, ChannelIDs: []int64{ch.ID}, IncludeDiff: includeDiff}); err != nil {
		t.Fatal(err)
	}
	return ch.ID
}

func (b *bodyRecorder) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.bodies...)
}

// The demo, run as a newcomer runs it, with its git mirror pushing to a
// bare repository and a webhook that includes diffs: once every device
// is backed up and some have changed (rotating passwords among others),
// neither the pushed history, nor the webhook bodies, nor any page a
// viewer can reach holds any secret of the fleet.
func TestDemoLeaksNoSecret(t *testing.T) {
	t.Parallel() // see runTests
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	data := storeDir(t)
	store := openStore(t, data)
	sealer, err := secret.LoadOrCreate(data)
	if err != nil {
		t.Fatal(err)
	}
	hook := &bodyRecorder{}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	webhookRule(t, store, sealer, "leak scan", hs.URL+"/hook", []byte("scan-hook-key"), true, outbox.EventConfigChanged)
	bare := filepath.Join(t.TempDir(), "configs.git")
	gitOut(t, t.TempDir(), "init", "-q", "--bare", "-b", "main", bare)
	mustRun(t, call{stdin: "viewer-password-1\n"}, "user", "create", "--data", data, "vera", "--role", "Viewer", "--all-groups", "--password-stdin")

	srv := startServe(t, data, "--demo", "--demo-changes-every", "3s", "--notify-window", "1s",
		"--git-mirror", "--git-remote", bare, "--git-allow-local-remote")

	// Wait, bounded, for the mirror to push and for a diff with a masked
	// line to reach the webhook.
	deadline := time.Now().Add(150 * time.Second)
	for {
		pushed := strings.TrimSpace(gitOut(t, bare, "log", "--all", "--format=%H")) != ""
		masked := false
		for _, b := range hook.all() {
			if strings.Contains(b, `\u003csecret:`) || strings.Contains(b, "<secret:") {
				masked = true
			}
		}
		if pushed && masked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 150 s: pushed %v, a masked diff delivered %v (%d bodies); events %v; deliveries %v\n%s", pushed, masked,
				len(hook.all()), countRows(t, store, `SELECT kind, COUNT(*) FROM outbox GROUP BY kind`),
				countRows(t, store, `SELECT channel_id || ' ' || state, COUNT(*) FROM deliveries GROUP BY channel_id, state`), srv.stderr)
		}
		time.Sleep(time.Second)
	}

	secrets, err := demo.Secrets(40)
	if err != nil {
		t.Fatal(err)
	}
	scanned := 0
	scan := func(where, text string) {
		t.Helper()
		scanned++
		lower := strings.ToLower(text)
		for device, list := range secrets {
			for _, s := range list {
				if strings.Contains(lower, strings.ToLower(s)) {
					t.Errorf("%s holds a secret of %s: %q", where, device, s)
				}
			}
		}
	}
	history := gitOut(t, bare, "log", "-p", "--all")
	if !strings.Contains(history, "<secret:") {
		t.Fatal("the pushed history shows no masked secret")
	}
	scan("the pushed git history", history)
	for i, b := range hook.all() {
		scan(fmt.Sprintf("webhook body %d", i), b)
	}

	// Every page a viewer reaches from the dashboard, links followed.
	c := viewerClient(t, srv.url, "vera", "viewer-password-1")
	pages := crawl(t, c, srv.url, 1500, 120*time.Second)
	if len(pages) < 100 {
		t.Fatalf("the crawl reached %d pages only", len(pages))
	}
	for path, body := range pages {
		scan("page "+path, body)
	}
	t.Logf("scanned %d texts (%d pages) for %d devices' secrets", scanned, len(pages), len(secrets))
}

// viewerClient signs in to the web interface as a browser does.
func viewerClient(t *testing.T, base, user, password string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	res, err := c.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("no CSRF token on the login page:\n%s", raw)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(url.Values{
		"csrf": {string(m[1])}, "username": {user}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Request.URL.Path == "/login" {
		t.Fatalf("sign-in as %s failed: %s", user, res.Status)
	}
	return c
}

var hrefs = regexp.MustCompile(`(?:href|data-copy-url|data-lines-url)="(/[^"#]*)`)

// crawl fetches the pages reachable from the dashboard by links of the
// same site (GET only; never sign-out, static files or the API's
// documentation), at most max of them within limit, and returns their
// bodies by path.
func crawl(t *testing.T, c *http.Client, base string, max int, limit time.Duration) map[string]string {
	t.Helper()
	seen := map[string]string{}
	queue := []string{"/"}
	queued := map[string]bool{"/": true}
	end := time.Now().Add(limit)
	for len(queue) > 0 && len(seen) < max && time.Now().Before(end) {
		path := queue[0]
		queue = queue[1:]
		res, err := c.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 16<<20))
		res.Body.Close()
		seen[path] = string(raw)
		if !strings.Contains(res.Header.Get("Content-Type"), "html") {
			continue
		}
		for _, m := range hrefs.FindAllStringSubmatch(string(raw), -1) {
			next := strings.ReplaceAll(m[1], "&amp;", "&")
			if queued[next] || strings.HasPrefix(next, "/static/") || strings.HasPrefix(next, "/docs") ||
				strings.HasPrefix(next, "/logout") || strings.Contains(next, "reveal=") {
				continue
			}
			queued[next] = true
			queue = append(queue, next)
		}
	}
	return seen
}

// countRows runs a query of (name, count) rows, for a failure's message.
func countRows(t *testing.T, store *db.Store, query string) map[string]int {
	t.Helper()
	rows, err := dbtest.Peek(t, store).QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		out[k] = n
	}
	return out
}
