package ui_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/internal/dbtest"
	"backupd/internal/testkit"

	"backupd/app/auth"
	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/redact"
	"backupd/app/restore"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/web"
	"backupd/web/apiv1"
	"backupd/web/ui"
)

// clock is a settable time source for sessions and sign-in locks.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is the real server — public API, docs and web interface behind the
// shared middleware, as serve mounts them — over a real SQLite file, with
// a running backup engine that runs restores and pushes too, as serve's
// does.
type env struct {
	t             testing.TB
	srv           *httptest.Server
	store         *db.Store
	sealer        *secret.Sealer
	engine        *backup.Engine
	clock         *clock
	logs          *testkit.LockedBuffer
	adminPassword string
	// dispatcher moves restores along as the leader's does; tests tick
	// it (serve runs it every restore.DispatchEvery).
	dispatcher *restore.Dispatcher
}

// newEnv starts the server; hooks may add to the web interface's
// dependencies (a syslog listener) before it is mounted.
func newEnv(t testing.TB, hooks ...func(store *db.Store, engine *backup.Engine, deps *ui.Deps)) *env {
	t.Helper()
	store, sealer, pw := testkit.OpenData(t)
	logs := &testkit.LockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	clk := &clock{t: time.Now()}
	runner := restore.NewRunner(store, sealer, log)
	engine := backup.New(store, sealer, log, backup.Options{Workers: 8, RetryBackoff: 200 * time.Millisecond,
		Timeouts: collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: 10 * time.Second, Job: 20 * time.Second},
		Work:     map[string]backup.WorkRunner{queue.KindRestore: runner, queue.KindPush: restore.PushRunner{Runner: runner}}})
	runner.Engine = engine
	restores := &restore.Service{Store: store, Engine: engine, Keys: redact.NewKeyring(sealer), Log: log}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := engine.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("engine: %v", err)
		}
	}()
	mux := http.NewServeMux()
	api := apiv1.Mount(mux, apiv1.Deps{Store: store, Sealer: sealer, Keys: auth.NewKeyAuthenticator(store, log), Log: log, Location: time.UTC})
	api.MountDocs(mux)
	deps := ui.Deps{Store: store, Sealer: sealer, Engine: engine, Restores: restores, Log: log, Location: time.UTC, Version: "test", Now: clk.Now}
	for _, hook := range hooks {
		hook(store, engine, &deps)
	}
	ui.Mount(mux, deps)
	srv := httptest.NewServer(web.Wrap(mux, log))
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
		if t.Failed() {
			// What the server logged as errors says why a page failed.
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, "level=ERROR") {
					t.Log(line)
				}
			}
		}
	})
	return &env{t: t, srv: srv, store: store, sealer: sealer, engine: engine, clock: clk, logs: logs, adminPassword: pw,
		dispatcher: &restore.Dispatcher{Service: restores}}
}

// createUser adds a user with a password it need not change, one role and
// a scope.
func (e *env) createUser(username, password, role string, all bool, groups ...int64) int64 {
	e.t.Helper()
	ctx := context.Background()
	r, err := e.store.RoleByName(ctx, role)
	if err != nil {
		e.t.Fatal(err)
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		e.t.Fatal(err)
	}
	id, err := e.store.CreateUser(ctx, db.NewUser{Username: username, PasswordHash: hash, RoleIDs: []int64{r.ID}, AllGroups: all, GroupIDs: groups})
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// sessionCount is how many sessions the server holds.
func (e *env) sessionCount() int {
	e.t.Helper()
	var n int
	if err := dbtest.Peek(e.t, e.store).QueryRow(`SELECT COUNT(*) FROM web_sessions`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// browser is one cookie jar talking to the server like a browser does:
// Origin on every POST, redirects not followed (tests look at them).
type browser struct {
	e      *env
	jar    *cookiejar.Jar
	client *http.Client
	// csrf is the token of the last page that showed one.
	csrf string
	// header is added to every request.
	header http.Header
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, jar: jar, header: http.Header{}, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// browserFrom is a browser whose connections come from the loopback
// address ip (127.0.0.2, say): a second client address for the server,
// still on this machine.
func (e *env) browserFrom(ip string) *browser {
	b := e.browser()
	d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	b.client.Transport = &http.Transport{DialContext: d.DialContext}
	return b
}

// page is one response.
type page struct {
	status int
	header http.Header
	body   string
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) do(req *http.Request) page {
	b.e.t.Helper()
	for k, v := range b.header {
		req.Header[k] = v
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.e.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	p := page{status: res.StatusCode, header: res.Header, body: string(body)}
	if m := csrfInput.FindStringSubmatch(p.body); m != nil {
		b.csrf = m[1]
	}
	return p
}

func (b *browser) get(path string) page {
	b.e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.e.srv.URL+path, nil)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return b.do(req)
}

// post sends a form from this site, with the last page's CSRF token
// unless form sets "csrf" itself.
func (b *browser) post(path string, form url.Values) page {
	b.e.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, set := form["csrf"]; !set {
		form.Set("csrf", b.csrf)
	}
	req, err := http.NewRequest(http.MethodPost, b.e.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.e.srv.URL)
	return b.do(req)
}

// login signs in through the form and returns the answer to the POST.
func (b *browser) login(username, password string) page {
	b.e.t.Helper()
	b.get("/login")
	return b.post("/login", url.Values{"username": {username}, "password": {password}})
}

// mustLogin signs in a user that need not change its password.
func (b *browser) mustLogin(username, password string) {
	b.e.t.Helper()
	p := b.login(username, password)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/" {
		b.e.t.Fatalf("sign-in of %s: %d Location %q, want 303 to /:\n%s", username, p.status, p.header.Get("Location"), p.body)
	}
}

func (b *browser) cookie(name string) *http.Cookie {
	u, _ := url.Parse(b.e.srv.URL)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// expect fails unless p has status and, when loc is set, redirects there.
func expect(t *testing.T, what string, p page, status int, loc string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("%s: status %d, want %d\n%s", what, p.status, status, p.body)
	}
	if loc != "" && p.header.Get("Location") != loc {
		t.Fatalf("%s: Location %q, want %q", what, p.header.Get("Location"), loc)
	}
}

func expectBody(t *testing.T, what string, p page, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(p.body, w) {
			t.Errorf("%s: page lacks %q:\n%s", what, w, p.body)
		}
	}
}

// auditActions lists the web interface's audit entries, oldest first.
func (e *env) auditEntries() []db.AuditEntry {
	e.t.Helper()
	entries, _, err := e.store.ListAudit(context.Background(), 1000, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []db.AuditEntry
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Interface == "web" {
			out = append(out, entries[i])
		}
	}
	return out
}

func dbKey(userID int64, prefix string, hash []byte) db.APIKey {
	return db.APIKey{UserID: userID, Name: "test", Prefix: prefix, Hash: hash}
}
