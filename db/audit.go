package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"backupd/db/engine"
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
	// DeviceIDs are devices the entry names beside those RecordAudit
	// finds itself (see entryDevices). They decide who sees the entry: a
	// user scoped to some device groups sees it only when every device
	// it names lies in them.
	DeviceIDs []int64
}

// entryDevices are the devices e names: DeviceIDs, the target of a
// "device" entry, and the device_id and device_ids of its details (the
// writers' convention for entries about other things that concern
// devices).
func entryDevices(e AuditEntry) []int64 {
	ids := append([]int64{}, e.DeviceIDs...)
	if e.TargetType == "device" {
		if id, err := strconv.ParseInt(e.TargetID, 10, 64); err == nil && id > 0 {
			ids = append(ids, id)
		}
	}
	one := func(v any) {
		switch v := v.(type) {
		case int64:
			ids = append(ids, v)
		case int:
			ids = append(ids, int64(v))
		case float64:
			if v == float64(int64(v)) {
				ids = append(ids, int64(v))
			}
		}
	}
	one(e.Details["device_id"])
	switch v := e.Details["device_ids"].(type) {
	case []int64:
		ids = append(ids, v...)
	case []any:
		for _, x := range v {
			one(x)
		}
	}
	return uniqueIDs(ids)
}

// RecordAudit appends an entry.
func (s *Store) RecordAudit(ctx context.Context, e AuditEntry) error {
	if err := s.inTx(ctx, func(tx *sql.Tx) error { return recordAudit(ctx, tx, e) }); err != nil {
		return fmt.Errorf("record audit: %w", err)
	}
	return nil
}

// recordAudit appends e in tx: a change and its audit entry commit or
// roll back together.
func recordAudit(ctx context.Context, tx *sql.Tx, e AuditEntry) error {
	var details any
	if len(e.Details) > 0 {
		b, err := json.Marshal(e.Details)
		if err != nil {
			return fmt.Errorf("audit details: %w", err)
		}
		details = string(b)
	}
	id, err := engine.InsertID(ctx, tx, `INSERT INTO audit_log (at, user_id, username, key_id, session_id, interface,
		action, target_type, target_id, request_id, remote_addr, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		Now(), e.UserID, e.Username, e.KeyID, e.SessionID, e.Interface, e.Action, e.TargetType,
		e.TargetID, e.RequestID, e.RemoteAddr, details)
	if err != nil {
		return err
	}
	for _, d := range entryDevices(e) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit_devices (audit_id, device_id) VALUES (?, ?)`, id, d); err != nil {
			return err
		}
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

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	// Username matches exactly, in any letter case.
	Username string
	// Action matches the action itself or any action under it: "device"
	// and "device." both match "device.create".
	Action     string
	Interface  string
	TargetType string
	// From and To bound the time: From <= at < To.
	From, To time.Time
	// Text is searched for (case-insensitive) in the details, the target
	// id and the request id.
	Text string
	// Scope, when set, keeps the entries whose devices (if they name any)
	// all lie in it, as the device list shows them: a scoped user sees
	// nothing of another group's devices, nor of deleted ones.
	Scope *Scope
}

// AuditRecord is an audit entry with the visible prefix of the API key
// it names (empty when none, or when the key is gone).
type AuditRecord struct {
	AuditEntry
	KeyPrefix string
}

// SearchAudit returns one page of the entries f selects, newest first,
// and whether more follow. It walks the audit log's time index from the
// newest entry (or from f.To) and stops once the page is full, so a page
// costs what it skips and shows rather than the whole log: no total is
// counted.
func (s *Store) SearchAudit(ctx context.Context, f AuditFilter, limit, offset int) ([]AuditRecord, bool, error) {
	var conds []string
	var args []any
	add := func(cond string, a ...any) {
		conds = append(conds, cond)
		args = append(args, a...)
	}
	if !f.From.IsZero() {
		add(`a.at >= ?`, f.From.UTC().Format(TimeFormat))
	}
	if !f.To.IsZero() {
		add(`a.at < ?`, f.To.UTC().Format(TimeFormat))
	}
	if f.Username != "" {
		add(s.d.EqualFold(`a.username`), f.Username)
	}
	if act := strings.TrimSuffix(f.Action, "."); act != "" {
		add(`(a.action = ? OR substr(a.action, 1, ?) = ?)`, act, len(act)+1, act+".")
	}
	if f.Interface != "" {
		add(`a.interface = ?`, f.Interface)
	}
	if f.TargetType != "" {
		add(`a.target_type = ?`, f.TargetType)
	}
	if f.Text != "" {
		add(`(`+s.d.Position(`lower(COALESCE(a.details, ''))`, `lower(?)`)+` > 0 OR a.target_id = ? OR a.request_id = ?)`, f.Text, f.Text, f.Text)
	}
	if f.Scope != nil && !f.Scope.All {
		cond, sargs := f.Scope.clause()
		add(`NOT EXISTS (SELECT 1 FROM audit_devices ad WHERE ad.audit_id = a.id
			AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = ad.device_id AND `+cond+`))`, sargs...)
	}
	where := "1=1"
	if len(conds) > 0 {
		where = strings.Join(conds, " AND ")
	}
	// ORDER BY at, id follows the audit_log_at index (its rows are
	// ordered by at, then rowid): no sort of the selection.
	rows, err := s.reader.QueryContext(ctx, `SELECT a.id, a.at, a.user_id, a.username, a.key_id, a.session_id, a.interface,
		a.action, a.target_type, COALESCE(a.target_id, ''), COALESCE(a.request_id, ''), COALESCE(a.remote_addr, ''),
		COALESCE(a.details, ''), COALESCE(k.prefix, '')
		FROM audit_log a LEFT JOIN api_keys k ON k.id = a.key_id
		WHERE `+where+` ORDER BY a.at DESC, a.id DESC LIMIT ? OFFSET ?`, append(args, limit+1, offset)...)
	if err != nil {
		return nil, false, fmt.Errorf("search audit: %w", err)
	}
	defer rows.Close()
	out := []AuditRecord{}
	for rows.Next() {
		var e AuditRecord
		var details string
		if err := rows.Scan(&e.ID, &e.At, &e.UserID, &e.Username, &e.KeyID, &e.SessionID, &e.Interface, &e.Action,
			&e.TargetType, &e.TargetID, &e.RequestID, &e.RemoteAddr, &details, &e.KeyPrefix); err != nil {
			return nil, false, err
		}
		if details != "" {
			// Details this release cannot read are shown without them.
			_ = json.Unmarshal([]byte(details), &e.Details)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}
