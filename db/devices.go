package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"backupd/db/engine"
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
	// ZoneID is the zone the device lives in (LocalZone when 0 on
	// create): the server backs up its own zone's devices, a remote
	// collector those of its zone.
	ZoneID int64
	// AddressPin is the address (Address) the device's credential was
	// last sent to or confirmed for; nil while it never was. Only the
	// store writes it (PinAddress, ConfirmAddress, accepting a host key):
	// UpdateDevice keeps it whatever the patch does.
	AddressPin *string
	// InventorySourceID is the inventory source the device is synced
	// from and InventoryKey the source's stable id for it; both nil for
	// a device made by hand or imported. Only a sync sets them
	// (ApplyInventorySync): UpdateDevice keeps them.
	InventorySourceID *int64
	InventoryKey      *string
	// DisabledBySync is set on a device a sync disabled (it vanished
	// from its source), which a later sync enables again; never on one
	// a person disabled. Enabling the device by hand clears it.
	DisabledBySync bool
}

// Address is where the device's credential goes: login method, host,
// port and zone, in the form AddressPin holds ("telnet|10.0.0.1|23|1").
func (d Device) Address() string {
	return d.LoginMethod + "|" + d.Host + "|" + strconv.Itoa(d.Port) + "|" + strconv.FormatInt(max(d.ZoneID, LocalZone), 10)
}

const deviceColumns = `d.id, d.name, d.host, d.port, d.platform, d.login_method, d.group_id, d.credential_id,
	d.template_id, d.encoding, d.enabled, d.remarks, d.status, d.last_checked_at, d.last_backup_at,
	d.last_backup_success, d.last_changed_at, d.created_at, d.updated_at, d.zone_id, d.address_pin,
	d.inventory_source_id, d.inventory_key, d.disabled_by_sync`

