package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/internal/testkit"
)

// Configurations of the config command tests. r1's two versions end
// without a newline and with one, and hold non-ASCII text and a CR, so
// that byte-for-byte output shows.
const (
	cfgR1Old = "hostname r1\r\nbanner motd ^Café ✓^\nntp server 10.0.0.1\n!\nend\n"
	cfgR1New = "hostname r1\r\nbanner motd ^Café ✓^\nntp server 10.0.0.2\n!\nend"
	// sw1 changes only in an IOS noise line.
	cfgSW1Old = "hostname sw1\nntp clock-period 17179\nntp server 10.0.0.1\n"
	cfgSW1New = "hostname sw1\nntp clock-period 17180\nntp server 10.0.0.1\n"
)

// configFleet is a data directory holding, through the store:
// groups Core > Core-East and Branch; r1 (Core-East) with the history
// b[0] old, b[1] old again, b[2] failed, b[3] new, b[4] new again; sw1
// (Branch) with a noise-only change; "1", a device named like r1's ID;
// and empty, with no backup. The store stays open, as a server's would.
type configFleet struct {
	data string
	// db is --db: "" (SQLite in data) or the PostgreSQL URL of the store
	// when the suite runs on PostgreSQL.
	db     string
	store  *db.Store
	r1, sw *db.Device
	b      []db.Backup
	sw1    []db.Backup
}

func day(d int) time.Time { return time.Date(2026, 11, d, 10, 0, 0, 0, time.UTC) }

