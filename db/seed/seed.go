// Package seed fills an empty store with a synthetic but realistic
// inventory and a year of history, for demos, benchmarks and load tests
// (backupd db seed). It writes the rows directly, in bulk, below package
// db: the counters and search index are kept by the schema's triggers as
// for any insert.
package seed

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"backupd/db/engine"
	"backupd/db/queue"
	"backupd/db/snapstore"

	"github.com/google/uuid"
)

// Options sizes the inventory Fill builds. Zero fields take the
// defaults noted beside them.
type Options struct {
	Devices          int // default 100
	BackupsPerDevice int // default 10
	RootGroups       int // default 10
	ChildGroups      int // children under each root group, default 10
	// Snapshots is how many distinct configuration texts (20-60 KB each)
	// the successful backups share; default 300.
	Snapshots int
	// Now is the newest end of the history, which spans the year before
	// it; default the current time.
	Now time.Time
	// RandomSeed picks the data: the same options give the same rows,
	// backup ids included.
	RandomSeed uint64
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Devices, 100)
	def(&o.BackupsPerDevice, 10)
	def(&o.RootGroups, 10)
	def(&o.ChildGroups, 10)
	def(&o.Snapshots, 300)
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Now = o.Now.UTC()
	return o
}

// ErrNotEmpty is returned by Fill when the database already holds devices.
var ErrNotEmpty = errors.New("database already holds devices")

// backupColumns are the backups table's columns, as written.
const backupColumns = `id, device_id, started_at, finished_at, success, error_message, snapshot_hash, trigger, changed, first_backup, duration_ms, bytes`

func backupTime(t time.Time) string { return t.UTC().Format(engine.BackupTimeFormat) }

// The devices' statuses, as db.Status* spell them (TestSeed reads them
// back through the store).
const (
	statusUnknown     = "unknown"
	statusReachable   = "reachable"
	statusUnreachable = "unreachable"
)

// seedSpan is how far back the seeded history reaches.
const seedSpan = 365 * 24 * time.Hour

// Platforms are the driver platform IDs the devices get, the common ones
// repeated so the mix looks like a real estate. A test checks that each
// is a built-in platform.
var Platforms = []string{
	"cisco_ios", "cisco_ios", "cisco_ios", "cisco_xe", "cisco_nxos", "arista_eos", "juniper_junos",
	"huawei_vrp", "h3c_comware", "hp_procurve", "aruba_aoscx", "fortinet", "mikrotik_routeros", "dell_os10",
}

var seedErrors = []string{
	"dial tcp: i/o timeout",
	"ssh: handshake failed: ssh: unable to authenticate, attempted methods [none password], no supported methods remain",
	"dial tcp: connect: connection refused",
	"prompt not seen within 30s",
	"enable password rejected",
	"read: connection reset by peer",
}

