package devices

import (
	"errors"
	"net/http"

	"backupd/app/backup"
	"backupd/app/inventory"
	"backupd/db"
	"backupd/web/ui/core"
)

// "Test connection" on the device form: the form's values, unsaved, log
// in as a backup would (backup.CheckConnection), and the form comes back
// with how it went at its top. Nothing is stored and no host key pinned.

// devicesTestResult is how a test went: Key (with Args) says it.
type devicesTestResult struct {
	OK   bool
	Key  string
	Args []any
	// Error is the session's own account of a failure (English, from
	// the device or the network).
	Error string
	// DurationKey and DurationArgs say how long it took.
	DurationKey  string
	DurationArgs []any
}

// devicesTest runs the test for the form of p (old is the edited device,
// nil for a new one). The credential goes only where its user may send
// it: the test needs backups.create, as a backup does, and the use of the
// chosen credential, whatever the device had.
func (u *handlers) devicesTest(w http.ResponseWriter, r *http.Request, p *devicesFormPage, old *db.Device, title string) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	d, errs := p.device()
	switch {
	case d.ZoneID == 0 && old != nil:
		d.ZoneID = old.ZoneID
	case d.ZoneID == 0:
		d.ZoneID = db.LocalZone
	}
	status := http.StatusUnprocessableEntity
	fail := func(key string, args ...any) {
		p.Test = &devicesTestResult{Key: key, Args: args}
	}
	switch {
	case len(errs) > 0 || p.Error != "":
	case !s.Can("backups.create"):
		fail(keyDevicesTestNeedsBackup)
	case d.CredentialID == nil:
		errs["credential_id"] = &devicesMessage{Key: keyDevicesTestNoCredential}
	case !s.Principal().CanUseCredential(*d.CredentialID):
		name, err := u.credentialName(ctx, *d.CredentialID)
		if err != nil {
			return err
		}
		errs["credential_id"] = &devicesMessage{Key: keyDevicesErrCredentialUse, Args: []any{name}}
		status = http.StatusForbidden
	case d.ZoneID != db.LocalZone:
		fail(keyDevicesTestRemoteZone)
	default:
		var pinned []byte
		if old != nil && old.Address() == d.Address() {
			var err error
			if pinned, _, err = u.Store.HostKeys(ctx, old.ID); err != nil {
				return err
			}
		}
		res, err := backup.CheckConnection(ctx, u.Store, u.Sealer, d, pinned)
		var login *backup.PlatformTestLoginError
		var transport *backup.PlatformTestTransportError
		switch {
		case errors.Is(err, backup.ErrPlatformTestBusy):
			fail(keyDevicesTestBusy)
			status = http.StatusServiceUnavailable
		case errors.As(err, &login):
			p.Test = &devicesTestResult{Key: keyDevicesTestFailed, Error: login.Error()}
		case errors.As(err, &transport):
			fail(keyDevicesTestTransport, transport.Method)
		case err != nil:
			return err
		default:
			status = http.StatusOK
			t := &devicesTestResult{OK: res.OK, Key: keyDevicesTestOK,
				Args: []any{inventory.ShowAddress(d.Address()), core.FormatNum(backup.LineCount(res.Text))}}
			if !res.OK {
				t.Key, t.Error = keyDevicesTestFailed, res.Error
			}
			t.DurationKey, t.DurationArgs = detailDuration(res.Elapsed.Milliseconds())
			p.Test = t
			details := map[string]any{"host": d.Host, "port": d.Port, "credential_id": *d.CredentialID, "ok": res.OK}
			target := ""
			if old != nil {
				target = core.IDString(old.ID)
			}
			u.AuditAs(r, "device.test_connection", "device", target, details)
		}
	}
	p.Errors = errs
	return u.Render(w, r, status, "devices_form.html", title, p)
}
