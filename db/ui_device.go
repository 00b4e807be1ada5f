package db

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The web interface's device detail page: a device's history, paged by
// key rather than by offset (a device may have 100,000 attempts, and
// OFFSET would read them all to reach the last page), the versions around
// one, and the names its summary shows.

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
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM backups WHERE device_id = ?`, deviceID).Scan(&p.Total); err != nil {
		return p, fmt.Errorf("device history: count: %w", err)
	}
	const sel = `SELECT b.id, b.device_id, b.started_at, b.finished_at, b.success, b.error_message, b.snapshot_hash,
		b.trigger, b.changed, b.first_backup, b.duration_ms, b.bytes FROM backups b WHERE b.device_id = ?`
	args := []any{deviceID}
	var query string
	ascending := false
	switch {
	case q.Before != nil:
		query = sel + ` AND ` + olderThan + ` ORDER BY b.started_at DESC, b.id DESC LIMIT ?`
		args = append(append(args, cursorArgs(*q.Before)...), q.Limit)
	case q.After != nil:
		query = sel + ` AND ` + newerThan + ` ORDER BY b.started_at, b.id LIMIT ?`
		args = append(append(args, cursorArgs(*q.After)...), q.Limit)
		ascending = true
	case q.Oldest:
		rest := p.Total % q.Limit
		if rest == 0 {
			rest = q.Limit
		}
		query = sel + ` ORDER BY b.started_at, b.id LIMIT ?`
		args = append(args, rest)
		ascending = true
	default:
		query = sel + ` ORDER BY b.started_at DESC, b.id DESC LIMIT ?`
		args = append(args, q.Limit)
	}
	if p.Items, err = queryAll(ctx, tx, scanBackup, query, args...); err != nil {
		return p, fmt.Errorf("device history: %w", err)
	}
	if ascending {
		slices.Reverse(p.Items)
	}
	if len(p.Items) > 0 {
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM backups b WHERE b.device_id = ? AND `+newerThan,
			append([]any{deviceID}, cursorArgs(CursorOf(p.Items[0]))...)...).Scan(&p.Newer)
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
		b.success, b.error_message, b.snapshot_hash, b.trigger, b.changed, b.first_backup, b.duration_ms, b.bytes
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

// DeviceLabels are the names a device's references stand for; "" where
// the device has none (or it no longer exists).
type DeviceLabels struct {
	// GroupPath is the device's group and its ancestors, root first.
	GroupPath  []string
	Credential string
	Template   string
}

// DeviceLabelsOf looks up the names of d's group (with its ancestors),
// credential and template. Only names: never a credential's secrets.
func (s *Store) DeviceLabelsOf(ctx context.Context, d Device) (DeviceLabels, error) {
	var l DeviceLabels
	var err error
	if d.GroupID != nil {
		l.GroupPath, err = queryAll(ctx, s.reader, func(r scanner) (string, error) {
			var name string
			return name, r.Scan(&name)
		}, `SELECT a.name FROM device_groups g JOIN device_groups a ON substr(g.path, 1, length(a.path)) = a.path
			WHERE g.id = ? ORDER BY a.depth`, *d.GroupID)
		if err != nil {
			return l, fmt.Errorf("group of device %d: %w", d.ID, err)
		}
	}
	name := func(query string, id *int64) (string, error) {
		if id == nil {
			return "", nil
		}
		var n string
		err := s.reader.QueryRowContext(ctx, query, *id).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return "", nil
		}
		return n, err
	}
	if l.Credential, err = name(`SELECT name FROM credentials WHERE id = ?`, d.CredentialID); err != nil {
		return l, fmt.Errorf("credential of device %d: %w", d.ID, err)
	}
	if l.Template, err = name(`SELECT name FROM templates WHERE id = ?`, d.TemplateID); err != nil {
		return l, fmt.Errorf("template of device %d: %w", d.ID, err)
	}
	return l, nil
}

// ErrPendingHostKeyChanged is returned when the changed key a device
// presented is no longer the one the operator was shown.
var ErrPendingHostKeyChanged = errors.New("the device presented another host key since this one was shown")

// AcceptSeenHostKey pins the changed key a device presented, provided it
// is still seen, the key the operator checked. Unlike AcceptHostKey (the
// CLI's, which shows the key it accepted afterwards), a page shows the key
// first and accepts later: in between the device, or someone between it
// and us, may present yet another key, which must not be pinned unseen.
func (s *Store) AcceptSeenHostKey(ctx context.Context, deviceID int64, seen []byte) error {
	return s.InTx(ctx, func(tx *sql.Tx) error {
		var pending []byte
		err := tx.QueryRowContext(ctx, `SELECT pending_host_key FROM devices WHERE id = ?`, deviceID).Scan(&pending)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrNotFound
		case err != nil:
			return fmt.Errorf("accept host key of device %d: %w", deviceID, err)
		case pending == nil:
			return ErrNoPendingHostKey
		case !bytes.Equal(pending, seen):
			return ErrPendingHostKeyChanged
		}
		_, err = tx.ExecContext(ctx, `UPDATE devices SET host_key = pending_host_key, pending_host_key = NULL, updated_at = ? WHERE id = ?`,
			Now(), deviceID)
		return err
	})
}
