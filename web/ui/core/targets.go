package core

import (
	"context"
	"strings"

	"backupd/app/inventory"
	"backupd/db"
)

// TargetDevices resolves the device names typed into a target field (a
// schedule's, a notification rule's: one a line, or separated by commas)
// among the devices of scope, as app/inventory reads them. Problems are
// added to errs as the "target" field's: none named, too many, and the
// names that match no device of scope, together.
func (u *UI) TargetDevices(ctx context.Context, scope db.Scope, text string, errs *FormErrors) ([]int64, error) {
	names := inventory.TargetNames(text)
	switch {
	case len(names) == 0:
		errs.Add("target", keyTargetNoDevices)
		return nil, nil
	case len(names) > inventory.MaxTargetDevices:
		errs.Add("target", keyTargetTooManyDevices, inventory.MaxTargetDevices)
		return nil, nil
	}
	ids, missing, err := inventory.DevicesNamed(ctx, u.Store, scope, names)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		shown := missing[:min(len(missing), 5)]
		errs.Add("target", keyTargetUnknownDevices, len(missing), strings.Join(shown, ", "))
	}
	return ids, nil
}
