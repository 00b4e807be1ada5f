package devices

import (
	"context"
	"errors"
	"strconv"

	"backupd/app/inventory"
	"backupd/db"
)

// Using a credential — attaching it to a device, or letting a device's
// credential go to a new address — needs the right to use it
// (app/inventory.CheckCredentialUse): the device form and the imports
// (edit.go, import_rows.go, routerdb.go) refuse what the user may not do,
// and the device page's confirmations of a new address or host key
// (hostkey.go) are for users who may use the credential. These are their
// shared helpers.

// credentialName is a credential's name for a message; its number when
// it no longer exists.
func (u *handlers) credentialName(ctx context.Context, id int64) (string, error) {
	c, err := u.Store.GetCredential(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return "#" + strconv.FormatInt(id, 10), nil
	}
	return c.Name, err
}

// credentialUseDetails adds to an audit entry's details which credential
// a save used and how (attached, or sent to a new address), when it used
// one.
func (u *handlers) credentialUseDetails(ctx context.Context, details map[string]any, use inventory.CredentialUse, used bool) error {
	if !used {
		return nil
	}
	name, err := u.credentialName(ctx, use.CredentialID)
	if err != nil {
		return err
	}
	details["credential_id"], details["credential"], details["credential_use"] = use.CredentialID, name, use.How
	return nil
}