func scanDevice(row engine.Scanner) (Device, error) {
	var d Device
	var group, cred, tpl sql.NullInt64
	var remarks, checked, backup, changed, pin sql.NullString
	var success sql.NullBool
	err := row.Scan(&d.ID, &d.Name, &d.Host, &d.Port, &d.Platform, &d.LoginMethod, &group, &cred, &tpl,
		&d.Encoding, &d.Enabled, &remarks, &d.Status, &checked, &backup, &success, &changed, &d.CreatedAt, &d.UpdatedAt, &d.ZoneID, &pin,
		&d.InventorySourceID, &d.InventoryKey, &d.DisabledBySync)
	if pin.Valid {
		d.AddressPin = &pin.String
	}
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
	// ZoneID keeps the devices of one zone.
	ZoneID *int64
	// ChangedSince keeps the devices whose configuration last changed at
	// or after it (never-changed devices are left out).
	ChangedSince *time.Time
	// Failing keeps the enabled devices whose last backup failed: the
	// dashboard's "Failing" count.
	Failing bool
	// HandMade keeps the devices no inventory source syncs (made by hand
	// or imported); InventorySourceID those one source syncs.
	HandMade          bool
	InventorySourceID *int64
	// DisabledBySync keeps the devices a sync disabled because they
	// vanished from their source.
	DisabledBySync bool
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

// where is the condition on devices d of f within scope, in d's spelling.
func (f DeviceFilter) where(d engine.Dialect, scope Scope) (string, []any) {
	cond, args := scope.clause()
	parts := []string{cond}
	if q := strings.TrimSpace(f.Query); q != "" {
		c, a := deviceSearch(d, q)
		parts, args = append(parts, c), append(args, a...)
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
	if f.ZoneID != nil {
		parts = append(parts, "d.zone_id = ?")
		args = append(args, *f.ZoneID)
	}
	if f.ChangedSince != nil {
		parts = append(parts, "d.last_changed_at >= ?")
		args = append(args, f.ChangedSince.UTC().Format(TimeFormat))
	}
	if f.Failing {
		parts = append(parts, "d.last_backup_success = 0 AND d.enabled = 1")
	}
	if f.HandMade {
		parts = append(parts, "d.inventory_source_id IS NULL")
	}
	if f.InventorySourceID != nil {
		parts = append(parts, "d.inventory_source_id = ?")
		args = append(args, *f.InventorySourceID)
	}
	if f.DisabledBySync {
		parts = append(parts, "d.disabled_by_sync = 1")
	}
	return strings.Join(parts, " AND "), args
}

// deviceSearch is the condition on devices d of those whose name or host
// holds q (ASCII case ignored), through the engine's substring index,
// with its arguments: the one query whose shape is the engine's own, as
// each engine's index is. SQLite has the trigram table devices_search,
// which needs three characters; PostgreSQL finds the same substring
// through the trigram indexes of 00017 (devices_name_trgm is on
// name::text, so the condition names it so).
func deviceSearch(d engine.Dialect, q string) (string, []any) {
	pattern := "%" + escapeLike(q) + "%"
	if _, pg := d.(engine.Postgres); pg {
		return `(d.name::text ILIKE ? ESCAPE '\' OR d.host ILIKE ? ESCAPE '\')`, []any{pattern, pattern}
	}
	if utf8.RuneCountInString(q) >= 3 {
		return `d.id IN (SELECT rowid FROM devices_search WHERE devices_search MATCH ?)`, []any{`"` + strings.ReplaceAll(q, `"`, `""`) + `"`}
	}
	return `(d.name LIKE ? ESCAPE '\' OR d.host LIKE ? ESCAPE '\')`, []any{pattern, pattern}
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ListDevices returns one page of the devices visible in scope that match
// the filter, in the filter's order (by id unless it says otherwise), and
// their total count.
func (s *Store) ListDevices(ctx context.Context, scope Scope, f DeviceFilter, limit, offset int) ([]Device, int, error) {
	count, list, args, err := listDevicesQueries(s.d, scope, f)
	if err != nil {
		return nil, 0, err
	}
	var total int
	if err := s.reader.QueryRowContext(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count devices: %w", err)
	}
	items, err := engine.QueryAll(ctx, s.reader, scanDevice, list, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list devices: %w", err)
	}
	return items, total, nil
}

// listDevicesQueries are ListDevices' count and page queries, with their
// arguments (the page query takes limit and offset after them).
func listDevicesQueries(d engine.Dialect, scope Scope, f DeviceFilter) (count, list string, args []any, err error) {
	order, ok := f.Sort.orderBy()
	if !ok {
		return "", "", nil, fmt.Errorf("list devices: unknown order %q", f.Sort)
	}
	where, args := f.where(d, scope)
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
	return getDevice(ctx, s.read(), id)
}

// getDeviceQuery is prepared when the store opens (readQueries).
const getDeviceQuery = `SELECT ` + deviceColumns + ` FROM devices d WHERE d.id = ?`

func getDevice(ctx context.Context, q engine.Querier, id int64) (Device, error) {
	d, err := scanDevice(q.QueryRowContext(ctx, getDeviceQuery, id))
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrNotFound
	}
	if err != nil {
		return d, fmt.Errorf("get device %d: %w", id, err)
	}
	return d, nil
}

// DeviceByName returns the device of that name (ASCII case folded, as
// the name column compares) regardless of scope, or ErrNotFound.
func (s *Store) DeviceByName(ctx context.Context, name string) (Device, error) {
	d, err := scanDevice(s.reader.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM devices d WHERE d.name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrNotFound
	}
	if err != nil {
		return d, fmt.Errorf("device %q: %w", name, err)
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
func checkDeviceReferences(ctx context.Context, q engine.Querier, d Device) error {
	if d.GroupID != nil {
		if ok, err := engine.Exists(ctx, q, `SELECT 1 FROM device_groups WHERE id = ?`, *d.GroupID); err != nil {
			return err
		} else if !ok {
			return &ErrReference{"group_id", fmt.Sprintf("group %d does not exist", *d.GroupID)}
		}
	}
	if d.ZoneID != LocalZone && d.ZoneID != 0 { // 0: the default, local
		if ok, err := engine.Exists(ctx, q, `SELECT 1 FROM zones WHERE id = ?`, d.ZoneID); err != nil {
			return err
		} else if !ok {
			return &ErrReference{"zone_id", fmt.Sprintf("zone %d does not exist", d.ZoneID)}
		}
	}
	if d.CredentialID != nil {
		if ok, err := engine.Exists(ctx, q, `SELECT 1 FROM credentials WHERE id = ?`, *d.CredentialID); err != nil {
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
	if d.ZoneID == 0 {
		d.ZoneID = LocalZone
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkDeviceReferences(ctx, tx, d); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM devices WHERE name = ?`, d.Name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		id, err := engine.InsertID(ctx, tx, `INSERT INTO devices (name, host, port, platform, login_method, group_id,
			credential_id, template_id, encoding, enabled, remarks, status, created_at, updated_at, zone_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			d.Name, d.Host, d.Port, d.Platform, d.LoginMethod, d.GroupID, d.CredentialID, d.TemplateID,
			d.Encoding, d.Enabled, engine.NullString(d.Remarks), StatusUnknown, now, now, d.ZoneID)
		if err != nil {
			return fmt.Errorf("insert device: %w", err)
		}
		out, err = getDevice(ctx, tx, id)
		return err
	})
	return out, err
}

// UpdateDevice reads the device, lets patch change it (patch may refuse
// with its own error) and writes it back, in one transaction.
// patch runs again when the transaction does (inTx): it must set, not add to, what it records.
func (s *Store) UpdateDevice(ctx context.Context, id int64, patch func(*Device) error) (Device, error) {
	var out Device
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		d, err := getDevice(ctx, tx, id)
		if err != nil {
			return err
		}
		was := d
		if err := patch(&d); err != nil {
			return err
		}
		// The sync's marks are the sync's: a person enabling the device
		// takes it back from the sync's disable.
		d.InventorySourceID, d.InventoryKey = was.InventorySourceID, was.InventoryKey
		d.DisabledBySync = was.DisabledBySync && !d.Enabled
		if d.ZoneID == 0 {
			d.ZoneID = LocalZone
		}
		if err := checkDeviceReferences(ctx, tx, d); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM devices WHERE name = ? AND id <> ?`, d.Name, id); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		if _, err := tx.ExecContext(ctx, `UPDATE devices SET name = ?, host = ?, port = ?, platform = ?, login_method = ?,
			group_id = ?, credential_id = ?, template_id = ?, encoding = ?, enabled = ?, remarks = ?, updated_at = ?,
			zone_id = ?, disabled_by_sync = ?
			WHERE id = ?`,
			d.Name, d.Host, d.Port, d.Platform, d.LoginMethod, d.GroupID, d.CredentialID, d.TemplateID,
			d.Encoding, d.Enabled, engine.NullString(d.Remarks), Now(), d.ZoneID, d.DisabledBySync, id); err != nil {
			return fmt.Errorf("update device: %w", err)
		}
		// A queued job follows its device to its zone.
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET zone_id = ? WHERE device_id = ? AND state = 'queued' AND zone_id <> ?`,
			d.ZoneID, id, d.ZoneID); err != nil {
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
		l.GroupPath, err = engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (string, error) {
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

// The device form's choices, the CSV export's walk over the list, "back
// up now" for a selection or a group, and the all-or-nothing CSV import.

// DeviceChoice is a credential or template a device can point at, as the
// form offers it. Platform is set for templates only.
type DeviceChoice struct {
	ID       int64
	Name     string
	Platform string
}

// DeviceCredentialChoices returns the credentials of scope by name (no
// secret): those a device form may offer its user.
func (s *Store) DeviceCredentialChoices(ctx context.Context, scope CredentialScope) ([]DeviceChoice, error) {
	where, args := "1=1", []any(nil)
	if !scope.All {
		list, err := json.Marshal(append([]int64{}, scope.IDs...))
		if err != nil {
			return nil, err
		}
		where, args = `id IN (SELECT CAST(value AS BIGINT) FROM `+s.d.JSONEach()+`)`, []any{string(list)}
	}
	out, err := engine.QueryAll(ctx, s.reader, scanDeviceChoice,
		`SELECT id, name, '' FROM credentials WHERE `+where+` ORDER BY `+s.d.FoldedOrder("name")+`, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("credential choices: %w", err)
	}
	return out, nil
}

// DeviceTemplateChoices returns every template by platform, then name.
func (s *Store) DeviceTemplateChoices(ctx context.Context) ([]DeviceChoice, error) {
	out, err := engine.QueryAll(ctx, s.reader, scanDeviceChoice,
		`SELECT id, name, platform FROM templates ORDER BY platform, `+s.d.FoldedOrder("name")+`, id`)
	if err != nil {
		return nil, fmt.Errorf("template choices: %w", err)
	}
	return out, nil
}

func scanDeviceChoice(row engine.Scanner) (DeviceChoice, error) {
	var c DeviceChoice
	err := row.Scan(&c.ID, &c.Name, &c.Platform)
	return c, err
}

// DevicesAfter returns up to limit devices in scope matching f whose id is
// above afterID, by id. Walking a long list this way costs the same for
// every page, where OFFSET would read all the pages before.
func (s *Store) DevicesAfter(ctx context.Context, scope Scope, f DeviceFilter, afterID int64, limit int) ([]Device, error) {
	where, args := f.where(s.d, scope)
	items, err := engine.QueryAll(ctx, s.reader, scanDevice, `SELECT `+deviceColumns+` FROM devices d
		WHERE d.id > ? AND `+where+` ORDER BY d.id LIMIT ?`, append(append([]any{afterID}, args...), limit)...)
	if err != nil {
		return nil, fmt.Errorf("devices after %d: %w", afterID, err)
	}
	return items, nil
}

// DeviceIDsMatching returns the ids of every device in scope matching f,
// by id: the targets of "back up this group".
func (s *Store) DeviceIDsMatching(ctx context.Context, scope Scope, f DeviceFilter) ([]int64, error) {
	where, args := f.where(s.d, scope)
	ids, err := engine.QueryAll(ctx, s.reader, scanID, `SELECT d.id FROM devices d WHERE `+where+` ORDER BY d.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("device ids: %w", err)
	}
	return ids, nil
}

func scanID(row engine.Scanner) (int64, error) {
	var id int64
	err := row.Scan(&id)
	return id, err
}

// DeviceIDsOutside sorts ids into those no device has (missing) and those
// of devices outside scope (outside), in one query however many there are.
func (s *Store) DeviceIDsOutside(ctx context.Context, scope Scope, ids []int64) (missing, outside []int64, err error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, nil, err
	}
	cond, args := scope.clause()
	rows, err := s.reader.QueryContext(ctx, `SELECT j.id, d.id IS NOT NULL, COALESCE(`+cond+`, 0=1)
		FROM (SELECT CAST(value AS BIGINT) AS id FROM `+s.d.JSONEach()+`) j LEFT JOIN devices d ON d.id = j.id`, append(args, string(list))...)
	if err != nil {
		return nil, nil, fmt.Errorf("check device ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var found, in bool
		if err := rows.Scan(&id, &found, &in); err != nil {
			return nil, nil, fmt.Errorf("check device ids: %w", err)
		}
		switch {
		case !found:
			missing = append(missing, id)
		case !in:
			outside = append(outside, id)
		}
	}
	return missing, outside, rows.Err()
}

// ExistingDeviceNames returns those of names that a device already has,
// compared as the name column does (ASCII case folded), as stored.
func (s *Store) ExistingDeviceNames(ctx context.Context, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(names)
	if err != nil {
		return nil, err
	}
	// CAST AS citext: PostgreSQL compares the names without case, as the
	// column does (SQLite uses the column's NOCASE; to it citext is a
	// type name of TEXT affinity).
	out, err := engine.QueryAll(ctx, s.reader, func(row engine.Scanner) (string, error) {
		var n string
		err := row.Scan(&n)
		return n, err
	}, `SELECT name FROM devices WHERE name IN (SELECT CAST(value AS citext) FROM `+s.d.JSONEach()+`)`, string(list))
	if err != nil {
		return nil, fmt.Errorf("existing device names: %w", err)
	}
	return out, nil
}

// ImportError is why ImportDevices created nothing: the device at Index
// of the list failed with Err (ErrNameExists or an *ErrReference).
type ImportError struct {
	Index int
	Err   error
}

func (e *ImportError) Error() string { return fmt.Sprintf("device %d: %v", e.Index, e.Err) }

func (e *ImportError) Unwrap() error { return e.Err }

// ImportDevices creates every device of the list in one transaction: all
// of them, or none when one fails. The caller has validated the fields;
// names and references are checked again here, since another writer may
// have come between, each distinct reference once.
func (s *Store) ImportDevices(ctx context.Context, devices []Device) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkImportReferences(ctx, tx, devices); err != nil {
			return err
		}
		taken, err := tx.PrepareContext(ctx, `SELECT 1 FROM devices WHERE name = ?`)
		if err != nil {
			return err
		}
		defer taken.Close()
		insert, err := tx.PrepareContext(ctx, `INSERT INTO devices (name, host, port, platform, login_method, group_id,
			credential_id, template_id, encoding, enabled, remarks, status, created_at, updated_at, zone_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insert.Close()
		now := Now()
		for i, d := range devices {
			if d.ZoneID == 0 {
				d.ZoneID = LocalZone
			}
			var one int
			switch err := taken.QueryRowContext(ctx, d.Name).Scan(&one); {
			case err == nil:
				return &ImportError{Index: i, Err: ErrNameExists}
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("import device %d: %w", i, err)
			}
			if _, err := insert.ExecContext(ctx, d.Name, d.Host, d.Port, d.Platform, d.LoginMethod, d.GroupID,
				d.CredentialID, d.TemplateID, d.Encoding, d.Enabled, engine.NullString(d.Remarks), StatusUnknown, now, now, d.ZoneID); err != nil {
				return fmt.Errorf("import device %d: %w", i, err)
			}
		}
		return nil
	})
}

// checkImportReferences runs the store's reference checks once for each
// distinct (group, credential, template, zone, platform) combination, which a
// large import repeats thousands of times.
func checkImportReferences(ctx context.Context, q engine.Querier, devices []Device) error {
	type refs struct {
		group, credential, template, zone int64
		platform                          string
	}
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	seen := map[refs]bool{}
	for i, d := range devices {
		k := refs{val(d.GroupID), val(d.CredentialID), val(d.TemplateID), d.ZoneID, ""}
		if d.TemplateID != nil {
			k.platform = d.Platform
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		if err := checkDeviceReferences(ctx, q, d); err != nil {
			var ref *ErrReference
			if errors.As(err, &ref) {
				return &ImportError{Index: i, Err: err}
			}
			return err
		}
	}
	return nil
}

// maxCountIDs bounds the ids of one devicesUsing call (and its SQL
// parameters): a page of a list is far fewer.
const maxCountIDs = 500

// devicesUsing counts scope's devices per value of column (a constant
// from this file, never user input) among ids.
func (s *Store) devicesUsing(ctx context.Context, column string, scope Scope, ids []int64) (map[int64]int, error) {
	out := map[int64]int{}
	if len(ids) == 0 {
		return out, nil
	}
	if len(ids) > maxCountIDs {
		return nil, fmt.Errorf("%d ids, at most %d", len(ids), maxCountIDs)
	}
	cond, sargs := scope.clause()
	args := make([]any, 0, len(ids)+len(sargs))
	for _, id := range ids {
		args = append(args, id)
	}
	args = append(args, sargs...)
	rows, err := s.reader.QueryContext(ctx, `SELECT d.`+column+`, COUNT(*) FROM devices d
		WHERE d.`+column+` IN (`+engine.Placeholders(len(ids))+`) AND `+cond+` GROUP BY d.`+column, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}
