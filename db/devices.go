package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Device statuses.
const (
	StatusUnknown     = "unknown"
	StatusReachable   = "reachable"
	StatusUnreachable = "unreachable"
)

// Device is a network device backupd logs into.
type Device struct {
	ID                int64
	Name              string
	Host              string
	Port              int
	Platform          string
	LoginMethod       string
	GroupID           *int64
	CredentialID      *int64
	TemplateID        *int64
	Encoding          string
	Enabled           bool
	Remarks           *string
	Status            string
	LastCheckedAt     *string
	LastBackupAt      *string
	LastBackupSuccess *bool
	// LastChangedAt is when the configuration last changed: the start of
	// the newest backup that found a change (UTC, TimeFormat); nil while
	// none has, as with only the first backup.
	LastChangedAt *string
	CreatedAt     string
	UpdatedAt     string
}

const deviceColumns = `d.id, d.name, d.host, d.port, d.platform, d.login_method, d.group_id, d.credential_id,
	d.template_id, d.encoding, d.enabled, d.remarks, d.status, d.last_checked_at, d.last_backup_at,
	d.last_backup_success, d.last_changed_at, d.created_at, d.updated_at`

func scanDevice(row scanner) (Device, error) {
	var d Device
	var group, cred, tpl sql.NullInt64
	var remarks, checked, backup, changed sql.NullString
	var success sql.NullBool
	err := row.Scan(&d.ID, &d.Name, &d.Host, &d.Port, &d.Platform, &d.LoginMethod, &group, &cred, &tpl,
		&d.Encoding, &d.Enabled, &remarks, &d.Status, &checked, &backup, &success, &changed, &d.CreatedAt, &d.UpdatedAt)
	if group.Valid {
		d.GroupID = &group.Int64
	}
	if cred.Valid {
		d.CredentialID = &cred.Int64
	}
	if tpl.Valid {
		d.TemplateID = &tpl.Int64
	}
	if remarks.Valid {
		d.Remarks = &remarks.String
	}
	if checked.Valid {
		d.LastCheckedAt = &checked.String
	}
	if backup.Valid {
		d.LastBackupAt = &backup.String
	}
	if success.Valid {
		d.LastBackupSuccess = &success.Bool
	}
	if changed.Valid {
		d.LastChangedAt = &changed.String
	}
	return d, err
}

// DeviceFilter narrows a device list. Zero values do not filter.
type DeviceFilter struct {
	Query    string // substring of name or host
	GroupID  *int64 // the group and its subgroups
	Platform string
	Status   string
	Enabled  *bool
	// ChangedSince keeps the devices whose configuration last changed at
	// or after it (never-changed devices are left out).
	ChangedSince *time.Time
	// Sort orders ListDevices; the zero value is by id.
	Sort DeviceSort
}

// DeviceSort is an order of the device list.
type DeviceSort string

// The orders of the device list. By last change, devices whose
// configuration never changed come last either way; ties go by id. Each
// order is an index of 00013 (devices_last_changed_newest, _oldest):
// orderBy must keep their terms.
const (
	DeviceSortID             DeviceSort = ""
	DeviceSortLastChanged    DeviceSort = "last_changed"     // newest change first
	DeviceSortLastChangedAsc DeviceSort = "last_changed_asc" // oldest change first
)

// orderBy is the ORDER BY of s over devices d; false for an unknown order.
func (s DeviceSort) orderBy() (string, bool) {
	switch s {
	case DeviceSortID:
		return `d.id`, true
	case DeviceSortLastChanged:
		return `d.last_changed_at IS NULL, d.last_changed_at DESC, d.id`, true
	case DeviceSortLastChangedAsc:
		return `d.last_changed_at IS NULL, d.last_changed_at, d.id`, true
	}
	return "", false
}

