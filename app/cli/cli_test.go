package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"backupd/internal/testkit"

	"backupd/app/auth"
	"backupd/app/notify/policy"
	"backupd/db"
	"backupd/internal/dbtest"
)

// binPath is the backupd binary built once for all tests.
var binPath string

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

// runTests builds the binary and runs the tests. The long ones (seconds
// to a minute: serve processes, kills, simulated fleets, real FRR, a
// PostgreSQL server of their own) call t.Parallel: most of their time
// they wait for other processes, not for the CPU, so two of them (go
// test's -parallel, the number of CPUs) share that waiting, after the
// short ones have run one by one. Each keeps to its own directories,
// loopback ports and databases; none sets the environment.
func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "backupd-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "backupd")
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goTool, "build", "-o", binPath, "backupd")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build backupd: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// cleanEnv is the test's environment without any BACKUPD_* variable, so
// that the developer's settings cannot leak into a test.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BACKUPD_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// call describes one run of the binary beyond its arguments.
type call struct {
	stdin string
	env   []string // added to cleanEnv()
	dir   string   // working directory; a fresh temp dir when empty
}

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// run executes backupd and waits (bounded) for it to exit.
func run(t *testing.T, c call, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = cleanEnv(append(storeEnv(args), c.env...)...)
	cmd.Dir = c.dir
	if cmd.Dir == "" {
		cmd.Dir = t.TempDir()
	}
	cmd.Stdin = strings.NewReader(c.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		r.code = exitErr.ExitCode()
	default:
		t.Fatalf("backupd %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("backupd %s did not finish within 60 s", strings.Join(args, " "))
	}
	return r
}

// mustRun runs backupd and fails the test unless it exits 0.
func mustRun(t *testing.T, c call, args ...string) result {
	t.Helper()
	r := run(t, c, args...)
	if r.code != 0 {
		t.Fatalf("backupd %s failed:\n%s", strings.Join(args, " "), r)
	}
	return r
}

// mustFail runs backupd, expects a non-zero exit, and checks that stderr
// says each of want.
func mustFail(t *testing.T, c call, want []string, args ...string) result {
	t.Helper()
	r := run(t, c, args...)
	if r.code == 0 {
		t.Fatalf("backupd %s succeeded; want a failure:\n%s", strings.Join(args, " "), r)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("backupd %s: stderr lacks %q:\n%s", strings.Join(args, " "), w, r.stderr)
		}
	}
	return r
}

var (
	keyLine     = regexp.MustCompile(`^bkd_[0-9a-f]{10}_[A-Za-z0-9_-]{43}\n$`)
	createdKey  = regexp.MustCompile(`created API key (\d+) `)
	adminNotice = "one-time password"
)

// createKey runs `key create` on dataDir and returns the key and its id.
func createKey(t *testing.T, dataDir string, args ...string) (string, int64) {
	t.Helper()
	r := mustRun(t, call{}, append([]string{"key", "create", "--data", dataDir}, args...)...)
	if !keyLine.MatchString(r.stdout) {
		t.Fatalf("key create stdout is not exactly one key line: %q", r.stdout)
	}
	m := createdKey.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("key create stderr does not name the key id:\n%s", r.stderr)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return strings.TrimSuffix(r.stdout, "\n"), id
}

// server is a running `backupd serve`.
type server struct {
	cmd     *exec.Cmd
	stderr  *testkit.LockedBuffer
	url     string
	done    chan struct{}
	waitErr error
}

var listening = regexp.MustCompile(`msg="backupd listening" url=(http://127\.0\.0\.1:\d+)`)

// startServe runs `backupd serve` on a free loopback port and returns once
// it answers HTTP.
func startServe(t *testing.T, dataDir string, extra ...string) *server {
	t.Helper()
	return startServeEnv(t, dataDir, nil, extra...)
}

