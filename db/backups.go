package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"backupd/db/engine"
)

// BackupTimeFormat is how backup times are stored: UTC with milliseconds,
// so that attempts in the same second still sort.
const BackupTimeFormat = engine.BackupTimeFormat

// Backup is one backup attempt of one device.
type Backup struct {
	ID           string
	DeviceID     int64
	StartedAt    time.Time
	FinishedAt   *time.Time
	Success      bool
	ErrorMessage *string
	// ErrorReason is ErrorMessage's class ("connect", "auth", ...): nil
	// for a success, and when none was given.
	ErrorReason  *string
	SnapshotHash *string
	Trigger      string
	// Changed is set on a version that differs from the device's
	// previous one, noise ignored; First on the device's first version,
	// which had nothing to differ from and so is never Changed.
	Changed    bool
	First      bool
	DurationMS *int64
	Bytes      *int64
}

const backupColumns = `id, device_id, started_at, finished_at, success, error_message, snapshot_hash, trigger, changed, first_backup, duration_ms, bytes, error_reason`

func scanBackup(row engine.Scanner) (Backup, error) {
	var b Backup
	var started string
	var finished, errMsg, hash, reason sql.NullString
	var dur, size sql.NullInt64
	if err := row.Scan(&b.ID, &b.DeviceID, &started, &finished, &b.Success, &errMsg, &hash, &b.Trigger, &b.Changed, &b.First, &dur, &size, &reason); err != nil {
		return b, err
	}
	var err error
	if b.StartedAt, err = time.ParseInLocation(BackupTimeFormat, started, time.UTC); err != nil {
		return b, fmt.Errorf("backup %s started_at: %w", b.ID, err)
	}
	if finished.Valid {
		t, err := time.ParseInLocation(BackupTimeFormat, finished.String, time.UTC)
		if err != nil {
			return b, fmt.Errorf("backup %s finished_at: %w", b.ID, err)
		}
		b.FinishedAt = &t
	}
	if errMsg.Valid {
		b.ErrorMessage = &errMsg.String
	}
	if reason.Valid {
		b.ErrorReason = &reason.String
	}
	if hash.Valid {
		b.SnapshotHash = &hash.String
	}
	if dur.Valid {
		b.DurationMS = &dur.Int64
	}
	if size.Valid {
		b.Bytes = &size.Int64
	}
	return b, nil
}

func backupTime(t time.Time) string { return t.UTC().Format(BackupTimeFormat) }

func optionalTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return backupTime(*t)
}

// InsertBackup records an attempt. The snapshot it names must exist.
func (s *Store) InsertBackup(ctx context.Context, b Backup) error {
	return insertBackup(ctx, s.writer, b)
}

// insertBackupQuery is prepared when the store opens (jobQueries).
const insertBackupQuery = `INSERT INTO backups (` + backupColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func insertBackup(ctx context.Context, q engine.Querier, b Backup) error {
	_, err := q.ExecContext(ctx, insertBackupQuery,
		b.ID, b.DeviceID, backupTime(b.StartedAt), optionalTime(b.FinishedAt), b.Success, b.ErrorMessage,
		b.SnapshotHash, b.Trigger, b.Changed && !b.First, b.First, b.DurationMS, b.Bytes, b.ErrorReason)
	if err != nil {
		return fmt.Errorf("insert backup: %w", err)
	}
	return nil
}

// ListBackups returns one page of a device's attempts, newest first.
func (s *Store) ListBackups(ctx context.Context, deviceID int64, limit, offset int) ([]Backup, int, error) {
	items, total, err := engine.Page(ctx, s.reader, scanBackup, `SELECT COUNT(*) FROM backups WHERE device_id = ?`,
		`SELECT `+backupColumns+` FROM backups WHERE device_id = ? ORDER BY started_at DESC, id DESC`, limit, offset, deviceID)
	if err != nil {
		return nil, 0, fmt.Errorf("list backups: %w", err)
	}
	return items, total, nil
}

