package devices

import (
	"errors"
	"net/http"

	"backupd/app/inventory"
	"backupd/db"
	"backupd/web/ui/core"
)

// The device page's confirmations: a changed SSH host key, and a changed
// address its credential does not go to yet.

// Host key.

// acceptDeviceHostKey pins the changed host key a device presented, as
// `backupd device accept-hostkey` does, provided it is still the key the
// page showed (its fingerprint comes back with the form): a key that
// changed again in between is refused, shown, and must be checked anew.
func (u *handlers) acceptDeviceHostKey(w http.ResponseWriter, r *http.Request) error {
	d, err := u.detailDevice(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	pinned, pending, err := u.Store.HostKeys(ctx, d.ID)
	if err != nil {
		return err
	}
	refuse := func(key string) error {
		return u.renderDeviceDetail(w, r, http.StatusConflict, d, deviceDetailPage{Error: key})
	}
	if pending == nil {
		return refuse(keyDetailHostKeyNothing)
	}
	s := core.SessionOf(r)
	if d.CredentialID != nil && !s.Principal().CanUseCredential(*d.CredentialID) {
		// The key decides who gets the credential at the next backup.
		return u.renderDeviceDetail(w, r, http.StatusForbidden, d, deviceDetailPage{Error: keyDetailCredentialUse})
	}
	fp := detailFingerprint(pending)
	if r.PostFormValue("fingerprint") != fp {
		return refuse(keyDetailHostKeyMoved)
	}
	switch err := u.Store.AcceptSeenHostKey(ctx, d.ID, pending); {
	case errors.Is(err, db.ErrNoPendingHostKey):
		return refuse(keyDetailHostKeyNothing)
	case errors.Is(err, db.ErrPendingHostKeyChanged):
		return refuse(keyDetailHostKeyMoved)
	case err != nil:
		return err
	}
	details := map[string]any{"fingerprint": fp}
	if pinned != nil {
		details["previous"] = detailFingerprint(pinned)
	}
	if d.CredentialID != nil {
		// The credential the accepted key lets go to the device.
		name, err := u.credentialName(ctx, *d.CredentialID)
		if err != nil {
			return err
		}
		details["credential_id"], details["credential"] = *d.CredentialID, name
	}
	u.Audit(r, "device.accept_hostkey", "device", d.ID, details)
	http.Redirect(w, r, detailPath(d)+"?hostkey=accepted#host-key", http.StatusSeeOther)
	return nil
}

// Address.

// confirmDeviceAddress lets the device's credential go to its changed
// address, as `backupd device accept-address` does, provided the address
// is still the one the page showed (it comes back with the form). Only a
// user who may use the credential confirms: confirming sends it there.
func (u *handlers) confirmDeviceAddress(w http.ResponseWriter, r *http.Request) error {
	d, err := u.detailDevice(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	refuse := func(status int, key string) error {
		return u.renderDeviceDetail(w, r, status, d, deviceDetailPage{Error: key})
	}
	if d.CredentialID == nil {
		return refuse(http.StatusConflict, keyDetailAddressNothing)
	}
	s := core.SessionOf(r)
	if !s.Principal().CanUseCredential(*d.CredentialID) {
		return refuse(http.StatusForbidden, keyDetailCredentialUse)
	}
	previous, err := u.Store.ConfirmAddress(ctx, d.ID, r.PostFormValue("address"))
	switch {
	case errors.Is(err, db.ErrAddressMoved):
		return refuse(http.StatusConflict, keyDetailAddressMoved)
	case errors.Is(err, db.ErrAddressConfirmed):
		return refuse(http.StatusConflict, keyDetailAddressNothing)
	case err != nil:
		return err
	}
	name, err := u.credentialName(ctx, *d.CredentialID)
	if err != nil {
		return err
	}
	u.Audit(r, "device.confirm_address", "device", d.ID, map[string]any{
		"address": inventory.ShowAddress(d.Address()), "previous": inventory.ShowAddress(previous),
		"credential_id": *d.CredentialID, "credential": name, "credential_use": inventory.UseAddress,
	})
	http.Redirect(w, r, detailPath(d)+"?address=confirmed#address", http.StatusSeeOther)
	return nil
}