func newConfigFleet(t *testing.T) configFleet {
	t.Helper()
	ctx := context.Background()
	store, _, _ := testkit.OpenData(t)
	f := configFleet{data: filepath.Dir(store.Path()), store: store}
	if store.Postgres() {
		f.data, f.db = t.TempDir(), store.Location()
		// A node's data directory holds the key secrets are masked with.
		if _, err := secret.LoadOrCreate(f.data); err != nil {
			t.Fatal(err)
		}
	}
	core, err := store.CreateGroup(ctx, "Core", nil)
	if err != nil {
		t.Fatal(err)
	}
	east, err := store.CreateGroup(ctx, "Core-East", &core.ID)
	if err != nil {
		t.Fatal(err)
	}
	branch, err := store.CreateGroup(ctx, "Branch", nil)
	if err != nil {
		t.Fatal(err)
	}
	device := func(name string, group *int64) *db.Device {
		d, err := store.CreateDevice(ctx, db.Device{Name: name, Host: "192.0.2.1", Port: 22, Platform: "cisco_ios",
			LoginMethod: "ssh", GroupID: group, Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		return &d
	}
	f.r1 = device("r1", &east.ID)
	f.sw = device("sw1", &branch.ID)
	one := device("1", nil)
	device("empty", nil)
	if f.r1.ID != 1 {
		t.Fatalf("r1 has ID %d; the name/ID test needs 1", f.r1.ID)
	}
	f.b = []db.Backup{
		addBackup(t, store, f.r1.ID, day(20), cfgR1Old, ""),
		addBackup(t, store, f.r1.ID, day(21), cfgR1Old, ""),
		addBackup(t, store, f.r1.ID, day(22), "", "connection timed out"),
		addBackup(t, store, f.r1.ID, day(23), cfgR1New, ""),
		addBackup(t, store, f.r1.ID, day(24), cfgR1New, ""),
	}
	f.sw1 = []db.Backup{
		addBackup(t, store, f.sw.ID, day(20), cfgSW1Old, ""),
		addBackup(t, store, f.sw.ID, day(21), cfgSW1New, ""),
	}
	addBackup(t, store, one.ID, day(20), "hostname one\n", "")
	return f
}

// addBackup stores one finished attempt: a version holding text, or a
// failure with message fail.
func addBackup(t *testing.T, store *db.Store, device int64, at time.Time, text, fail string) db.Backup {
	t.Helper()
	ctx := context.Background()
	done := at.Add(5 * time.Second)
	b := db.Backup{ID: uuid.NewString(), DeviceID: device, StartedAt: at, FinishedAt: &done, Trigger: queue.TriggerSchedule}
	if fail != "" {
		b.ErrorMessage = &fail
	} else {
		hash, err := store.PutSnapshot(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		b.Success, b.SnapshotHash = true, &hash
	}
	if err := store.InsertBackup(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// wantFail checks a run ended with code and a one-line error naming want.
func wantFail(t *testing.T, r result, code int, want string) {
	t.Helper()
	if r.code != code || !strings.Contains(r.stderr, want) || r.stdout != "" {
		t.Fatalf("want exit %d, no output and an error with %q:\n%s", code, want, r)
	}
	if lines := strings.Count(strings.TrimSpace(r.stderr), "\n") + 1; lines != 1 || strings.Contains(r.stderr, "goroutine") {
		t.Fatalf("want a one-line error:\n%s", r)
	}
}

func TestConfigShow(t *testing.T) {
	f := newConfigFleet(t)
	utc := call{env: []string{"TZ=UTC"}}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"latest by name", []string{"r1"}, cfgR1New},
		{"name in another case", []string{"R1"}, cfgR1New},
		{"latest by ID", []string{"1"}, cfgR1New},
		{"a numeric name with --name", []string{"--name", "1"}, "hostname one\n"},
		{"version", []string{"r1", "--version", f.b[0].ID}, cfgR1Old},
		{"at, after a failure", []string{"r1", "--at", "2026-11-22T12:00:00Z"}, cfgR1Old},
		{"at, RFC 3339 with an offset", []string{"r1", "--at", "2026-11-23T11:00:00+01:00"}, cfgR1New},
		{"at, local time", []string{"r1", "--at", "2026-11-23 09:59"}, cfgR1Old},
		{"at, local time at the start of a backup", []string{"r1", "--at", "2026-11-23 10:00"}, cfgR1New},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRun(t, utc, append([]string{"config", "show", "--data", f.data, "--db", f.db}, tc.args...)...)
			if r.stdout != tc.want {
				t.Fatalf("want the stored text byte for byte\n%q\ngot\n%q", tc.want, r.stdout)
			}
		})
	}
	// --at is read in the local zone.
	r := mustRun(t, call{env: []string{"TZ=Asia/Shanghai"}}, "config", "show", "--data", f.data, "--db", f.db, "r1", "--at", "2026-11-23 17:59")
	if r.stdout != cfgR1Old {
		t.Fatalf("17:59 in Shanghai is 09:59 UTC, before the change:\n%s", r)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown device", []string{"nosuch"}, `no device with the name or ID "nosuch"`},
		{"unknown name with --name", []string{"--name", "2"}, `no device named "2"`},
		{"no backups", []string{"empty"}, "device empty has no successful backup yet"},
		{"before the first backup", []string{"r1", "--at", "2026-11-01 00:00"}, "no successful backup started at or before 2026-11-01T00:00:00Z"},
		{"bad time", []string{"r1", "--at", "yesterday"}, `--at "yesterday": want RFC 3339`},
		{"unknown version", []string{"r1", "--version", "0b0e2d55-0000-4000-8000-000000000000"}, `no backup with the ID "0b0e2d55-0000-4000-8000-000000000000"`},
		{"another device's version", []string{"r1", "--version", f.sw1[0].ID}, "is a version of device sw1 (ID 2), not of r1 (ID 1)"},
		{"a failed backup", []string{"r1", "--version", f.b[2].ID}, "holds no configuration (it failed: connection timed out)"},
		{"both --version and --at", []string{"r1", "--version", f.b[0].ID, "--at", "2026-11-22 00:00"}, "none of the others can be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantFail(t, run(t, utc, append([]string{"config", "show", "--data", f.data, "--db", f.db}, tc.args...)...), 1, tc.want)
		})
	}
	// A directory without a database is not given one.
	empty := t.TempDir()
	if err := os.Chmod(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	wantFail(t, run(t, utc, "config", "show", "--data", empty, "r1"), 1, "no database in "+empty)
	if _, err := os.Stat(filepath.Join(empty, db.FileName)); !os.IsNotExist(err) {
		t.Fatalf("config show created a database: %v", err)
	}
}

func TestConfigDiff(t *testing.T) {
	f := newConfigFleet(t)
	diff := func(args ...string) result {
		return run(t, call{}, append([]string{"config", "diff", "--data", f.data, "--db", f.db}, args...)...)
	}

	// By default: the version before the last change (b[1], the newest
	// backup of the old text) against the latest (b[4]).
	r := diff("r1")
	want := "--- r1\t2026-11-21 10:00:00.000 UTC\n+++ r1\t2026-11-24 10:00:00.000 UTC\n" +
		"@@ -1,5 +1,5 @@\n hostname r1\r\n banner motd ^Café ✓^\n-ntp server 10.0.0.1\n+ntp server 10.0.0.2\n !\n-end\n+end\n\\ No newline at end of file\n"
	if r.code != 1 || r.stdout != want {
		t.Fatalf("want exit 1 and the unified diff\n%q\n%s", want, r)
	}
	// One version: it against the latest; two: the first against the second.
	if r := diff("r1", f.b[0].ID); r.code != 1 || r.stdout != strings.Replace(want, "2026-11-21", "2026-11-20", 1) {
		t.Fatalf("A against the latest:\n%s", r)
	}
	if r := diff("r1", f.b[3].ID, f.b[0].ID); r.code != 1 || !strings.Contains(r.stdout, "-ntp server 10.0.0.2\n+ntp server 10.0.0.1\n") {
		t.Fatalf("A against B, in that order:\n%s", r)
	}
	for _, args := range [][]string{{"r1", f.b[0].ID, f.b[1].ID}, {"r1", f.b[3].ID}, {"1", f.b[4].ID, f.b[3].ID}} {
		if r := diff(args...); r.code != 0 || r.stdout != "" {
			t.Fatalf("same text: want exit 0 and no output:\n%s", r)
		}
	}
	if r := diff("--name", "1"); r.code != 0 || !strings.Contains(r.stderr, "one configuration only") {
		t.Fatalf("a device with a single version has no differences:\n%s", r)
	}

	// Noise: sw1 changed in its clock period only. The diff shows it (the
	// texts differ), dimmed in colour; --no-noise finds no difference.
	r = diff("sw1")
	if r.code != 1 || !strings.Contains(r.stdout, "-ntp clock-period 17179\n+ntp clock-period 17180\n") ||
		!strings.Contains(r.stderr, "2 changed line(s) are noise") {
		t.Fatalf("a noise change is still a difference of the texts:\n%s", r)
	}
	r = diff("sw1", "--color", "always")
	if r.code != 1 || !strings.Contains(r.stdout, "\x1b[2m-ntp clock-period 17179\x1b[0m\n\x1b[2m+ntp clock-period 17180\x1b[0m\n") {
		t.Fatalf("want the noise lines dimmed:\n%q", r.stdout)
	}
	if r := diff("r1", "--color", "always"); !strings.Contains(r.stdout, "\x1b[31m-ntp server 10.0.0.1\x1b[0m\n\x1b[32m+ntp server 10.0.0.2\x1b[0m\n") {
		t.Fatalf("want real changes in red and green:\n%q", r.stdout)
	}
	if r := diff("sw1", "--no-noise"); r.code != 0 || r.stdout != "" {
		t.Fatalf("--no-noise: a noise-only change is no difference:\n%s", r)
	}
	if r := diff("r1", "--no-noise"); r.code != 1 || r.stdout != want {
		t.Fatalf("--no-noise keeps real changes:\n%s", r)
	}

	// Trouble is 2, never 1 (which means "differences").
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, `no device with the name or ID "nosuch"`},
		{[]string{"empty"}, "device empty has no successful backup yet"},
		{[]string{"r1", f.sw1[0].ID}, "is a version of device sw1"},
		{[]string{"r1", f.b[2].ID}, "holds no configuration"},
		{[]string{"r1", "a", "b", "c"}, "accepts between 1 and 3 arg(s)"},
		{[]string{"r1", "--color", "pink"}, `--color "pink"`},
		{[]string{"r1", "--bogus"}, "unknown flag: --bogus"},
	} {
		wantFail(t, diff(tc.args...), 2, tc.want)
	}
}

