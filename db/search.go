package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"backupd/db/engine"
	"backupd/db/snapstore"
)

// SearchVersion is one configuration version a search reads: a device in
// scope, the backup reporting the version and the snapshot holding it.
type SearchVersion struct {
	DeviceID     int64
	DeviceName   string
	BackupID     string
	StartedAt    time.Time
	SnapshotHash string
	// Platform is the device's, whose rules mask its secrets.
	Platform string

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
	searchLatestQuery = `SELECT d.id, d.name, b.id, b.started_at, b.snapshot_hash, d.platform
		FROM devices d JOIN backups b ON b.id = (
			SELECT b2.id FROM backups b2
			WHERE b2.device_id = d.id AND b2.success = 1 AND b2.snapshot_hash IS NOT NULL
			ORDER BY b2.started_at DESC, b2.id DESC LIMIT 1)
		WHERE %s ORDER BY d.name, d.id`
	searchAllQuery = `SELECT d.id, d.name, v.id, v.started_at, v.snapshot_hash, d.platform
		FROM devices d JOIN (
			SELECT device_id, snapshot_hash, id, MAX(started_at) AS started_at FROM backups
			WHERE success = 1 AND snapshot_hash IS NOT NULL
			GROUP BY device_id, snapshot_hash) v ON v.device_id = d.id
		WHERE %s ORDER BY d.name, d.id, v.started_at DESC, v.id DESC`
	// PostgreSQL has no bare columns beside MAX(): the newest backup per
	// device and snapshot is DISTINCT ON's first row.
	searchAllQueryPostgres = `SELECT d.id, d.name, v.id, v.started_at, v.snapshot_hash, d.platform
		FROM devices d JOIN (
			SELECT DISTINCT ON (device_id, snapshot_hash) device_id, snapshot_hash, id, started_at FROM backups
			WHERE success = 1 AND snapshot_hash IS NOT NULL
			ORDER BY device_id, snapshot_hash, started_at DESC, id DESC) v ON v.device_id = d.id
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
		opts := &sql.TxOptions{ReadOnly: true}
		if s.pg {
			// One view of the database for the whole search, as SQLite's
			// read transaction is: a purged snapshot stays readable to it.
			opts.Isolation = sql.LevelRepeatableRead
		}
		tx, err := s.reader.BeginTx(ctx, opts)
		if err != nil {
			yield(SearchVersion{}, fmt.Errorf("search: %w", err))
			return
		}
		defer tx.Rollback()
		cond, args := scope.clause()
		query := searchLatestQuery
		if allVersions {
			query = s.d.Pick(searchAllQuery, searchAllQueryPostgres)
		}
		query = fmt.Sprintf(query, cond)
		// emit yields v with its text readable during the step.
		emit := func(v SearchVersion) bool {
			valid := true
			hash := v.SnapshotHash
			v.text = func() (string, error) {
				if !valid {
					return "", errors.New("search version: text read outside its iteration step")
				}
				return snapstore.Text(ctx, tx, hash)
			}
			ok := yield(v, nil)
			valid = false
			return ok
		}
		if s.pg {
			searchVersionsPostgres(ctx, tx, query, args, emit, yield)
			return
		}
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			yield(SearchVersion{}, fmt.Errorf("search: %w", err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scanSearchVersion(rows)
			if err != nil {
				yield(v, fmt.Errorf("search: %w", err))
				return
			}
			if !emit(v) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(SearchVersion{}, fmt.Errorf("search: %w", err))
		}
	}
}

// searchFetch is how many versions a PostgreSQL search reads at a time.
const searchFetch = 256

// searchVersionsPostgres is SearchVersions' walk on PostgreSQL, where a
// connection runs one query at a time: the list is read through a cursor
// a batch at a time, and each batch's texts are read between fetches.
func searchVersionsPostgres(ctx context.Context, tx *sql.Tx, query string, args []any,
	emit func(SearchVersion) bool, yield func(SearchVersion, error) bool) {
	if _, err := tx.ExecContext(ctx, `DECLARE search_versions NO SCROLL CURSOR FOR `+query, args...); err != nil {
		yield(SearchVersion{}, fmt.Errorf("search: %w", err))
		return
	}
	fetch := `FETCH FORWARD ` + strconv.Itoa(searchFetch) + ` FROM search_versions`
	batch := make([]SearchVersion, 0, searchFetch)
	for {
		batch = batch[:0]
		err := engine.EachRow(ctx, tx, fetch, nil, func(row engine.Scanner) error {
			v, err := scanSearchVersion(row)
			batch = append(batch, v)
			return err
		})
		if err != nil {
			yield(SearchVersion{}, fmt.Errorf("search: %w", err))
			return
		}
		for _, v := range batch {
			if !emit(v) {
				return
			}
		}
		if len(batch) < searchFetch {
			return
		}
	}
}

// scanSearchVersion reads a row of searchLatestQuery or searchAllQuery.
func scanSearchVersion(row engine.Scanner) (SearchVersion, error) {
	var v SearchVersion
	var started string
	if err := row.Scan(&v.DeviceID, &v.DeviceName, &v.BackupID, &started, &v.SnapshotHash, &v.Platform); err != nil {
		return v, err
	}
	var err error
	if v.StartedAt, err = time.ParseInLocation(BackupTimeFormat, started, time.UTC); err != nil {
		return v, fmt.Errorf("backup %s started_at: %w", v.BackupID, err)
	}
	return v, nil
}
