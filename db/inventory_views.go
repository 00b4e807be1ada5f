package db

import (
	"context"
	"fmt"

	"backupd/db/engine"
)

// InventoryView is what a sync's planner reads of the store beside the
// source's own devices (SyncedDevices): every device's name and owner, so
// that a name another source or a person took is seen before the apply
// refuses it; the group tree, so that a path naming a group that sits
// elsewhere is seen too; and the credentials and templates a source may
// name.
type InventoryView struct {
	Devices     []InventoryViewDevice
	GroupPaths  [][]string
	Credentials []DeviceChoice
	Templates   []DeviceChoice
}

// InventoryViewDevice is a device's name and who owns it: SourceID and
// Key nil for a device made by hand.
type InventoryViewDevice struct {
	ID       int64
	Name     string
	Enabled  bool
	SourceID *int64
	Key      *string
}

// InventoryView reads the view a planner compares a source with.
func (s *Store) InventoryView(ctx context.Context) (InventoryView, error) {
	var v InventoryView
	var err error
	v.Devices, err = engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (InventoryViewDevice, error) {
		var d InventoryViewDevice
		err := r.Scan(&d.ID, &d.Name, &d.Enabled, &d.SourceID, &d.Key)
		return d, err
	}, `SELECT id, name, enabled, inventory_source_id, inventory_key FROM devices ORDER BY id`)
	if err != nil {
		return v, fmt.Errorf("inventory view: devices: %w", err)
	}
	paths, err := groupPaths(ctx, s.reader)
	if err != nil {
		return v, fmt.Errorf("inventory view: groups: %w", err)
	}
	for _, p := range paths {
		v.GroupPaths = append(v.GroupPaths, p)
	}
	if v.Credentials, err = s.DeviceCredentialChoices(ctx, CredentialScope{All: true}); err != nil {
		return v, err
	}
	if v.Templates, err = s.DeviceTemplateChoices(ctx); err != nil {
		return v, err
	}
	return v, nil
}
