package inventory

import (
	"context"

	"backupd/db"
)

// Saved is a device as a save stored it, with how the save used the
// device's credential (for the audit log; Used is false when it used
// none).
type Saved struct {
	Device db.Device
	Use    CredentialUse
	Used   bool
}

// CreateDevice stores d, a new device that passed CheckDevice, unless it
// attaches a credential who may not use (*CredentialUseError). The store
// checks the references; the caller, who knows who asks, the scope.
func CreateDevice(ctx context.Context, store *db.Store, who CredentialUser, d db.Device) (Saved, error) {
	use, used, err := CheckCredentialUse(who, nil, d)
	if err != nil {
		return Saved{}, err
	}
	out, err := store.CreateDevice(ctx, d)
	if err != nil {
		return Saved{}, err
	}
	return Saved{Device: out, Use: use, Used: used}, nil
}

// UpdateDevice changes the stored device id as change says, in one
// transaction, and refuses the change (*CredentialUseError) when it uses
// a credential who may not use: attaching one, or sending the device's
// to a new address. The check is made against the device as it stands in
// the transaction, not as the caller last read it, so that an edit that
// raced another cannot slip a credential past it.
func UpdateDevice(ctx context.Context, store *db.Store, who CredentialUser, id int64, change func(d *db.Device)) (Saved, error) {
	var use CredentialUse
	var used bool
	out, err := store.UpdateDevice(ctx, id, func(d *db.Device) error {
		before := *d
		change(d)
		var err error
		use, used, err = CheckCredentialUse(who, &before, *d)
		return err
	})
	if err != nil {
		return Saved{}, err
	}
	return Saved{Device: out, Use: use, Used: used}, nil
}
