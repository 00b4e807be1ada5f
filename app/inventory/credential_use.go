package inventory

import (
	"fmt"
	"strconv"
	"strings"

	"backupd/db"
)

// A device's credential is handed to whatever answers at the device's
// address. So using a credential — attaching it to a device, or sending a
// device's credential to a new address — needs a right on that credential
// (credentials.use, or a role that lists it): a user who may only edit
// devices must not be able to point a device that has one at a listener
// of their own and collect the password.

// CredentialUser is who saves a device: auth.Principal.
type CredentialUser interface {
	CanUseCredential(id int64) bool
}

// Credential uses, as the audit log names them.
const (
	UseAttach  = "attach"  // the credential is attached to the device
	UseAddress = "address" // the device's credential goes to a new address
)

// CredentialUse is how saving a device uses its credential.
type CredentialUse struct {
	CredentialID int64
	// How is UseAttach or UseAddress.
	How string
}

// UsesCredential reports how saving d over old (nil for a new device)
// uses d's credential: a new device with one, or another credential, is
// an attachment; the same credential with another login method, host,
// port or zone goes somewhere new. Changing nothing of these, or leaving
// the device without a credential, uses none.
func UsesCredential(old *db.Device, d db.Device) (CredentialUse, bool) {
	if d.CredentialID == nil {
		return CredentialUse{}, false
	}
	id := *d.CredentialID
	switch {
	case old == nil || old.CredentialID == nil || *old.CredentialID != id:
		return CredentialUse{CredentialID: id, How: UseAttach}, true
	case old.Address() != d.Address():
		return CredentialUse{CredentialID: id, How: UseAddress}, true
	}
	return CredentialUse{}, false
}

// CredentialUseError is a save refused because the user may not use the
// device's credential.
type CredentialUseError struct {
	CredentialUse
}

func (e *CredentialUseError) Error() string {
	if e.How == UseAttach {
		return fmt.Sprintf("attaching credential %d needs the credentials.use permission on it", e.CredentialID)
	}
	return fmt.Sprintf("changing the host, port, login method or zone of a device that logs in with credential %d needs the credentials.use permission on it", e.CredentialID)
}

// CheckCredentialUse refuses to save d over old (nil for a new device)
// when that uses a credential who may not use: a *CredentialUseError. It
// returns the use, for the audit log (ok false when there is none).
func CheckCredentialUse(who CredentialUser, old *db.Device, d db.Device) (use CredentialUse, ok bool, err error) {
	use, ok = UsesCredential(old, d)
	if ok && (who == nil || !who.CanUseCredential(use.CredentialID)) {
		return use, ok, &CredentialUseError{use}
	}
	return use, ok, nil
}

// AddressUnconfirmed reports whether d's credential must not be sent to
// d's address yet: the address changed since the credential was last
// sent or confirmed (AddressPin), and nothing else proves it is the same
// device. An SSH device whose host key is pinned proves itself by the
// key (a different one fails the login before the credential is sent, and
// waits to be accepted); a telnet device, or an SSH one without a pinned
// key, waits for a user allowed to use the credential to confirm the new
// address.
func AddressUnconfirmed(d db.Device, hostKeyPinned bool) bool {
	if d.CredentialID == nil || d.AddressPin == nil || *d.AddressPin == d.Address() {
		return false
	}
	return d.LoginMethod != "ssh" || !hostKeyPinned
}

// ShowAddress writes an address as Device.Address holds it for a person:
// "telnet 10.0.0.1:23", with the zone's id when it is not the local one.
// Text that is not such an address is shown as it is.
func ShowAddress(addr string) string {
	parts := strings.Split(addr, "|")
	if len(parts) != 4 {
		return addr
	}
	host := parts[1]
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	out := parts[0] + " " + host + ":" + parts[2]
	if z, err := strconv.ParseInt(parts[3], 10, 64); err == nil && z != db.LocalZone {
		out += " (zone " + parts[3] + ")"
	}
	return out
}