// startServeEnv is startServe with env (NAME=value) added to its
// environment.
func startServeEnv(t *testing.T, dataDir string, env []string, extra ...string) *server {
	t.Helper()
	s := &server{stderr: &testkit.LockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(binPath, append([]string{"serve", "--data", dataDir, "--listen", "127.0.0.1:0"}, extra...)...)
	s.cmd.Env = cleanEnv(append(storeEnv(s.cmd.Args), env...)...)
	s.cmd.Dir = t.TempDir()
	s.cmd.Stdout = io.Discard
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})

	deadline := time.Now().Add(10 * time.Second)
	for s.url == "" {
		if m := listening.FindStringSubmatch(s.stderr.String()); m != nil {
			s.url = m[1]
			break
		}
		select {
		case <-s.done:
			t.Fatalf("serve exited before listening: %v\n%s", s.waitErr, s.stderr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not log its listening address within 10 s:\n%s", s.stderr)
		}
	}
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(s.url + "/api/v1/groups")
		if err == nil {
			resp.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not answer within 10 s: %v\n%s", err, s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM and returns the exit code; it fails the test when the
// process is still running 20 s later (the shutdown grace is 15 s).
func (s *server) stop(t *testing.T) int {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("serve still running 20 s after SIGTERM:\n%s", s.stderr)
	}
	var exitErr *exec.ExitError
	if errors.As(s.waitErr, &exitErr) {
		return exitErr.ExitCode()
	}
	if s.waitErr != nil {
		t.Fatalf("serve: %v", s.waitErr)
	}
	return 0
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request to the server with key (none when empty).
func (s *server) do(t *testing.T, method, path, key, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

type errorEnvelope struct {
	Error *struct {
		Code      string          `json:"code"`
		Message   string          `json:"message"`
		RequestID string          `json:"request_id"`
		Details   json.RawMessage `json:"details"`
	} `json:"error"`
}

// expectError checks status, the envelope's code and that request_id
// equals the X-Request-ID header.
func expectError(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	var env errorEnvelope
	if err := json.Unmarshal(r.body, &env); err != nil || env.Error == nil {
		t.Fatalf("body is not an error envelope (%v): %s", err, r.body)
	}
	if env.Error.Code != code {
		t.Errorf("error.code = %q, want %q", env.Error.Code, code)
	}
	if env.Error.Message == "" {
		t.Error("error.message is empty")
	}
	if id := r.header.Get("X-Request-ID"); id == "" || env.Error.RequestID != id {
		t.Errorf("error.request_id %q, X-Request-ID header %q; want equal and non-empty", env.Error.RequestID, id)
	}
}

type groupPage struct {
	Items []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"items"`
	Pagination *struct {
		Page       int  `json:"page"`
		Limit      int  `json:"limit"`
		Total      int  `json:"total"`
		TotalPages int  `json:"total_pages"`
		HasNext    bool `json:"has_next"`
		HasPrev    bool `json:"has_prev"`
	} `json:"pagination"`
}

func expectGroupPage(t *testing.T, r response) groupPage {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("GET /api/v1/groups: status %d, want 200; body %s", r.status, r.body)
	}
	var p groupPage
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("groups page: %v: %s", err, r.body)
	}
	if p.Items == nil || p.Pagination == nil {
		t.Fatalf("groups response lacks items or pagination: %s", r.body)
	}
	return p
}

// openStore opens the data directory's store in-process, for setting up
// and checking what the binary did: SQLite in it, or the PostgreSQL
// database storeDir gave it.
func openStore(t *testing.T, dataDir string) *db.Store {
	t.Helper()
	if u, ok := pgStores.Load(dataDir); ok {
		s, err := dbtest.OpenAt(t, u.(string))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s, err := db.Open(context.Background(), dataDir)
	if err != nil {
		t.Fatalf("db.Open(%s): %v", dataDir, err)
	}
	s.SetEventPolicy(policy.Decide) // as the binary opens it
	t.Cleanup(func() { s.Close() })
	return s
}

// pgStores maps the data directories storeDir made to their PostgreSQL
// databases.
var pgStores sync.Map

// storeDir is a data directory for t. When the suite runs on PostgreSQL
// (BACKUPD_TEST_POSTGRES) its store is a fresh PostgreSQL database: every
// run of the binary naming it with --data gets BACKUPD_DB, and openStore
// opens that database. The directory keeps secret.key either way.
func storeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if dbtest.Postgres() {
		pgStores.Store(dir, dbtest.Location(t))
		t.Cleanup(func() { pgStores.Delete(dir) })
	}
	return dir
}

// storeEnv is BACKUPD_DB for a command line whose --data storeDir gave a
// PostgreSQL database (a --db or BACKUPD_DB of the test's own wins).
func storeEnv(args []string) []string {
	for i, a := range args {
		if a == "--data" && i+1 < len(args) {
			if u, ok := pgStores.Load(args[i+1]); ok {
				return []string{"BACKUPD_DB=" + u.(string)}
			}
		}
	}
	return nil
}

func TestKeyCreateOnFreshDataDir(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	r := mustRun(t, call{}, "key", "create", "--data", data, "--name", "ci")
	if !keyLine.MatchString(r.stdout) {
		t.Fatalf("stdout is not exactly one line holding the key: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, adminNotice) || !strings.Contains(r.stderr, `"admin"`) {
		t.Errorf("stderr lacks the one-time admin password notice:\n%s", r.stderr)
	}
	key := strings.TrimSpace(r.stdout)
	if strings.Contains(r.stderr, key) {
		t.Error("the key also appears on stderr; it must be on stdout only")
	}

	fi, err := os.Stat(filepath.Join(data, "secret.key"))
	if err != nil {
		t.Fatalf("secret.key: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("secret.key mode %o, want 600", fi.Mode().Perm())
	}
	if fi.Size() != 32 {
		t.Errorf("secret.key holds %d bytes, want 32", fi.Size())
	}
	if _, err := os.Stat(filepath.Join(data, db.FileName)); err != nil {
		t.Fatalf("%s: %v", db.FileName, err)
	}

	// The admin password shown once works, and only the key's hash is stored.
	pw := adminPassword(t, r.stderr)
	s := openStore(t, data)
	admin, err := s.UserByName(context.Background(), auth.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := auth.VerifyPassword(admin.PasswordHash, pw); !ok {
		t.Errorf("the printed admin password %q does not verify", pw)
	}
	dbBytes, err := os.ReadFile(filepath.Join(data, db.FileName))
	if err != nil {
		t.Fatal(err)
	}
	secretPart := key[len("bkd_0123456789_"):] // the secret itself may hold '_'
	if len(secretPart) != 43 {
		t.Fatalf("secret part %q of the key is not 43 characters", secretPart)
	}
	if bytes.Contains(dbBytes, []byte(secretPart)) {
		t.Error("the database file contains the key's secret part")
	}

	r2 := mustRun(t, call{}, "key", "create", "--data", data, "--name", "second")
	if !keyLine.MatchString(r2.stdout) {
		t.Fatalf("second key: stdout %q", r2.stdout)
	}
	if r2.stdout == r.stdout {
		t.Fatal("second key equals the first")
	}
	if strings.Contains(r2.stderr, adminNotice) {
		t.Errorf("second key create printed another admin password:\n%s", r2.stderr)
	}
	if users, err := s.ListUsers(context.Background()); err != nil || len(users) != 1 {
		t.Errorf("users after two key creates: %d, %v; want 1", len(users), err)
	}
}

var adminPasswordLine = regexp.MustCompile(`(?m)^\s{4}(\S+)\s*$`)

func adminPassword(t *testing.T, stderr string) string {
	t.Helper()
	m := adminPasswordLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no indented password line on stderr:\n%s", stderr)
	}
	return m[1]
}

func TestServeAnswersAndStopsOnSIGTERM(t *testing.T) {
	data := storeDir(t)
	key, _ := createKey(t, data, "--name", "serve")
	srv := startServe(t, data)

	p := expectGroupPage(t, srv.do(t, http.MethodGet, "/api/v1/groups", key, ""))
	if p.Pagination.Page != 1 || p.Pagination.Total != 0 || len(p.Items) != 0 {
		t.Errorf("empty groups page: %+v", p)
	}

	r := srv.do(t, http.MethodGet, "/api/v1/groups", "", "")
	expectError(t, r, http.StatusUnauthorized, "UNAUTHORIZED")
	r = srv.do(t, http.MethodGet, "/api/v1/groups", "bkd_nonsense", "")
	expectError(t, r, http.StatusUnauthorized, "UNAUTHORIZED")

	// A group created through the API shows up in the list.
	cr := srv.do(t, http.MethodPost, "/api/v1/groups", key, `{"name":"Core"}`)
	if cr.status/100 != 2 {
		t.Fatalf("POST /api/v1/groups: %d %s", cr.status, cr.body)
	}
	p = expectGroupPage(t, srv.do(t, http.MethodGet, "/api/v1/groups", key, ""))
	if p.Pagination.Total != 1 || len(p.Items) != 1 || p.Items[0].Name != "Core" {
		t.Errorf("groups after create: %+v", p)
	}

	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM, want 0:\n%s", code, srv.stderr)
	}
	if out := srv.stderr.String(); !strings.Contains(out, "stopped") {
		t.Errorf("serve did not log \"stopped\":\n%s", out)
	}
	if strings.Contains(srv.stderr.String(), key) {
		t.Error("serve logged an API key")
	}
}

func TestKeyRevoke(t *testing.T) {
	data := storeDir(t)
	admin, _ := createKey(t, data, "--name", "keep")
	victim, id := createKey(t, data, "--name", "victim")
	srv := startServe(t, data)

	expectGroupPage(t, srv.do(t, http.MethodGet, "/api/v1/groups", victim, ""))

	r := mustRun(t, call{}, "key", "revoke", "--data", data, strconv.FormatInt(id, 10))
	if !strings.Contains(r.stderr, "revoked API key "+strconv.FormatInt(id, 10)) {
		t.Errorf("revoke stderr: %s", r.stderr)
	}
	expectError(t, srv.do(t, http.MethodGet, "/api/v1/groups", victim, ""), http.StatusUnauthorized, "UNAUTHORIZED")
	// The other key is untouched.
	expectGroupPage(t, srv.do(t, http.MethodGet, "/api/v1/groups", admin, ""))

	list := mustRun(t, call{}, "key", "list", "--data", data)
	var victimLine string
	for _, line := range strings.Split(list.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == strconv.FormatInt(id, 10) {
			victimLine = line
		}
	}
	if !strings.Contains(victimLine, "revoked") {
		t.Errorf("key list does not show key %d as revoked:\n%s", id, list.stdout)
	}
	for _, k := range []string{admin, victim} {
		if strings.Contains(list.stdout, k) {
			t.Error("key list prints a whole key")
		}
	}

	mustFail(t, call{}, []string{"no API key 999"}, "key", "revoke", "--data", data, "999")
	mustFail(t, call{}, []string{"key ID"}, "key", "revoke", "--data", data, "abc")
}

func TestKeyCreateNarrowedAndValidation(t *testing.T) {
	data := storeDir(t)
	createKey(t, data, "--name", "bootstrap")
	viewOnly, _ := createKey(t, data, "--name", "ro", "--permission", "groups.view")
	full, _ := createKey(t, data, "--name", "rw")
	srv := startServe(t, data)

	expectGroupPage(t, srv.do(t, http.MethodGet, "/api/v1/groups", viewOnly, ""))
	expectError(t, srv.do(t, http.MethodPost, "/api/v1/groups", viewOnly, `{"name":"nope"}`), http.StatusForbidden, "PERMISSION_DENIED")
	// The same request with an unnarrowed key of the same owner works, so
	// the 403 above came from the narrowing.
	if r := srv.do(t, http.MethodPost, "/api/v1/groups", full, `{"name":"yes"}`); r.status/100 != 2 {
		t.Fatalf("POST with the full key: %d %s", r.status, r.body)
	}

	keysBefore := mustRun(t, call{}, "key", "list", "--data", data).stdout
	mustFail(t, call{}, []string{"bogus.x", "not a permission"}, "key", "create", "--data", data, "--name", "x", "--permission", "bogus.x")
	for _, bad := range []string{"0d", "garbage", "-3d", "0w", "d", "2001-01-01", "1y"} {
		mustFail(t, call{}, []string{"--expires"}, "key", "create", "--data", data, "--name", "x", "--expires", bad)
	}
	mustFail(t, call{}, []string{"--name"}, "key", "create", "--data", data)
	mustFail(t, call{}, []string{`no user "ghost"`}, "key", "create", "--data", data, "--name", "x", "--user", "ghost")
	if after := mustRun(t, call{}, "key", "list", "--data", data).stdout; after != keysBefore {
		t.Errorf("refused key creates changed the key list:\nbefore:\n%s\nafter:\n%s", keysBefore, after)
	}

	// A key cannot hold more than its owner.
	mustRun(t, call{stdin: "viewer-password-1\n"}, "user", "create", "--data", data, "vera", "--all-groups", "--password-stdin")
	mustFail(t, call{}, []string{"does not hold groups.create"}, "key", "create", "--data", data, "--name", "x", "--user", "vera", "--permission", "groups.create")

	// Accepted expiry forms.
	for _, good := range []string{"90d", "2w", "12h", time.Now().AddDate(1, 0, 0).Format("2006-01-02")} {
		createKey(t, data, "--name", "exp-"+good, "--expires", good)
	}
}

func TestExpiredKeyRefused(t *testing.T) {
	data := storeDir(t)
	createKey(t, data, "--name", "bootstrap")
	soon, _ := createKey(t, data, "--name", "soon", "--expires", "1s")
	later, _ := createKey(t, data, "--name", "later", "--expires", "1h")

	// A key that expired a minute ago, written straight into the database.
	s := openStore(t, data)
	admin, err := s.UserByName(context.Background(), auth.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().UTC().Add(-time.Minute).Format(db.TimeFormat)
	expired, prefix, hash := auth.NewAPIKey()
	if _, err := s.CreateAPIKey(context.Background(), db.APIKey{UserID: admin.ID, Name: "old", Prefix: prefix, Hash: hash, ExpiresAt: &past}); err != nil {
		t.Fatal(err)
	}

	srv := startServe(t, data)
	expectError(t, srv.do(t, http.MethodGet, "/api/v1/groups", expired, ""), http.StatusUnauthorized, "UNAUTHORIZED")
	expectGroupPage(t, srv.do(t, http.MethodGet, "/api/v1/groups", later, ""))

	// The 1 s key is refused once its second has passed: poll, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := srv.do(t, http.MethodGet, "/api/v1/groups", soon, "")
		if r.status == http.StatusUnauthorized {
			expectError(t, r, http.StatusUnauthorized, "UNAUTHORIZED")
			break
		}
		if r.status != http.StatusOK {
			t.Fatalf("key expiring in 1 s: status %d %s", r.status, r.body)
		}
		if time.Now().After(deadline) {
			t.Fatal("a key created with --expires 1s was still accepted 10 s later")
		}
		time.Sleep(100 * time.Millisecond)
	}

	list := mustRun(t, call{}, "key", "list", "--data", data).stdout
	if !strings.Contains(list, "expired") {
		t.Errorf("key list shows no expired key:\n%s", list)
	}
}

// userRow is one line of `user list`, split on the column padding.
type userRow struct{ id, username, active, roles, groups, twoFA string }

func userList(t *testing.T, data string) map[string]userRow {
	t.Helper()
	out := mustRun(t, call{}, "user", "list", "--data", data).stdout
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	cols := regexp.MustCompile(`\s{2,}`)
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("user list has no header:\n%s", out)
	}
	rows := map[string]userRow{}
	for _, line := range lines[1:] {
		f := cols.Split(strings.TrimSpace(line), -1)
		if len(f) != 7 {
			t.Fatalf("user list line %q has %d columns, want 7", line, len(f))
		}
		rows[f[1]] = userRow{id: f[0], username: f[1], active: f[2], roles: f[3], groups: f[4], twoFA: f[6]}
	}
	return rows
}

func TestUserCreateAndList(t *testing.T) {
	data := storeDir(t)
	createKey(t, data, "--name", "bootstrap")
	s := openStore(t, data)
	g, err := s.CreateGroup(context.Background(), "Branch", nil)
	if err != nil {
		t.Fatal(err)
	}
	gid := strconv.FormatInt(g.ID, 10)

	r := mustRun(t, call{}, "user", "create", "--data", data, "alice", "--role", "Operator", "--group", gid)
	if !strings.Contains(r.stderr, adminNotice) {
		t.Errorf("alice got no one-time password (no --password-stdin):\n%s", r.stderr)
	}
	alicePW := adminPassword(t, r.stderr)
	const bobPW = "bob-password-42"
	mustRun(t, call{stdin: bobPW + "\n"}, "user", "create", "--data", data, "bob", "--all-groups", "--password-stdin")

	rows := userList(t, data)
	want := map[string]userRow{
		"admin": {roles: "Administrator", groups: "all"},
		"alice": {roles: "Operator", groups: gid},
		"bob":   {roles: "Viewer", groups: "all"},
	}
	for name, w := range want {
		got, ok := rows[name]
		if !ok {
			t.Errorf("user list lacks %s: %v", name, rows)
			continue
		}
		if got.roles != w.roles || got.groups != w.groups || got.active != "true" {
			t.Errorf("user list %s: roles %q groups %q active %q; want %q %q true", name, got.roles, got.groups, got.active, w.roles, w.groups)
		}
	}

	ctx := context.Background()
	alice, err := s.UserByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := auth.VerifyPassword(alice.PasswordHash, alicePW); !ok || !alice.MustChangePassword {
		t.Errorf("alice: printed password verifies=%v, must change=%v; want true, true", ok, alice.MustChangePassword)
	}
	bob, err := s.UserByName(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := auth.VerifyPassword(bob.PasswordHash, bobPW); !ok || bob.MustChangePassword {
		t.Errorf("bob: stdin password verifies=%v, must change=%v; want true, false", ok, bob.MustChangePassword)
	}

	r = mustFail(t, call{}, []string{`no role "Janitor"`, "Administrator", "Operator", "Viewer", "Backup reader"},
		"user", "create", "--data", data, "carol", "--role", "Janitor")
	mustFail(t, call{}, []string{"group 999", "not found"}, "user", "create", "--data", data, "dave", "--group", "999")
	mustFail(t, call{}, []string{`user "alice" already exists`}, "user", "create", "--data", data, "alice")
	mustFail(t, call{}, []string{`user "ALICE" already exists`}, "user", "create", "--data", data, "ALICE")
	mustFail(t, call{}, []string{"exclude each other"}, "user", "create", "--data", data, "erin", "--all-groups", "--group", gid)
	mustFail(t, call{stdin: "short\n"}, []string{"at least 10"}, "user", "create", "--data", data, "frank", "--password-stdin")

	rows = userList(t, data)
	for _, name := range []string{"carol", "dave", "erin", "frank", "ALICE"} {
		if _, ok := rows[name]; ok {
			t.Errorf("refused user %s was created", name)
		}
	}
	if len(rows) != 3 {
		t.Errorf("user list has %d users, want 3: %v", len(rows), rows)
	}
}

func TestUserPasswd(t *testing.T) {
	data := storeDir(t)
	const oldPW, newPW = "old-password-1", "new-password-2"
	mustRun(t, call{stdin: oldPW + "\n"}, "user", "create", "--data", data, "bob", "--password-stdin")
	verify := func(pw string) bool {
		s := openStore(t, data)
		u, err := s.UserByName(context.Background(), "bob")
		if err != nil {
			t.Fatal(err)
		}
		ok, err := auth.VerifyPassword(u.PasswordHash, pw)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	mustFail(t, call{stdin: "tooshort\n"}, []string{"at least 10"}, "user", "passwd", "--data", data, "bob")
	mustFail(t, call{stdin: ""}, []string{"at least 10"}, "user", "passwd", "--data", data, "bob")
	if !verify(oldPW) {
		t.Fatal("a refused passwd changed the password")
	}

	r := mustRun(t, call{stdin: newPW + "\r\nignored second line\n"}, "user", "passwd", "--data", data, "bob")
	if !strings.Contains(r.stderr, `password of "bob" changed`) {
		t.Errorf("passwd stderr: %s", r.stderr)
	}
	if !verify(newPW) || verify(oldPW) {
		t.Fatal("after passwd the new password must verify and the old one must not")
	}
	mustFail(t, call{stdin: newPW + "\n"}, []string{`no user "nobody"`}, "user", "passwd", "--data", data, "nobody")
}

// An administrator's reset ends the user's web sessions and, with
// --must-change, makes the user choose a new password at the next sign-in.
func TestUserPasswdResetEndsWebSessions(t *testing.T) {
	data := storeDir(t)
	mustRun(t, call{stdin: "first-password-1\n"}, "user", "create", "--data", data, "bob", "--password-stdin")
	withStore := func(fn func(s *db.Store, u db.User)) {
		t.Helper()
		s := openStore(t, data)
		u, err := s.UserByName(context.Background(), "bob")
		if err != nil {
			t.Fatal(err)
		}
		fn(s, u)
	}
	withStore(func(s *db.Store, u db.User) {
		if u.MustChangePassword {
			t.Fatal("a password given on stdin must not need changing")
		}
		now := time.Now().UTC()
		if err := s.CreateWebSession(context.Background(), db.WebSession{ID: "s1", UserID: u.ID, CSRFSecret: "x",
			CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	})
	mustRun(t, call{stdin: "reset-password-2\n"}, "user", "passwd", "--data", data, "bob", "--must-change")
	withStore(func(s *db.Store, u db.User) {
		if !u.MustChangePassword {
			t.Error("--must-change did not mark the password for change")
		}
		if _, err := s.WebSessionByID(context.Background(), "s1"); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("bob's web session survived the reset: %v", err)
		}
	})
	mustRun(t, call{stdin: "own-password-3\n"}, "user", "passwd", "--data", data, "bob")
	withStore(func(s *db.Store, u db.User) {
		if u.MustChangePassword {
			t.Error("passwd without --must-change left the change pending")
		}
	})
}

func TestEnvironmentSetsFlags(t *testing.T) {
	// Without flag or variable, the data directory is ./data.
	def := t.TempDir()
	mustRun(t, call{dir: def}, "key", "create", "--name", "default")
	if _, err := os.Stat(filepath.Join(def, "data", db.FileName)); err != nil {
		t.Fatalf("default ./data not used: %v", err)
	}

	work := t.TempDir()
	data := filepath.Join(t.TempDir(), "from-env")
	r := mustRun(t, call{dir: work, env: []string{"BACKUPD_DATA=" + data}}, "key", "create", "--name", "x")
	if !keyLine.MatchString(r.stdout) {
		t.Fatalf("stdout %q", r.stdout)
	}
	for _, f := range []string{db.FileName, "secret.key"} {
		if _, err := os.Stat(filepath.Join(data, f)); err != nil {
			t.Errorf("BACKUPD_DATA dir lacks %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "data")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the default ./data was used although BACKUPD_DATA was set (%v)", err)
	}

	// A flag beats the environment.
	flagData := filepath.Join(t.TempDir(), "from-flag")
	mustRun(t, call{dir: work, env: []string{"BACKUPD_DATA=" + data}}, "key", "create", "--name", "y", "--data", flagData)
	if _, err := os.Stat(filepath.Join(flagData, db.FileName)); err != nil {
		t.Errorf("--data was ignored in favour of BACKUPD_DATA: %v", err)
	}

	// Command flags come from the environment too.
	r = mustRun(t, call{env: []string{"BACKUPD_DATA=" + data, "BACKUPD_NAME=named-by-env"}}, "key", "create")
	if !keyLine.MatchString(r.stdout) || !strings.Contains(r.stderr, `"named-by-env"`) {
		t.Errorf("BACKUPD_NAME did not set --name:\n%s", r)
	}
	mustFail(t, call{env: []string{"BACKUPD_DATA=" + data, "BACKUPD_PERMISSION=groups.view,bogus.y"}}, []string{"bogus.y"}, "key", "create", "--name", "z")
}

func TestMigrateStatusAndVersion(t *testing.T) {
	data := t.TempDir()
	fresh := mustRun(t, call{}, "migrate", "status", "--data", filepath.Join(t.TempDir(), "empty"))
	if !strings.Contains(fresh.stdout, "00001") || !strings.Contains(fresh.stdout, "pending") {
		t.Errorf("migrate status on an empty data dir does not show 00001 pending:\n%s", fresh)
	}
	createKey(t, data, "--name", "x")
	r := mustRun(t, call{}, "migrate", "status", "--data", data)
	var line string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "00001") {
			line = l
		}
	}
	if !strings.Contains(line, "applied") {
		t.Errorf("migrate status does not list 00001 as applied:\n%s", r.stdout)
	}
	up := mustRun(t, call{}, "migrate", "up", "--data", data)
	if !strings.Contains(up.stdout, "schema is current") {
		t.Errorf("migrate up on a current schema: %s", up.stdout)
	}
	mustFail(t, call{}, nil, "migrate", "sideways", "--data", data)

	v := mustRun(t, call{}, "version")
	if !strings.HasPrefix(v.stdout, "backupd ") {
		t.Errorf("version stdout %q does not start with \"backupd \"", v.stdout)
	}
}

func TestBackupReaderKeyCannotListGroups(t *testing.T) {
	data := storeDir(t)
	createKey(t, data, "--name", "bootstrap")
	mustRun(t, call{stdin: "reader-password-1\n"}, "user", "create", "--data", data, "rita", "--role", "Backup reader", "--all-groups", "--password-stdin")
	key, _ := createKey(t, data, "--user", "rita", "--name", "reader")
	srv := startServe(t, data)
	expectError(t, srv.do(t, http.MethodGet, "/api/v1/groups", key, ""), http.StatusForbidden, "PERMISSION_DENIED")
	expectError(t, srv.do(t, http.MethodPost, "/api/v1/groups", key, `{"name":"x"}`), http.StatusForbidden, "PERMISSION_DENIED")

	// Promoting rita's role takes effect on her existing key at once.
	s := openStore(t, data)
	if _, err := dbtest.Poke(t, s).ExecContext(context.Background(),
		`UPDATE user_roles SET role_id = (SELECT id FROM roles WHERE name = 'Viewer') WHERE user_id = (SELECT id FROM users WHERE username = 'rita')`); err != nil {
		t.Fatal(err)
	}
	expectGroupPage(t, srv.do(t, http.MethodGet, "/api/v1/groups", key, ""))
}