func TestConfigSearch(t *testing.T) {
	f := newConfigFleet(t)
	search := func(args ...string) result {
		return run(t, call{}, append([]string{"config", "search", "--data", f.data, "--db", f.db}, args...)...)
	}
	r := search(`ntp server 10\.0\.0\.[12]`)
	if want := "r1:3:ntp server 10.0.0.2\nsw1:3:ntp server 10.0.0.1\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("want device:line:text of the latest versions\n%q\n%s", want, r)
	}
	// A group takes its subgroups: r1 is in Core-East under Core.
	for _, g := range []string{"Core", "core", "1"} {
		if r := search("NTP SERVER", "--group", g); r.code != 0 || r.stdout != "r1:3:ntp server 10.0.0.2\n" {
			t.Fatalf("--group %s: want r1 only (case ignored):\n%s", g, r)
		}
	}
	if r := search("ntp server", "--group", "Branch"); r.code != 0 || r.stdout != "sw1:3:ntp server 10.0.0.1\n" {
		t.Fatalf("--group Branch: want sw1 only:\n%s", r)
	}
	if r := search("^banner.*✓", "--case-sensitive"); r.code != 0 || r.stdout != "r1:2:banner motd ^Café ✓^\n" {
		t.Fatalf("want the text as stored, decoded:\n%s", r)
	}
	if r := search("10.0.0.1", "-F"); r.code != 0 || r.stdout != "sw1:3:ntp server 10.0.0.1\n" {
		t.Fatalf("--fixed-strings:\n%s", r)
	}
	// No match is 1; trouble is 2.
	if r := search("hostname r1", "--group", "Branch"); r.code != 1 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("no match: want exit 1 and nothing printed:\n%s", r)
	}
	wantFail(t, search("ntp("), 2, `bad regular expression "ntp(": missing closing ): `)
	wantFail(t, search("x*"), 2, "matches empty text")
	wantFail(t, search("ntp", "--group", "nosuch"), 2, `no group with the name or ID "nosuch"`)
	wantFail(t, search("ntp", "--limit", "0"), 2, "--limit must be 1 to 5000")
	r = search("ntp", "--limit", "1")
	if r.code != 0 || r.stdout != "r1:3:ntp server 10.0.0.2\n" || !strings.Contains(r.stderr, "stopped at 1 lines") {
		t.Fatalf("--limit 1:\n%s", r)
	}
}