func (f DeviceFilter) where(scope Scope) (string, []any) {
	cond, args := scope.clause()
	parts := []string{cond}
	if q := strings.TrimSpace(f.Query); q != "" {
		if utf8.RuneCountInString(q) >= 3 {
			// The trigram index finds substrings of three characters or more;
			// a quoted phrase takes q literally.
			parts = append(parts, `d.id IN (SELECT rowid FROM devices_search WHERE devices_search MATCH ?)`)
			args = append(args, `"`+strings.ReplaceAll(q, `"`, `""`)+`"`)
		} else {
			pattern := "%" + escapeLike(q) + "%"
			parts = append(parts, `(d.name LIKE ? ESCAPE '\' OR d.host LIKE ? ESCAPE '\')`)
			args = append(args, pattern, pattern)
		}
	}
	if f.GroupID != nil {
		parts = append(parts, `d.group_id IN (SELECT g.id FROM device_groups g JOIN device_groups p
			ON substr(g.path, 1, length(p.path)) = p.path WHERE p.id = ?)`)
		args = append(args, *f.GroupID)
	}
	if f.Platform != "" {
		parts = append(parts, "d.platform = ?")
		args = append(args, f.Platform)
	}
	if f.Status != "" {
		parts = append(parts, "d.status = ?")
		args = append(args, f.Status)
	}
	if f.Enabled != nil {
		parts = append(parts, "d.enabled = ?")
		args = append(args, *f.Enabled)
	}
	if f.ChangedSince != nil {
		parts = append(parts, "d.last_changed_at >= ?")
		args = append(args, f.ChangedSince.UTC().Format(TimeFormat))
	}
	return strings.Join(parts, " AND "), args
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ListDevices returns one page of the devices visible in scope that match
// the filter, in the filter's order (by id unless it says otherwise), and
// their total count.
func (s *Store) ListDevices(ctx context.Context, scope Scope, f DeviceFilter, limit, offset int) ([]Device, int, error) {
	count, list, args, err := listDevicesQueries(scope, f)
	if err != nil {
		return nil, 0, err
	}
	var total int
	if err := s.reader.QueryRowContext(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count devices: %w", err)
	}
	items, err := queryAll(ctx, s.reader, scanDevice, list, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list devices: %w", err)
	}
	return items, total, nil
}

// listDevicesQueries are ListDevices' count and page queries, with their
// arguments (the page query takes limit and offset after them).
func listDevicesQueries(scope Scope, f DeviceFilter) (count, list string, args []any, err error) {
	order, ok := f.Sort.orderBy()
	if !ok {
		return "", "", nil, fmt.Errorf("list devices: unknown order %q", f.Sort)
	}
	where, args := f.where(scope)
	// The page's ids first, from the indexes where the filter allows, then
	// only those rows: sorting whole rows of a large scope costs more.
	return `SELECT COUNT(*) FROM devices d WHERE ` + where,
		`SELECT ` + deviceColumns + ` FROM devices d WHERE d.id IN (
		SELECT d.id FROM devices d WHERE ` + where + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?) ORDER BY ` + order,
		args, nil
}

// GetDevice returns a device regardless of scope, or ErrNotFound. Callers
// check scope with DeviceInScope so that "missing" and "forbidden" stay
// distinct answers.
func (s *Store) GetDevice(ctx context.Context, id int64) (Device, error) {
	return getDevice(ctx, s.reader, id)
}

func getDevice(ctx context.Context, q querier, id int64) (Device, error) {
	d, err := scanDevice(q.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM devices d WHERE d.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrNotFound
	}
	if err != nil {
		return d, fmt.Errorf("get device %d: %w", id, err)
	}
	return d, nil
}

// DeviceInScope reports whether the device lies in scope.
func (s *Store) DeviceInScope(ctx context.Context, scope Scope, d Device) (bool, error) {
	if scope.All {
		return true, nil
	}
	if d.GroupID == nil {
		return false, nil
	}
	return s.GroupInScope(ctx, scope, *d.GroupID)
}

// ErrReference is a device field naming a row that does not exist (or does
// not fit); Field says which.
type ErrReference struct {
	Field   string
	Message string
}

func (e *ErrReference) Error() string { return e.Field + ": " + e.Message }

// checkDeviceReferences verifies the group, credential and template a
// device points at.
func checkDeviceReferences(ctx context.Context, q querier, d Device) error {
	if d.GroupID != nil {
		if ok, err := exists(ctx, q, `SELECT 1 FROM device_groups WHERE id = ?`, *d.GroupID); err != nil {
			return err
		} else if !ok {
			return &ErrReference{"group_id", fmt.Sprintf("group %d does not exist", *d.GroupID)}
		}
	}
	if d.CredentialID != nil {
		if ok, err := exists(ctx, q, `SELECT 1 FROM credentials WHERE id = ?`, *d.CredentialID); err != nil {
			return err
		} else if !ok {
			return &ErrReference{"credential_id", fmt.Sprintf("credential %d does not exist", *d.CredentialID)}
		}
	}
	if d.TemplateID != nil {
		t, err := getTemplate(ctx, q, *d.TemplateID)
		if errors.Is(err, ErrNotFound) {
			return &ErrReference{"template_id", fmt.Sprintf("template %d does not exist", *d.TemplateID)}
		}
		if err != nil {
			return err
		}
		if t.Platform != d.Platform {
			return &ErrReference{"template_id", fmt.Sprintf("template %d is for platform %s, the device is %s", t.ID, t.Platform, d.Platform)}
		}
	}
	return nil
}

// CreateDevice inserts d after checking its references and name.
func (s *Store) CreateDevice(ctx context.Context, d Device) (Device, error) {
	var out Device
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if err := checkDeviceReferences(ctx, tx, d); err != nil {
			return err
		}
		if taken, err := exists(ctx, tx, `SELECT 1 FROM devices WHERE name = ?`, d.Name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		res, err := tx.ExecContext(ctx, `INSERT INTO devices (name, host, port, platform, login_method, group_id,
			credential_id, template_id, encoding, enabled, remarks, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			d.Name, d.Host, d.Port, d.Platform, d.LoginMethod, d.GroupID, d.CredentialID, d.TemplateID,
			d.Encoding, d.Enabled, nullString(d.Remarks), StatusUnknown, now, now)
		if err != nil {
			return fmt.Errorf("insert device: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		out, err = getDevice(ctx, tx, id)
		return err
	})
	return out, err
}

// UpdateDevice reads the device, lets patch change it (patch may refuse
// with its own error) and writes it back, in one transaction.
func (s *Store) UpdateDevice(ctx context.Context, id int64, patch func(*Device) error) (Device, error) {
	var out Device
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		d, err := getDevice(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := patch(&d); err != nil {
			return err
		}
		if err := checkDeviceReferences(ctx, tx, d); err != nil {
			return err
		}
		if taken, err := exists(ctx, tx, `SELECT 1 FROM devices WHERE name = ? AND id <> ?`, d.Name, id); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		if _, err := tx.ExecContext(ctx, `UPDATE devices SET name = ?, host = ?, port = ?, platform = ?, login_method = ?,
			group_id = ?, credential_id = ?, template_id = ?, encoding = ?, enabled = ?, remarks = ?, updated_at = ?
			WHERE id = ?`,
			d.Name, d.Host, d.Port, d.Platform, d.LoginMethod, d.GroupID, d.CredentialID, d.TemplateID,
			d.Encoding, d.Enabled, nullString(d.Remarks), Now(), id); err != nil {
			return fmt.Errorf("update device: %w", err)
		}
		out, err = getDevice(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteDevice removes a device and its backup history.
func (s *Store) DeleteDevice(ctx context.Context, id int64) error {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM devices WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete device: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