// GetBackup returns one attempt or ErrNotFound.
func (s *Store) GetBackup(ctx context.Context, id string) (Backup, error) {
	b, err := scanBackup(s.reader.QueryRowContext(ctx, `SELECT `+backupColumns+` FROM backups WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return b, ErrNotFound
	}
	if err != nil {
		return b, fmt.Errorf("get backup: %w", err)
	}
	return b, nil
}

// A device's history is paged by key rather than by offset: a device may
// have 100,000 attempts, and OFFSET would read them all to reach the last
// page.

// BackupCursor is a position in a device's history: attempts are ordered
// by start time, then id, newest first.
type BackupCursor struct {
	StartedAt time.Time
	ID        string
}

// CursorOf is the position of b.
func CursorOf(b Backup) BackupCursor { return BackupCursor{StartedAt: b.StartedAt, ID: b.ID} }

// String is the cursor as a page link carries it: the stored start time,
// "~", the id.
func (c BackupCursor) String() string { return backupTime(c.StartedAt) + "~" + c.ID }

// ParseBackupCursor reads what String wrote.
func ParseBackupCursor(s string) (BackupCursor, error) {
	at, id, ok := strings.Cut(s, "~")
	if !ok || id == "" || len(id) > 64 {
		return BackupCursor{}, fmt.Errorf("history position %q: want <time>~<id>", s)
	}
	t, err := time.ParseInLocation(BackupTimeFormat, at, time.UTC)
	if err != nil {
		return BackupCursor{}, fmt.Errorf("history position %q: %w", s, err)
	}
	return BackupCursor{StartedAt: t, ID: id}, nil
}

// HistoryQuery picks one page of a device's history. With no cursor it is
// the newest page; Before is the page of attempts older than a position,
// After the page of attempts newer than it (the previous page), Oldest
// the last page, which holds what is left over by full pages before it.
type HistoryQuery struct {
	Before, After *BackupCursor
	Oldest        bool
	Limit         int
	// ChangesOnly keeps the versions that changed, and the device's
	// first; Since and Until, when set, the attempts started in
	// [Since, Until). Total and Newer count what they keep.
	ChangesOnly  bool
	Since, Until time.Time
}

// filter is q's conditions on backups b beyond the device, with their
// arguments.
func (q HistoryQuery) filter() (string, []any) {
	var cond string
	var args []any
	if q.ChangesOnly {
		// As the partial index backups_device_changes spells it (00026).
		cond += ` AND b.changed + b.first_backup > 0`
	}
	if !q.Since.IsZero() {
		cond, args = cond+` AND b.started_at >= ?`, append(args, backupTime(q.Since))
	}
	if !q.Until.IsZero() {
		cond, args = cond+` AND b.started_at < ?`, append(args, backupTime(q.Until))
	}
	return cond, args
}

// HistoryPage is a page of a device's attempts, newest first. Newer counts
// the attempts before the page, so the page's position in the whole is
// known without paging there.
type HistoryPage struct {
	Items []Backup
	Total int
	Newer int
}

// Conditions on backups b, in the order of the device's history, that
// the index backups_device_started serves as a range on started_at.
const (
	olderThan = `b.started_at <= ? AND (b.started_at < ? OR b.id < ?)`
	newerThan = `b.started_at >= ? AND (b.started_at > ? OR b.id > ?)`
)

func cursorArgs(c BackupCursor) []any {
	at := backupTime(c.StartedAt)
	return []any{at, at, c.ID}
}

// DeviceHistory returns one page of a device's attempts. The page and its
// counts come from one read transaction, so they agree.
func (s *Store) DeviceHistory(ctx context.Context, deviceID int64, q HistoryQuery) (HistoryPage, error) {
	var p HistoryPage
	if q.Limit < 1 {
		return p, errors.New("device history: limit must be positive")
	}
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return p, fmt.Errorf("device history: %w", err)
	}
	defer tx.Rollback()
	filter, filterArgs := q.filter()
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM backups b WHERE b.device_id = ?`+filter,
		append([]any{deviceID}, filterArgs...)...).Scan(&p.Total); err != nil {
		return p, fmt.Errorf("device history: count: %w", err)
	}
	const sel = `SELECT b.id, b.device_id, b.started_at, b.finished_at, b.success, b.error_message, b.snapshot_hash,
		b.trigger, b.changed, b.first_backup, b.duration_ms, b.bytes, b.error_reason FROM backups b WHERE b.device_id = ?`
	args := append([]any{deviceID}, filterArgs...)
	var query string
	ascending := false
	switch {
	case q.Before != nil:
		query = sel + filter + ` AND ` + olderThan + ` ORDER BY b.started_at DESC, b.id DESC LIMIT ?`
		args = append(append(args, cursorArgs(*q.Before)...), q.Limit)
	case q.After != nil:
		query = sel + filter + ` AND ` + newerThan + ` ORDER BY b.started_at, b.id LIMIT ?`
		args = append(append(args, cursorArgs(*q.After)...), q.Limit)
		ascending = true
	case q.Oldest:
		rest := p.Total % q.Limit
		if rest == 0 {
			rest = q.Limit
		}
		query = sel + filter + ` ORDER BY b.started_at, b.id LIMIT ?`
		args = append(args, rest)
		ascending = true
	default:
		query = sel + filter + ` ORDER BY b.started_at DESC, b.id DESC LIMIT ?`
		args = append(args, q.Limit)
	}
	if p.Items, err = engine.QueryAll(ctx, tx, scanBackup, query, args...); err != nil {
		return p, fmt.Errorf("device history: %w", err)
	}
	if ascending {
		slices.Reverse(p.Items)
	}
	if len(p.Items) > 0 {
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM backups b WHERE b.device_id = ?`+filter+` AND `+newerThan,
			append(append([]any{deviceID}, filterArgs...), cursorArgs(CursorOf(p.Items[0]))...)...).Scan(&p.Newer)
		if err != nil {
			return p, fmt.Errorf("device history: position: %w", err)
		}
	}
	return p, nil
}

// PreviousVersion returns the newest successful attempt of a device older
// than at, the version a change is compared with; false when there is
// none.
func (s *Store) PreviousVersion(ctx context.Context, deviceID int64, at BackupCursor) (Backup, bool, error) {
	return s.neighbourVersion(ctx, deviceID, `AND `+olderThan+` ORDER BY b.started_at DESC, b.id DESC`, at)
}

// NextVersion returns the oldest successful attempt of a device newer
// than at; false when there is none.
func (s *Store) NextVersion(ctx context.Context, deviceID int64, at BackupCursor) (Backup, bool, error) {
	return s.neighbourVersion(ctx, deviceID, `AND `+newerThan+` ORDER BY b.started_at, b.id`, at)
}

func (s *Store) neighbourVersion(ctx context.Context, deviceID int64, where string, at BackupCursor) (Backup, bool, error) {
	// backups_device_success (device_id, success, started_at) serves both.
	b, err := scanBackup(s.reader.QueryRowContext(ctx, `SELECT b.id, b.device_id, b.started_at, b.finished_at,
		b.success, b.error_message, b.snapshot_hash, b.trigger, b.changed, b.first_backup, b.duration_ms, b.bytes, b.error_reason
		FROM backups b WHERE b.device_id = ? AND b.success = 1 AND b.snapshot_hash IS NOT NULL `+where+` LIMIT 1`,
		append([]any{deviceID}, cursorArgs(at)...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return b, false, nil
	}
	if err != nil {
		return b, false, fmt.Errorf("neighbouring version of device %d: %w", deviceID, err)
	}
	return b, true, nil
}

// VersionBeforeChange returns the newest successful attempt of to's
// device, started no later than to, whose configuration differs from
// to's: the version the device's last change replaced; false when there
// is none (the device has had one configuration only).
func (s *Store) VersionBeforeChange(ctx context.Context, to Backup) (Backup, bool, error) {
	if to.SnapshotHash == nil {
		return Backup{}, false, fmt.Errorf("version before the last change: backup %s holds no configuration", to.ID)
	}
	b, err := scanBackup(s.reader.QueryRowContext(ctx, `SELECT `+backupColumns+` FROM backups
		WHERE device_id = ? AND success = 1 AND snapshot_hash IS NOT NULL AND snapshot_hash <> ? AND started_at <= ?
		ORDER BY started_at DESC, id DESC LIMIT 1`,
		to.DeviceID, *to.SnapshotHash, to.StartedAt.UTC().Format(BackupTimeFormat)))
	if errors.Is(err, sql.ErrNoRows) {
		return Backup{}, false, nil
	}
	if err != nil {
		return Backup{}, false, fmt.Errorf("version before the last change: %w", err)
	}
	return b, true, nil
}
