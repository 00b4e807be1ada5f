package db_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"backupd/db"
	"backupd/db/queue"
	"backupd/db/seed"
)

// idTables are the tables whose ids leave the database (API, UI, audit
// log, other systems' records) and so must never be handed out twice.
var idTables = append(slices.Clone(idMigrationTables), "restores", "change_sets")

// idMigrationTables are the tables migration 00012 gave AUTOINCREMENT
// ids; later tables are created with them.
var idMigrationTables = []string{"roles", "device_groups", "users", "api_keys", "credentials", "templates", "devices", "jobs", "schedules"}

// idRowInserts add one row to each of idTables; %d makes the row unique.
// Rows that need a parent use the parents made by idParents.
var idRowInserts = map[string]string{
	"roles":         `INSERT INTO roles (name, created_at) VALUES ('role-%d', '2025-01-01T00:00:00')`,
	"device_groups": `INSERT INTO device_groups (name, path, depth, sort_order, created_at) VALUES ('group-%d', '/x/', 0, 0, '2025-01-01T00:00:00')`,
	"users":         `INSERT INTO users (username, password_hash, created_at, updated_at) VALUES ('user-%d', 'x', '2025-01-01T00:00:00', '2025-01-01T00:00:00')`,
	"api_keys":      `INSERT INTO api_keys (user_id, name, prefix, hash, created_at) VALUES ((SELECT MIN(id) FROM users), 'key', 'prefix-%d', ?, '2025-01-01T00:00:00')`,
	"credentials":   `INSERT INTO credentials (name, username, created_at, updated_at) VALUES ('credential-%d', 'u', '2025-01-01T00:00:00', '2025-01-01T00:00:00')`,
	"templates":     `INSERT INTO templates (name, platform, commands, created_at, updated_at) VALUES ('template-%d', 'cisco_ios', 'show run', '2025-01-01T00:00:00', '2025-01-01T00:00:00')`,
	"devices": `INSERT INTO devices (name, host, port, platform, login_method, created_at, updated_at)
		VALUES ('device-%d', '192.0.2.1', 22, 'cisco_ios', 'ssh', '2025-01-01T00:00:00', '2025-01-01T00:00:00')`,
	"jobs": `INSERT INTO jobs (device_id, trigger, state, not_before, created_at)
		VALUES ((SELECT MIN(id) FROM devices), 'manual', 'succeeded', '2025-01-01T00:00:00.000', '2025-01-01T00:00:00.%03d')`,
	"schedules": `INSERT INTO schedules (name, cron, created_at, updated_at) VALUES ('schedule-%d', '0 2 * * *', '2025-01-01T00:00:00', '2025-01-01T00:00:00')`,
	"restores": `INSERT INTO restores (device_id, target_backup_id, target_hash, method, state, requested_by_name, requested_at, updated_at)
		VALUES ((SELECT MIN(id) FROM devices), 'backup-%d', 'h', 'm', 'succeeded', 'a', '2025-01-01T00:00:00', '2025-01-01T00:00:00')`,
	"change_sets": `INSERT INTO change_sets (name, body, created_by_name, created_at, updated_at)
		VALUES ('set-%d', 'b', 'a', '2025-01-01T00:00:00', '2025-01-01T00:00:00')`,
}

