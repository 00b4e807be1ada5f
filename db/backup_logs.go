package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// The session logs of failed attempts (table backup_logs): what backupd
// sent and the device answered, passwords masked, written with the
// attempt by the queue (queue.Outcome.Log) and deleted with it.

// BackupLog is an attempt's session log: Segments as JSON, Truncated
// when the session said more than was kept. ErrNotFound when the attempt
// has none (it succeeded, ran before logs were kept, or at a remote
// collector).
func (s *Store) BackupLog(ctx context.Context, backupID string) (segments string, truncated bool, err error) {
	err = s.reader.QueryRowContext(ctx, `SELECT segments, truncated FROM backup_logs WHERE backup_id = ?`, backupID).
		Scan(&segments, &truncated)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, ErrNotFound
	}
	if err != nil {
		return "", false, fmt.Errorf("backup log: %w", err)
	}
	return segments, truncated, nil
}

// BackupsWithLogs reports which of the attempts ids have a session log,
// in one query, for a page that links to them.
func (s *Store) BackupsWithLogs(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("backup logs: %w", err)
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT backup_id FROM backup_logs
		WHERE backup_id IN (SELECT CAST(value AS TEXT) FROM `+s.d.JSONEach()+`)`, string(raw))
	if err != nil {
		return nil, fmt.Errorf("backup logs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("backup logs: %w", err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("backup logs: %w", err)
	}
	return out, nil
}