// Fill fills the empty store on e with a synthetic but realistic inventory,
// for demos, benchmarks and load tests: a tree of groups (roots with
// children), one credential without secrets, devices spread over the
// groups with mixed platforms, login methods and enabled flags, and a
// year of scheduled backups per device. About 5% of the attempts fail;
// the rest point at a few hundred distinct configuration texts, with a
// changed configuration on a few percent of them (a device's first
// version is its first backup, not a change). Each device's status and
// last-backup fields follow its newest attempt, its last-changed time
// its newest change.
//
// Everything is written in one transaction with prepared multi-row
// INSERTs on the writer connection, with a page cache big enough that the
// random-order indexes stay in memory; the counter triggers fire as for
// any insert, so the counters are exact. 10,000 devices × 100 backups
// take well under a minute.
func Fill(ctx context.Context, e *engine.DB, opt Options) error {
	conn, err := e.Writer.Conn(ctx)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	defer conn.Close()
	if e.Postgres() {
		return fillPostgres(ctx, conn, opt)
	}
	// While seeding: 256 MiB of page cache, so that the indexes written in
	// random order stay in memory, and statement journals in memory rather
	// than in a temporary file (every multi-row INSERT writes one). The
	// connection gets its own settings back afterwards.
	for _, p := range []struct{ name, value string }{{"cache_size", "-262144"}, {"temp_store", "MEMORY"}} {
		var old string
		if err := conn.QueryRowContext(ctx, `PRAGMA `+p.name).Scan(&old); err != nil {
			return fmt.Errorf("seed: read %s: %w", p.name, err)
		}
		if _, err := conn.ExecContext(ctx, `PRAGMA `+p.name+` = `+p.value); err != nil {
			return fmt.Errorf("seed: set %s: %w", p.name, err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA `+p.name+` = `+old)
	}

	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("seed: begin: %w", err)
	}
	if err := InTx(ctx, tx, opt, false); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("seed: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("seed: commit: %w", err)
	}
	// Fold the large WAL back into the database file now rather than on
	// some later request. A reader in the way only makes this partial.
	if _, err := conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("seed: checkpoint: %w", err)
	}
	return nil
}

// fillPostgres is Fill on PostgreSQL: the same rows in one transaction,
// without SQLite's cache and journal settings or checkpoint (the server
// sizes its own buffers), and the tables analysed afterwards so that the
// planner knows the new sizes at once. The backups' row trigger is off
// while they are written (in the transaction only; other sessions wait
// for the table meanwhile): it updates the same counter rows once per
// row, and a transaction updating one row a hundred thousand times walks
// ever longer chains of its own row versions. The counters and device
// columns it keeps are set from the seeded rows in one statement each
// instead.
func fillPostgres(ctx context.Context, conn *sql.Conn, opt Options) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("seed: begin: %w", err)
	}
	err = func() error {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE backups DISABLE TRIGGER backups_changed`); err != nil {
			return err
		}
		if err := InTx(ctx, tx, opt, true); err != nil {
			return err
		}
		// Fill starts without devices, so without backups: every row is
		// a seeded one.
		if _, err := tx.ExecContext(ctx, `UPDATE counter_totals c SET value = c.value + x.n FROM (
				SELECT 'backups_total' AS name, COUNT(*) AS n FROM backups
				UNION ALL SELECT 'backups_succeeded', COUNT(*) FROM backups WHERE success = 1
				UNION ALL SELECT 'backups_failed', COUNT(*) FROM backups WHERE success = 0 AND finished_at IS NOT NULL
				UNION ALL SELECT 'backups_succeeded_ever', COUNT(*) FROM backups WHERE success = 1 AND finished_at IS NOT NULL
				UNION ALL SELECT 'backups_failed_ever', COUNT(*) FROM backups WHERE success = 0 AND finished_at IS NOT NULL
				UNION ALL SELECT 'backups_changed_ever', COUNT(*) FROM backups WHERE changed = 1) x
			WHERE c.name = x.name`); err != nil {
			return fmt.Errorf("count the backups: %w", err)
		}
		// The snapshots' triggers counted them one delta each.
		if _, err := tx.ExecContext(ctx, `SELECT bd_fold_counters()`); err != nil {
			return fmt.Errorf("fold the counters: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE devices d SET last_good_backup_at = x.good, last_changed_at = x.changed FROM (
				SELECT device_id, MAX(started_at) FILTER (WHERE success = 1) AS good,
					substr(MAX(started_at) FILTER (WHERE changed = 1), 1, 19) AS changed
				FROM backups GROUP BY device_id) x
			WHERE d.id = x.device_id`); err != nil {
			return fmt.Errorf("set the devices' last good and changed times: %w", err)
		}
		_, err := tx.ExecContext(ctx, `ALTER TABLE backups ENABLE TRIGGER backups_changed`)
		return err
	}()
	if err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("seed: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("seed: commit: %w", err)
	}
	// VACUUM too: a seeded store stands for one years old, whose tables
	// autovacuum has long marked all-visible, so that its index-only scans
	// read no rows; fresh from the seed, every one would.
	if _, err := conn.ExecContext(ctx, `VACUUM (ANALYZE) device_groups, devices, backups, snapshots`); err != nil {
		return fmt.Errorf("seed: vacuum: %w", err)
	}
	return nil
}

// InTx writes the rows of Fill in tx, on PostgreSQL when pg, in
// whatever schema version the database is (from 00011 on: the migration
// tests seed old versions).
func InTx(ctx context.Context, tx *sql.Tx, opt Options, pg bool) error {
	opt = opt.withDefaults()
	if has, err := engine.Exists(ctx, tx, `SELECT 1 FROM devices LIMIT 1`); err != nil {
		return err
	} else if has {
		return ErrNotEmpty
	}
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], opt.RandomSeed)
	copy(key[8:], "backupd seed")
	src := rand.NewChaCha8(key)
	rng := rand.New(src)
	now := time.Now().UTC().Format(engine.TimeFormat)

	groups, err := seedGroups(ctx, tx, opt, now)
	if err != nil {
		return err
	}
	credentialID, err := engine.InsertID(ctx, tx, `INSERT INTO credentials (name, username, remarks, created_at, updated_at)
		VALUES ('seed-credential', 'backup', 'Created by the seeding helper; no secrets set.', ?, ?)`, now, now)
	if err != nil {
		return fmt.Errorf("insert credential: %w", err)
	}
	hashes := make([]string, opt.Snapshots)
	sizes := make([]int64, opt.Snapshots)
	for i := range hashes {
		text := seedConfigText(opt.RandomSeed, i)
		if hashes[i], err = snapstore.Put(ctx, tx, engine.DialectOf(pg), text); err != nil {
			return err
		}
		sizes[i] = int64(len(text))
	}

	devices := newBatchInsert(tx, `INSERT INTO devices (id, name, host, port, platform, login_method, group_id,
		credential_id, enabled, status, last_checked_at, last_backup_at, last_backup_success, created_at, updated_at) VALUES `, 15, 100)
	defer devices.close()
	// A schema from before 00013 (the tests seed old versions) has no
	// first_backup: there a first backup was recorded as changed.
	// (A PostgreSQL schema starts at 00017.)
	firstColumn := pg
	if !pg {
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('backups') WHERE name = 'first_backup'`).Scan(&firstColumn); err != nil {
			return fmt.Errorf("read the backups columns: %w", err)
		}
	}
	columns, perRow := backupColumns, 12
	if !firstColumn {
		columns, perRow = strings.Replace(backupColumns, "changed, first_backup,", "changed,", 1), 11
	}
	backups := newBatchInsert(tx, `INSERT INTO backups (`+columns+`) VALUES `, perRow, 200)
	defer backups.close()

	// The devices are written with their ids. On PostgreSQL those come
	// from the id sequence, which is moved past them at the end: ids are
	// never handed out twice.
	d := engine.DialectOf(pg)
	nextID := d.Pick(`SELECT COALESCE(MAX(id), 0) + 1 FROM devices`, `SELECT nextval(pg_get_serial_sequence('devices', 'id'))`)
	var firstID int64
	if err := tx.QueryRowContext(ctx, nextID).Scan(&firstID); err != nil {
		return fmt.Errorf("next device id: %w", err)
	}
	if pg && opt.Devices > 1 {
		if _, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('devices', 'id'), ?)`, firstID+int64(opt.Devices)-1); err != nil {
			return fmt.Errorf("reserve device ids: %w", err)
		}
	}
	n := opt.BackupsPerDevice
	interval := seedSpan / time.Duration(n)
	start := opt.Now.Add(-seedSpan)
	pending := make([]any, 0, 100*n*12)
	for i := range opt.Devices {
		id := firstID + int64(i)
		platform := Platforms[i%len(Platforms)]
		login, port := "ssh", 22
		if i%10 == 7 {
			login, port = "telnet", 23
		}
		var group any
		switch {
		case i%100 == 99:
			// A few devices in no group: only all-groups callers see them.
		case i%20 == 0:
			group = groups.roots[rng.IntN(len(groups.roots))]
		default:
			group = groups.children[rng.IntN(len(groups.children))]
		}
		enabled := i%10 != 3

		// A year of attempts, one per interval, each at a device-specific
		// phase (under 3/4 interval) plus jitter (under 1/4): attempts stay
		// in order, the newest lies in the last interval before Now, and
		// the last 24 hours hold their share of them.
		phase := time.Duration(rng.Int64N(int64(interval * 3 / 4)))
		snap := i % len(hashes)
		seenSuccess := false
		var last struct {
			started, finished time.Time
			success           bool
		}
		for k := range n {
			jitter := time.Duration(rng.Int64N(int64(interval / 4))).Truncate(time.Millisecond)
			started := start.Add(phase + time.Duration(k)*interval + jitter).Truncate(time.Millisecond)
			backupID, err := uuid.NewRandomFromReader(src)
			if err != nil {
				return err
			}
			var errMsg, hash, size any
			success, changed, first := rng.IntN(100) >= 5, false, false
			var duration time.Duration
			if success {
				if seenSuccess && len(hashes) > 1 && rng.IntN(100) < 3 {
					snap = (snap + 1 + rng.IntN(len(hashes)-1)) % len(hashes)
					changed = true
				} else if !seenSuccess {
					first = true
				}
				seenSuccess = true
				hash, size = hashes[snap], sizes[snap]
				duration = time.Duration(2000+rng.IntN(43000)) * time.Millisecond
			} else {
				errMsg = seedErrors[rng.IntN(len(seedErrors))]
				duration = time.Duration(5000+rng.IntN(25000)) * time.Millisecond
			}
			finished := started.Add(duration)
			if finished.After(opt.Now) {
				finished = opt.Now.Truncate(time.Millisecond)
				duration = finished.Sub(started)
			}
			pending = append(pending, backupID.String(), id, backupTime(started), backupTime(finished), success, errMsg,
				hash, queue.TriggerSchedule)
			if firstColumn {
				pending = append(pending, changed, first)
			} else {
				pending = append(pending, changed || first)
			}
			pending = append(pending, duration.Milliseconds(), size)
			last.started, last.finished, last.success = started, finished, success
		}

		status, checked, lastAt, lastOK := statusUnknown, any(nil), any(nil), any(nil)
		if n > 0 {
			status = statusUnreachable
			if last.success {
				status = statusReachable
			}
			checked, lastAt, lastOK = last.finished.Format(engine.TimeFormat), last.started.Format(engine.TimeFormat), last.success
		}
		created := start.Add(-time.Duration(1+rng.IntN(90)) * 24 * time.Hour).Format(engine.TimeFormat)
		name := fmt.Sprintf("%s-%05d", seedNamePrefix(platform), id)
		host := fmt.Sprintf("10.%d.%d.%d", (id>>16)&0xff, (id>>8)&0xff, id&0xff)
		if err := devices.add(ctx, id, name, host, port, platform, login, group, credentialID, enabled,
			status, checked, lastAt, lastOK, created, created); err != nil {
			return err
		}
		// Backups reference their device: flush the devices first.
		if i%100 == 99 || i == opt.Devices-1 {
			if err := devices.flush(ctx); err != nil {
				return err
			}
			for j := 0; j < len(pending); j += perRow {
				if err := backups.add(ctx, pending[j:j+perRow]...); err != nil {
					return err
				}
			}
			pending = pending[:0]
		}
	}
	return backups.flush(ctx)
}

type seededGroups struct{ roots, children []int64 }

func seedGroups(ctx context.Context, tx *sql.Tx, opt Options, now string) (seededGroups, error) {
	var g seededGroups
	insert := func(name string, parent *int64, parentPath string, depth, order int) (int64, error) {
		id, err := engine.InsertID(ctx, tx, `INSERT INTO device_groups (name, parent_id, path, depth, sort_order, created_at)
			VALUES (?, ?, '', ?, ?, ?)`, name, parent, depth, order, now)
		if err != nil {
			return 0, fmt.Errorf("insert group: %w", err)
		}
		path := parentPath + strconv.FormatInt(id, 10) + "/"
		if _, err := tx.ExecContext(ctx, `UPDATE device_groups SET path = ? WHERE id = ?`, path, id); err != nil {
			return 0, fmt.Errorf("set group path: %w", err)
		}
		return id, nil
	}
	for r := range opt.RootGroups {
		name := fmt.Sprintf("region-%02d", r+1)
		root, err := insert(name, nil, "/", 0, r)
		if err != nil {
			return g, err
		}
		g.roots = append(g.roots, root)
		for c := range opt.ChildGroups {
			child, err := insert(fmt.Sprintf("%s-site-%02d", name, c+1), &root, "/"+strconv.FormatInt(root, 10)+"/", 1, c)
			if err != nil {
				return g, err
			}
			g.children = append(g.children, child)
		}
	}
	if len(g.children) == 0 {
		g.children = g.roots
	}
	return g, nil
}

func seedNamePrefix(platform string) string {
	switch platform {
	case "fortinet":
		return "fw"
	case "juniper_junos", "cisco_xe", "mikrotik_routeros":
		return "rtr"
	case "cisco_nxos", "arista_eos", "dell_os10":
		return "dc-sw"
	}
	return "sw"
}

// seedConfigText is the i-th synthetic configuration: an IOS-style text of
// 20 to 60 KB with interfaces, VLANs and access lists, the same for the
// Same (seed, i) and different for different i.
func seedConfigText(seed uint64, i int) string {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	target := 20_000 + r.IntN(40_001)
	var b strings.Builder
	b.Grow(target + 1024)
	fmt.Fprintf(&b, "!\n! backupd seed configuration %d\n!\nversion 15.2\nservice timestamps debug datetime msec\n"+
		"service timestamps log datetime msec\nservice password-encryption\n!\nhostname site%03d-sw%02d\n!\n"+
		"boot-start-marker\nboot-end-marker\n!\nenable secret 9 $9$%016x\n!\nusername netops privilege 15 secret 9 $9$%016x\n"+
		"aaa new-model\naaa authentication login default local\n!\nclock timezone UTC 0 0\nip domain-name example.net\n"+
		"ip name-server 10.0.0.53 10.0.1.53\n!\nspanning-tree mode rapid-pvst\nspanning-tree extend system-id\n!\n",
		i, r.IntN(500), r.IntN(20), r.Uint64(), r.Uint64())
	vlans := 5 + r.IntN(40)
	for v := range vlans {
		fmt.Fprintf(&b, "vlan %d\n name %s-%d\n!\n", 10+v*10, []string{"users", "voice", "printers", "mgmt", "servers", "iot"}[r.IntN(6)], v)
	}
	fmt.Fprintf(&b, "ip access-list extended MGMT-IN\n")
	for a := range 10 + r.IntN(60) {
		fmt.Fprintf(&b, " %d permit tcp 10.%d.%d.0 0.0.0.255 any eq %d\n", (a+1)*10, r.IntN(256), r.IntN(256), []int{22, 161, 443, 830}[r.IntN(4)])
	}
	b.WriteString(" 10000 deny ip any any log\n!\n")
	for port := 1; b.Len() < target-600; port++ {
		fmt.Fprintf(&b, "interface GigabitEthernet%d/0/%d\n description %s-%04d\n", 1+port/48, 1+port%48,
			[]string{"desk", "ap", "uplink", "printer", "camera", "phone"}[r.IntN(6)], r.IntN(10000))
		if r.IntN(8) == 0 {
			fmt.Fprintf(&b, " switchport trunk allowed vlan %d-%d\n switchport mode trunk\n", 10, 10+vlans*10)
		} else {
			fmt.Fprintf(&b, " switchport access vlan %d\n switchport mode access\n spanning-tree portfast\n", 10+r.IntN(vlans)*10)
		}
		if r.IntN(5) == 0 {
			b.WriteString(" shutdown\n")
		}
		b.WriteString("!\n")
	}
	fmt.Fprintf(&b, "interface Vlan1\n ip address 10.%d.%d.%d 255.255.255.0\n!\nip default-gateway 10.%d.%d.1\n"+
		"snmp-server community %016x RO\nsnmp-server location rack %d\nntp server 10.0.0.123\n!\n"+
		"line con 0\n exec-timeout 15 0\nline vty 0 15\n transport input ssh\n!\nend\n",
		r.IntN(256), r.IntN(256), 1+r.IntN(250), r.IntN(256), r.IntN(256), r.Uint64(), r.IntN(100))
	return b.String()
}

// batchInsert gathers rows and writes them rows-per-statement at a time
// with a prepared multi-row INSERT; a shorter last batch gets its own
// statement.
type batchInsert struct {
	tx      *sql.Tx
	head    string
	cols    int
	perStmt int
	stmts   map[int]*sql.Stmt
	args    []any
}

func newBatchInsert(tx *sql.Tx, head string, cols, perStmt int) *batchInsert {
	return &batchInsert{tx: tx, head: head, cols: cols, perStmt: perStmt, stmts: map[int]*sql.Stmt{},
		args: make([]any, 0, cols*perStmt)}
}

func (b *batchInsert) add(ctx context.Context, values ...any) error {
	if len(values) != b.cols {
		return fmt.Errorf("batch insert: %d values for %d columns", len(values), b.cols)
	}
	b.args = append(b.args, values...)
	if len(b.args) == b.cols*b.perStmt {
		return b.flush(ctx)
	}
	return nil
}

func (b *batchInsert) flush(ctx context.Context) error {
	rows := len(b.args) / b.cols
	if rows == 0 {
		return nil
	}
	stmt, ok := b.stmts[rows]
	if !ok {
		row := "(" + engine.Placeholders(b.cols) + ")"
		var err error
		stmt, err = b.tx.PrepareContext(ctx, b.head+strings.Repeat(row+",", rows-1)+row)
		if err != nil {
			return fmt.Errorf("prepare batch insert: %w", err)
		}
		b.stmts[rows] = stmt
	}
	if _, err := stmt.ExecContext(ctx, b.args...); err != nil {
		return fmt.Errorf("batch insert: %w", err)
	}
	clear(b.args)
	b.args = b.args[:0]
	return nil
}

func (b *batchInsert) close() {
	for _, s := range b.stmts {
		s.Close()
	}
}