// TestConfigWhileWriting reads while another connection holds the
// database's write lock, as a running server does during a backup: WAL
// readers do not wait for it.
func TestConfigWhileWriting(t *testing.T) {
	f := newConfigFleet(t)
	ctx := context.Background()
	locked, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	writer := dbtest.Poke(t, f.store)
	go func() {
		tx, err := writer.BeginTx(ctx, nil)
		if err == nil {
			_, err = tx.ExecContext(ctx, `UPDATE devices SET remarks = 'writing' WHERE id = ?`, f.sw.ID)
		}
		close(locked)
		if err != nil {
			done <- err
			return
		}
		<-release
		done <- tx.Commit()
	}()
	<-locked
	show := run(t, call{}, "config", "show", "--data", f.data, "--db", f.db, "r1")
	search := run(t, call{}, "config", "search", "--data", f.data, "--db", f.db, "hostname")
	diff := run(t, call{}, "config", "diff", "--data", f.data, "--db", f.db, "r1")
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if show.code != 0 || show.stdout != cfgR1New {
		t.Fatalf("show while a writer holds the database:\n%s", show)
	}
	if search.code != 0 || !strings.Contains(search.stdout, "r1:1:hostname r1\r\n") {
		t.Fatalf("search while a writer holds the database:\n%s", search)
	}
	if diff.code != 1 {
		t.Fatalf("diff while a writer holds the database:\n%s", diff)
	}
}
