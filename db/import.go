package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"backupd/db/engine"
)

// PlannedDevice is one device of an import from another tool's inventory
// (app/importer): created when Device.ID is 0, else updated. NewGroup and
// NewCredential point at a group or credential the same import creates:
// NewGroup by name (then Device.GroupID is ignored), NewCredential as a
// 1-based index into the import's credentials (0: none; then
// Device.CredentialID is kept).
type PlannedDevice struct {
	Device        Device
	NewGroup      string
	NewCredential int
}

// ApplyImport creates the groups (at the root of the tree) and the
// credentials (secrets already sealed), then creates or updates the
// devices (each in its Device.ZoneID, the local zone when 0), all in one
// transaction: everything or nothing. Names are
// checked again here, since another writer may have come between the
// plan and now; a clash is an *ImportError naming the device's index.
func (s *Store) ApplyImport(ctx context.Context, groups []string, creds []Credential, devices []PlannedDevice) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		groupIDs := make(map[string]int64, len(groups))
		for _, name := range groups {
			g, err := s.createGroupTx(ctx, tx, name, nil)
			if err != nil {
				return fmt.Errorf("create group %q: %w", name, err)
			}
			groupIDs[name] = g.ID
		}
		credIDs := make([]int64, len(creds))
		now := Now()
		for i, c := range creds {
			if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM credentials WHERE name = ?`, c.Name); err != nil {
				return err
			} else if taken {
				return fmt.Errorf("create credential %q: %w", c.Name, ErrNameExists)
			}
			var err error
			credIDs[i], err = engine.InsertID(ctx, tx,
				`INSERT INTO credentials (name, username, password, enable_password, private_key, remarks, created_at, updated_at)
				 VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				c.Name, c.Username, c.Password, c.EnablePassword, c.PrivateKey, engine.NullString(c.Remarks), now, now)
			if err != nil {
				return fmt.Errorf("insert credential: %w", err)
			}
		}
		// Zones are never deleted, but a plan's zone is checked as the
		// device form's is: once per zone.
		zones := map[int64]bool{LocalZone: true}
		for i, p := range devices {
			z := p.Device.ZoneID
			if z == 0 || zones[z] {
				continue
			}
			if ok, err := engine.Exists(ctx, tx, `SELECT 1 FROM zones WHERE id = ?`, z); err != nil {
				return err
			} else if !ok {
				return &ImportError{Index: i, Err: &ErrReference{"zone_id", fmt.Sprintf("zone %d does not exist", z)}}
			}
			zones[z] = true
		}
		taken, err := tx.PrepareContext(ctx, `SELECT id, zone_id FROM devices WHERE name = ?`)
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
		// An enabled device is no longer one the sync disabled
		// (disabled_by_sync): enabling it takes it back from the sync.
		update, err := tx.PrepareContext(ctx, `UPDATE devices SET host = ?, port = ?, platform = ?, login_method = ?,
			group_id = ?, credential_id = ?, template_id = ?, encoding = ?, enabled = ?, remarks = ?, updated_at = ?,
			zone_id = ?, disabled_by_sync = disabled_by_sync * ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer update.Close()
		for i, p := range devices {
			d := p.Device
			if d.ZoneID == 0 {
				d.ZoneID = LocalZone
			}
			if p.NewGroup != "" {
				id, ok := groupIDs[p.NewGroup]
				if !ok {
					return &ImportError{Index: i, Err: &ErrReference{"group_id", "group " + strconv.Quote(p.NewGroup) + " is not part of the import"}}
				}
				d.GroupID = &id
			}
			if p.NewCredential > 0 {
				if p.NewCredential > len(credIDs) {
					return &ImportError{Index: i, Err: &ErrReference{"credential_id", "credential " + strconv.Itoa(p.NewCredential) + " is not part of the import"}}
				}
				d.CredentialID = &credIDs[p.NewCredential-1]
			}
			var id, zone int64
			switch err := taken.QueryRowContext(ctx, d.Name).Scan(&id, &zone); {
			case err == nil && id != d.ID:
				return &ImportError{Index: i, Err: ErrNameExists}
			case err != nil && !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("import device %d: %w", i, err)
			case errors.Is(err, sql.ErrNoRows) && d.ID != 0:
				return &ImportError{Index: i, Err: ErrNotFound}
			}
			if d.ID == 0 {
				if _, err := insert.ExecContext(ctx, d.Name, d.Host, d.Port, d.Platform, d.LoginMethod, d.GroupID,
					d.CredentialID, d.TemplateID, d.Encoding, d.Enabled, engine.NullString(d.Remarks), StatusUnknown, now, now, d.ZoneID); err != nil {
					return fmt.Errorf("import device %d: %w", i, err)
				}
				continue
			}
			if _, err := update.ExecContext(ctx, d.Host, d.Port, d.Platform, d.LoginMethod, d.GroupID, d.CredentialID,
				d.TemplateID, d.Encoding, d.Enabled, engine.NullString(d.Remarks), now, d.ZoneID, boolInt(!d.Enabled), d.ID); err != nil {
				return fmt.Errorf("import device %d: %w", i, err)
			}
			if zone != d.ZoneID {
				// A queued job follows its device to its zone, as on an edit.
				if _, err := tx.ExecContext(ctx, `UPDATE jobs SET zone_id = ? WHERE device_id = ? AND state = 'queued'`, d.ZoneID, d.ID); err != nil {
					return fmt.Errorf("import device %d: %w", i, err)
				}
			}
		}
		return nil
	})
}
