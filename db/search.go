package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"time"
)

// SearchVersion is one configuration version a search reads: a device in
// scope, the backup reporting the version and the snapshot holding it.
type SearchVersion struct {
	DeviceID     int64
	DeviceName   string
	BackupID     string
	StartedAt    time.Time
	SnapshotHash string

	text func() (string, error)
}

// Text decompresses the version's configuration. It may only be called
// during the iteration step that yielded the version; the caller decides
// whether it needs the text at all (a snapshot shared by several devices
// need not be read twice).
func (v SearchVersion) Text() (string, error) {
	if v.text == nil {
		return "", errors.New("search version: text read outside its iteration step")
	}
	return v.text()
}

// Queries listing the versions a search reads, ordered by device name so
// that the first hits are the ones a reader expects first. The latest
// version per device uses backups_device_success; all versions keep, per
// device and snapshot, the newest backup (SQLite takes the bare columns
// of a MAX() aggregate from the row holding the maximum).
const (
	searchLatestQuery = `SELECT d.id, d.name, b.id, b.started_at, b.snapshot_hash
		FROM devices d JOIN backups b ON b.id = (
			SELECT b2.id FROM backups b2
			WHERE b2.device_id = d.id AND b2.success = 1 AND b2.snapshot_hash IS NOT NULL
			ORDER BY b2.started_at DESC, b2.id DESC LIMIT 1)
		WHERE %s ORDER BY d.name, d.id`
	searchAllQuery = `SELECT d.id, d.name, v.id, v.started_at, v.snapshot_hash
		FROM devices d JOIN (
			SELECT device_id, snapshot_hash, id, MAX(started_at) AS started_at FROM backups
			WHERE success = 1 AND snapshot_hash IS NOT NULL
			GROUP BY device_id, snapshot_hash) v ON v.device_id = d.id
		WHERE %s ORDER BY d.name, d.id, v.started_at DESC, v.id DESC`
)

// SearchVersions yields the versions a configuration search reads: each
// device's latest successful backup, or, with allVersions, every distinct
// snapshot a device has had, reported with the newest backup using it.
// Devices outside scope are never yielded. The iteration runs in one read
// transaction, so a version's snapshot cannot be purged while it is read;
// stop the iteration early to end the search.
func (s *Store) SearchVersions(ctx context.Context, scope Scope, allVersions bool) iter.Seq2[SearchVersion, error] {
	return func(yield func(SearchVersion, error) bool) {
		tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			yield(SearchVersion{}, fmt.Errorf("search: %w", err))
			return
		}
		defer tx.Rollback()
		cond, args := scope.clause()
		query := searchLatestQuery
		if allVersions {
			query = searchAllQuery
		}
		rows, err := tx.QueryContext(ctx, fmt.Sprintf(query, cond), args...)
		if err != nil {
			yield(SearchVersion{}, fmt.Errorf("search: %w", err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			var v SearchVersion
			var started string
			if err := rows.Scan(&v.DeviceID, &v.DeviceName, &v.BackupID, &started, &v.SnapshotHash); err != nil {
				yield(v, fmt.Errorf("search: %w", err))
				return
			}
			if v.StartedAt, err = time.ParseInLocation(BackupTimeFormat, started, time.UTC); err != nil {
				yield(v, fmt.Errorf("search: backup %s started_at: %w", v.BackupID, err))
				return
			}
			valid := true
			hash := v.SnapshotHash
			v.text = func() (string, error) {
				if !valid {
					return "", errors.New("search version: text read outside its iteration step")
				}
				return snapshotText(ctx, tx, hash)
			}
			ok := yield(v, nil)
			valid = false
			if !ok {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(SearchVersion{}, fmt.Errorf("search: %w", err))
		}
	}
}