func mustExec(t *testing.T, s *db.Store, query string, args ...any) sql.Result {
	t.Helper()
	res, err := s.Exec(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return res
}

// idRowArgs are the parameters of idRowInserts that have no literal
// spelling both engines read (a blob).
var idRowArgs = map[string][]any{"api_keys": {[]byte{0}}}

func insertID(t *testing.T, s *db.Store, query string, args ...any) int64 {
	t.Helper()
	id, err := s.InsertID(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return id
}

// A deleted row's id is never given to a new row, in any table whose ids
// leave the database, even when the deleted row had the highest id.
func TestIDsNeverReused(t *testing.T) {
	s := openStore(t)
	mustExec(t, s, fmt.Sprintf(idRowInserts["users"], 0))
	mustExec(t, s, fmt.Sprintf(idRowInserts["devices"], 0))
	for _, table := range idTables {
		t.Run(table, func(t *testing.T) {
			insertID(t, s, fmt.Sprintf(idRowInserts[table], 1), idRowArgs[table]...)
			last := insertID(t, s, fmt.Sprintf(idRowInserts[table], 2), idRowArgs[table]...)
			mustExec(t, s, `DELETE FROM `+table+` WHERE id = ?`, last)
			next := insertID(t, s, fmt.Sprintf(idRowInserts[table], 3), idRowArgs[table]...)
			if next <= last {
				t.Errorf("%s: new row got id %d after id %d was deleted; ids must only grow", table, next, last)
			}
		})
	}
}

// The same through the store's own calls, for the case the issue names: a
// deleted credential's id came back.
func TestDeletedCredentialIDNotReused(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	first, err := s.CreateCredential(ctx, db.Credential{Name: "lab", Username: "netops"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCredential(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	second, err := s.CreateCredential(ctx, db.Credential{Name: "lab", Username: "netops"})
	if err != nil {
		t.Fatal(err)
	}
	if second.ID <= first.ID {
		t.Fatalf("credential created after deleting id %d got id %d", first.ID, second.ID)
	}
}

// rawDB opens the database file directly, foreign keys on as the store
// has them.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	conn.SetMaxOpenConns(1)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func rawExec(t *testing.T, conn *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func rawInt(t *testing.T, conn *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n sql.NullInt64
	if err := conn.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n.Int64
}

// dumpRows returns every row of every table (search index shadow tables
// and the migration bookkeeping aside), each table's rows sorted.
func dumpRows(t *testing.T, conn *sql.DB) map[string][]string {
	t.Helper()
	tables := queryStrings(t, conn, `SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT IN ('sqlite_sequence', 'goose_db_version') AND name NOT LIKE 'devices_search%'`)
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := conn.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i, v := range vals {
				if i > 0 {
					b.WriteString(" | ")
				}
				fmt.Fprintf(&b, "%s=%T:%v", cols[i], v, v)
			}
			lines = append(lines, b.String())
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		sort.Strings(lines)
		out[table] = lines
	}
	return out
}

func queryStrings(t *testing.T, conn *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := conn.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

var (
	sqlComment = regexp.MustCompile(`--[^\n]*`)
	sqlSpace   = regexp.MustCompile(`\s+`)
	sqlPunct   = regexp.MustCompile(`\s*([(),;])\s*`)
	// ALTER TABLE ... RENAME writes the new name quoted.
	sqlQuotedTable = regexp.MustCompile(`^CREATE TABLE "(\w+)"`)
)

// schemaOf is every schema object's SQL, comments and layout removed, by
// type and name.
func schemaOf(t *testing.T, conn *sql.DB) map[string]string {
	t.Helper()
	rows, err := conn.Query(`SELECT type, name, COALESCE(sql, '') FROM sqlite_master WHERE name != 'sqlite_sequence'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			t.Fatal(err)
		}
		text = sqlComment.ReplaceAllString(text, "")
		text = sqlSpace.ReplaceAllString(strings.TrimSpace(text), " ")
		text = sqlQuotedTable.ReplaceAllString(text, "CREATE TABLE $1")
		out[typ+" "+name] = sqlPunct.ReplaceAllString(text, "$1")
	}
	return out
}

func diffSchema(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s is missing", what, k)
		} else if g != w {
			t.Errorf("%s: %s differs:\n got  %s\n want %s", what, k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s", what, k)
		}
	}
}

func checkStore(t *testing.T, dir string) {
	t.Helper()
	s, err := db.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	problems, err := s.Check(context.Background())
	if err != nil || len(problems) != 0 {
		t.Fatalf("db check: %v %v", problems, err)
	}
}

// A database written by the previous release (schema 00011), with rows in
// every table and children referencing their parents, keeps every row, id
// and reference through the upgrade; the schema is what it was except for
// AUTOINCREMENT; indexes, the search index and the triggers behave as
// before; and rolling back restores the old schema exactly.
func TestIDsMigrationKeepsEverything(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, db.FileName)
	if err := db.MigrateTo(ctx, path, 11); err != nil {
		t.Fatal(err)
	}
	if err := db.SeedFile(ctx, path, seed.Options{Devices: 40, BackupsPerDevice: 6, RootGroups: 3, ChildGroups: 3, Snapshots: 5, RandomSeed: 7}); err != nil {
		t.Fatal(err)
	}
	conn := rawDB(t, path)
	now := "2025-06-01T00:00:00"
	rawExec(t, conn, `INSERT INTO templates (id, name, platform, commands, created_at, updated_at) VALUES
		(1, 'ios', 'cisco_ios', 'show running-config', ?, ?), (2, 'eos', 'arista_eos', 'show running-config', ?, ?)`, now, now, now, now)
	rawExec(t, conn, `UPDATE devices SET template_id = 2, pending_host_key = x'0102', host_key = x'0304' WHERE id % 7 = 0`)
	rawExec(t, conn, `INSERT INTO roles (id, name, created_at) VALUES (1, 'admin', ?), (2, 'viewer', ?)`, now, now)
	rawExec(t, conn, `INSERT INTO role_permissions (role_id, permission) VALUES (1, 'devices.read'), (2, 'devices.read'), (2, 'backups.read')`)
	rawExec(t, conn, `INSERT INTO users (id, username, password_hash, created_at, updated_at) VALUES (1, 'admin', 'h', ?, ?), (2, 'ops', 'h', ?, ?)`, now, now, now, now)
	rawExec(t, conn, `INSERT INTO user_roles (user_id, role_id) VALUES (1, 1), (2, 2)`)
	rawExec(t, conn, `INSERT INTO user_groups (user_id, group_id) SELECT 2, id FROM device_groups WHERE parent_id IS NULL`)
	rawExec(t, conn, `INSERT INTO api_keys (id, user_id, name, prefix, hash, narrowed, created_at) VALUES
		(1, 1, 'ci', 'bk_aaaa', x'00', 0, ?), (2, 2, 'ro', 'bk_bbbb', x'01', 1, ?)`, now, now)
	rawExec(t, conn, `INSERT INTO api_key_permissions (key_id, permission) VALUES (2, 'devices.read')`)
	rawExec(t, conn, `INSERT INTO web_sessions (id, user_id, csrf_secret, created_at, last_seen_at, expires_at) VALUES ('s1', 2, 'c', ?, ?, ?)`, now, now, now)
	rawExec(t, conn, `INSERT INTO jobs (device_id, trigger, state, attempt, not_before, created_at, backup_id, cancel_requested)
		SELECT device_id, trigger, 'succeeded', 1, started_at, started_at, id, 0 FROM backups WHERE rowid % 3 = 0`)
	rawExec(t, conn, `INSERT INTO jobs (device_id, trigger, state, not_before, created_at) VALUES (5, 'manual', 'queued', ?, ?)`, now, now)
	rawExec(t, conn, `INSERT INTO schedules (id, name, cron, target, target_ids, created_at, updated_at) VALUES (1, 'nightly', '0 2 * * *', 'groups', '[1]', ?, ?)`, now, now)
	// Ids handed out and deleted before the upgrade, which only the audit
	// log remembers: credential 9 (the highest ever) and device 1000.
	rawExec(t, conn, `INSERT INTO audit_log (at, username, interface, action, target_type, target_id) VALUES
		(?, 'admin', 'api', 'credential.create', 'credential', '9'), (?, 'admin', 'api', 'credential.delete', 'credential', '9'),
		(?, 'admin', 'ui', 'device.delete', 'device', '1000'), (?, 'admin', 'ui', 'devices.import', 'device', ''),
		(?, 'admin', 'ui', 'settings.update', 'settings', 'retention'), (?, 'admin', 'api', 'odd', 'template', '99999999999999999999')`,
		now, now, now, now, now, now)

	maxIDs := map[string]int64{}
	for _, table := range idMigrationTables {
		maxIDs[table] = rawInt(t, conn, `SELECT MAX(id) FROM `+table)
	}
	if maxIDs["devices"] != 40 || maxIDs["jobs"] < 50 || maxIDs["device_groups"] != 12 {
		t.Fatalf("seeded too little: %v", maxIDs)
	}
	before := dumpRows(t, conn)
	schemaBefore := schemaOf(t, conn)
	if len(before["backups"]) != 240 || len(before["snapshots"]) == 0 || len(before["user_groups"]) == 0 {
		t.Fatalf("seeded too little: %d backups", len(before["backups"]))
	}
	conn.Close()

	// The upgrade under test is 00012; later migrations change the schema
	// on their own account (opening the store below applies them).
	if err := db.MigrateTo(ctx, path, 12); err != nil {
		t.Fatal(err)
	}
	conn = rawDB(t, path)
	after := dumpRows(t, conn)
	for table, rows := range before {
		if strings.Join(rows, "\n") != strings.Join(after[table], "\n") {
			t.Errorf("table %s changed in the upgrade: %d rows before, %d after", table, len(rows), len(after[table]))
		}
	}
	if len(after) != len(before) {
		t.Errorf("tables before %d, after %d", len(before), len(after))
	}

	// The schema is the old one, AUTOINCREMENT added to the id tables.
	want := map[string]string{}
	for k, v := range schemaBefore {
		want[k] = v
	}
	for _, table := range idMigrationTables {
		want["table "+table] = strings.Replace(want["table "+table], "id INTEGER PRIMARY KEY,", "id INTEGER PRIMARY KEY AUTOINCREMENT,", 1)
		if !strings.Contains(want["table "+table], "AUTOINCREMENT") {
			t.Fatalf("%s: no plain id column in %s", table, want["table "+table])
		}
	}
	diffSchema(t, "after upgrade", schemaOf(t, conn), want)

	// Each sequence starts at the highest id the table or the audit log
	// has seen.
	wantSeq := map[string]int64{}
	for k, v := range maxIDs {
		wantSeq[k] = v
	}
	wantSeq["credentials"], wantSeq["devices"] = 9, 1000
	for _, table := range idMigrationTables {
		if got := rawInt(t, conn, `SELECT seq FROM sqlite_sequence WHERE name = ?`, table); got != wantSeq[table] {
			t.Errorf("sqlite_sequence for %s = %d, want %d", table, got, wantSeq[table])
		}
	}
	if n := rawInt(t, conn, `SELECT COUNT(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Errorf("%d foreign key violations after the upgrade", n)
	}
	if got := queryStrings(t, conn, `PRAGMA integrity_check`); len(got) != 1 || got[0] != "ok" {
		t.Errorf("integrity_check: %v", got)
	}
	rawExec(t, conn, `INSERT INTO devices_search(devices_search) VALUES ('integrity-check')`)
	conn.Close()

	checkStore(t, dir)
	s, err := db.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn = s.Reader()

	// New rows continue above everything seen.
	if c, err := s.CreateCredential(ctx, db.Credential{Name: "after", Username: "u"}); err != nil || c.ID != 10 {
		t.Errorf("first credential after the upgrade: id %d, %v; want 10", c.ID, err)
	}
	dev := retDevice(t, s, "after-upgrade")
	if dev != 1001 {
		t.Errorf("first device after the upgrade got id %d, want 1001", dev)
	}

	// The triggers kept on backups still maintain devices and counters.
	counters := func() map[string]int64 {
		out := map[string]int64{}
		for _, name := range []string{"backups_total", "backups_succeeded", "backups_succeeded_ever", "backups_changed_ever"} {
			out[name] = rawInt(t, conn, `SELECT value FROM counters WHERE name = ?`, name)
		}
		return out
	}
	lastGood := func(id int64) string {
		var at sql.NullString
		if err := conn.QueryRow(`SELECT last_good_backup_at FROM devices WHERE id = ?`, id).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at.String
	}
	const seeded = int64(3)
	oldGood := lastGood(seeded)
	if oldGood == "" {
		t.Fatal("seeded device 3 has no good backup")
	}
	c0 := counters()
	started := time.Now().UTC().Truncate(time.Millisecond)
	finished := started.Add(time.Second)
	hash, err := s.PutSnapshot(ctx, "hostname after-upgrade\n")
	if err != nil {
		t.Fatal(err)
	}
	b := db.Backup{ID: uuid.NewString(), DeviceID: seeded, StartedAt: started, FinishedAt: &finished,
		Success: true, Changed: true, SnapshotHash: &hash, Trigger: queue.TriggerManual}
	if err := s.InsertBackup(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got, want := lastGood(seeded), started.Format(db.BackupTimeFormat); got != want {
		t.Errorf("last_good_backup_at after a good backup = %q, want %q", got, want)
	}
	c1 := counters()
	for name, v := range c0 {
		if c1[name] != v+1 {
			t.Errorf("counter %s went %d -> %d, want +1", name, v, c1[name])
		}
	}
	if _, err := s.Exec(ctx, `DELETE FROM backups WHERE id = ?`, b.ID); err != nil {
		t.Fatal(err)
	}
	if got := lastGood(seeded); got != oldGood {
		t.Errorf("last_good_backup_at after deleting the newest good backup = %q, want %q", got, oldGood)
	}

	// The search index follows inserts, renames and deletes.
	search := func(q string) []string {
		return queryStrings(t, conn, `SELECT rowid FROM devices_search WHERE devices_search MATCH ?`, `"`+q+`"`)
	}
	if got := search("after-upgrade"); len(got) != 1 || got[0] != "1001" {
		t.Errorf("search for the new device: %v", got)
	}
	if _, err := s.Exec(ctx, `UPDATE devices SET name = 'renamed-now' WHERE id = 1001`); err != nil {
		t.Fatal(err)
	}
	if got := search("renamed-now"); len(got) != 1 || len(search("after-upgrade")) != 0 {
		t.Errorf("search after rename: %v", got)
	}
	seededName := queryStrings(t, conn, `SELECT name FROM devices WHERE id = ?`, seeded)[0]
	if got := search(seededName); len(got) != 1 || got[0] != "3" {
		t.Errorf("search for a device from before the upgrade: %v", got)
	}

	// Foreign keys act again: deleting a device takes its history and
	// jobs with it, deleting a user its keys and sessions.
	if err := s.DeleteDevice(ctx, seeded); err != nil {
		t.Fatal(err)
	}
	if n := rawInt(t, conn, `SELECT COUNT(*) FROM backups WHERE device_id = ?`, seeded) + rawInt(t, conn, `SELECT COUNT(*) FROM jobs WHERE device_id = ?`, seeded); n != 0 {
		t.Errorf("%d backups and jobs left of a deleted device", n)
	}
	if len(search(seededName)) != 0 {
		t.Error("a deleted device is still found by search")
	}
	if _, err := s.Exec(ctx, `DELETE FROM users WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	if n := rawInt(t, conn, `SELECT (SELECT COUNT(*) FROM api_keys WHERE user_id = 2) + (SELECT COUNT(*) FROM web_sessions WHERE user_id = 2)
		+ (SELECT COUNT(*) FROM api_key_permissions WHERE key_id = 2) + (SELECT COUNT(*) FROM user_groups WHERE user_id = 2)`); n != 0 {
		t.Errorf("%d rows left of a deleted user", n)
	}
	if _, err := s.Exec(ctx, `DELETE FROM device_groups WHERE id = 1`); err == nil {
		t.Error("deleting a group that devices are in was allowed")
	}
	s.Close()
	checkStore(t, dir)

	// Rolling back gives the old schema exactly, the rows kept.
	if err := db.MigrateDownTo(ctx, path, 11); err != nil {
		t.Fatal(err)
	}
	conn = rawDB(t, path)
	diffSchema(t, "after rollback", schemaOf(t, conn), schemaBefore)
	if n := rawInt(t, conn, `SELECT COUNT(*) FROM sqlite_sequence WHERE name != 'goose_db_version'`); n != 0 {
		t.Errorf("%d sequences left after rollback", n)
	}
	if n := rawInt(t, conn, `SELECT COUNT(*) FROM backups`); n != 240-6 {
		t.Errorf("%d backups after rollback, want %d", n, 240-6)
	}
	if n := rawInt(t, conn, `SELECT COUNT(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Errorf("%d foreign key violations after rollback", n)
	}
	conn.Close()
	checkStore(t, dir)
}
