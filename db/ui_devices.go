package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Queries of the web interface's devices page: the choices of the device
// form, the CSV export's walk over the list, "back up now" for a
// selection or a group, and the all-or-nothing CSV import.

// DeviceChoice is a credential or template a device can point at, as the
// form offers it. Platform is set for templates only.
type DeviceChoice struct {
	ID       int64
	Name     string
	Platform string
}

// DeviceCredentialChoices returns every credential by name (no secret).
func (s *Store) DeviceCredentialChoices(ctx context.Context) ([]DeviceChoice, error) {
	out, err := queryAll(ctx, s.reader, scanDeviceChoice,
		`SELECT id, name, '' FROM credentials ORDER BY name COLLATE NOCASE, id`)
	if err != nil {
		return nil, fmt.Errorf("credential choices: %w", err)
	}
	return out, nil
}

// DeviceTemplateChoices returns every template by platform, then name.
func (s *Store) DeviceTemplateChoices(ctx context.Context) ([]DeviceChoice, error) {
	out, err := queryAll(ctx, s.reader, scanDeviceChoice,
		`SELECT id, name, platform FROM templates ORDER BY platform, name COLLATE NOCASE, id`)
	if err != nil {
		return nil, fmt.Errorf("template choices: %w", err)
	}
	return out, nil
}

func scanDeviceChoice(row scanner) (DeviceChoice, error) {
	var c DeviceChoice
	err := row.Scan(&c.ID, &c.Name, &c.Platform)
	return c, err
}

// DevicesAfter returns up to limit devices in scope matching f whose id is
// above afterID, by id. Walking a long list this way costs the same for
// every page, where OFFSET would read all the pages before.
func (s *Store) DevicesAfter(ctx context.Context, scope Scope, f DeviceFilter, afterID int64, limit int) ([]Device, error) {
	where, args := f.where(scope)
	items, err := queryAll(ctx, s.reader, scanDevice, `SELECT `+deviceColumns+` FROM devices d
		WHERE d.id > ? AND `+where+` ORDER BY d.id LIMIT ?`, append(append([]any{afterID}, args...), limit)...)
	if err != nil {
		return nil, fmt.Errorf("devices after %d: %w", afterID, err)
	}
	return items, nil
}

// DeviceIDsMatching returns the ids of every device in scope matching f,
// by id: the targets of "back up this group".
func (s *Store) DeviceIDsMatching(ctx context.Context, scope Scope, f DeviceFilter) ([]int64, error) {
	where, args := f.where(scope)
	ids, err := queryAll(ctx, s.reader, scanID, `SELECT d.id FROM devices d WHERE `+where+` ORDER BY d.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("device ids: %w", err)
	}
	return ids, nil
}

func scanID(row scanner) (int64, error) {
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
	rows, err := s.reader.QueryContext(ctx, `SELECT j.value, d.id IS NOT NULL, COALESCE(`+cond+`, 0)
		FROM json_each(?) j LEFT JOIN devices d ON d.id = j.value`, append(args, string(list))...)
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
	out, err := queryAll(ctx, s.reader, func(row scanner) (string, error) {
		var n string
		err := row.Scan(&n)
		return n, err
	}, `SELECT name FROM devices WHERE name IN (SELECT value FROM json_each(?))`, string(list))
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
	return s.InTx(ctx, func(tx *sql.Tx) error {
		if err := checkImportReferences(ctx, tx, devices); err != nil {
			return err
		}
		taken, err := tx.PrepareContext(ctx, `SELECT 1 FROM devices WHERE name = ?`)
		if err != nil {
			return err
		}
		defer taken.Close()
		insert, err := tx.PrepareContext(ctx, `INSERT INTO devices (name, host, port, platform, login_method, group_id,
			credential_id, template_id, encoding, enabled, remarks, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insert.Close()
		now := Now()
		for i, d := range devices {
			var one int
			switch err := taken.QueryRowContext(ctx, d.Name).Scan(&one); {
			case err == nil:
				return &ImportError{Index: i, Err: ErrNameExists}
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("import device %d: %w", i, err)
			}
			if _, err := insert.ExecContext(ctx, d.Name, d.Host, d.Port, d.Platform, d.LoginMethod, d.GroupID,
				d.CredentialID, d.TemplateID, d.Encoding, d.Enabled, nullString(d.Remarks), StatusUnknown, now, now); err != nil {
				return fmt.Errorf("import device %d: %w", i, err)
			}
		}
		return nil
	})
}

// checkImportReferences runs the store's reference checks once for each
// distinct (group, credential, template, platform) combination, which a
// large import repeats thousands of times.
func checkImportReferences(ctx context.Context, q querier, devices []Device) error {
	type refs struct {
		group, credential, template int64
		platform                    string
	}
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	seen := map[refs]bool{}
	for i, d := range devices {
		k := refs{val(d.GroupID), val(d.CredentialID), val(d.TemplateID), ""}
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
