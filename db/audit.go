package db

import (
	"context"
	"encoding/json"
	"fmt"
)

// AuditEntry records one change. Details must never hold a secret value:
// callers name changed fields, not their contents.
type AuditEntry struct {
	ID         int64
	At         string
	UserID     *int64
	Username   string
	KeyID      *int64
	SessionID  *string
	Interface  string // "api", "cli", "web"
	Action     string // e.g. "group.create"
	TargetType string
	TargetID   string
	RequestID  string
	RemoteAddr string
	Details    map[string]any
}

// RecordAudit appends an entry.
func (s *Store) RecordAudit(ctx context.Context, e AuditEntry) error {
	var details any
	if len(e.Details) > 0 {
		b, err := json.Marshal(e.Details)
		if err != nil {
			return fmt.Errorf("audit details: %w", err)
		}
		details = string(b)
	}
	_, err := s.writer.ExecContext(ctx, `INSERT INTO audit_log (at, user_id, username, key_id, session_id, interface,
		action, target_type, target_id, request_id, remote_addr, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		Now(), e.UserID, e.Username, e.KeyID, e.SessionID, e.Interface, e.Action, e.TargetType,
		e.TargetID, e.RequestID, e.RemoteAddr, details)
	if err != nil {
		return fmt.Errorf("record audit: %w", err)
	}
	return nil
}

// ListAudit returns the newest entries first, one page, and the total.
func (s *Store) ListAudit(ctx context.Context, limit, offset int) ([]AuditEntry, int, error) {
	var total int
	if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_log`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count audit: %w", err)
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT id, at, user_id, username, key_id, session_id, interface, action,
		target_type, COALESCE(target_id, ''), COALESCE(request_id, ''), COALESCE(remote_addr, ''), COALESCE(details, '')
		FROM audit_log ORDER BY id DESC LIMIT ? OFFSET ?`, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list audit: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var details string
		if err := rows.Scan(&e.ID, &e.At, &e.UserID, &e.Username, &e.KeyID, &e.SessionID, &e.Interface, &e.Action,
			&e.TargetType, &e.TargetID, &e.RequestID, &e.RemoteAddr, &details); err != nil {
			return nil, 0, err
		}
		if details != "" {
			_ = json.Unmarshal([]byte(details), &e.Details)
		}
		out = append(out, e)
	}
	return out, total, rows.Err()
}
