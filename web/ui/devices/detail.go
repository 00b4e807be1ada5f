package devices

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"backupd/app/collect/driver"
	"backupd/app/inventory"
	"backupd/db"
	"backupd/db/queue"
	"backupd/web/ui/core"
)

// Bounds of the device pages: the history is paged, a version shows at
// most so many lines and a diff so many rows; beyond that the page says
// so and offers the full text as a download.
const (
	detailHistoryPageSize = 50
	detailMaxConfigLines  = 50_000
	detailMaxDiffRows     = 5_000
	// detailMaxBackupID bounds a backup id taken from a URL (they are
	// UUIDs).
	detailMaxBackupID = 64
)

// detailDevice loads the device a /devices/{id}/… request names: 404 for
// an id that is not a positive number or names no device, 403 for a
// device outside the user's scope (the public API's order: existence,
// then scope).
func (u *handlers) detailDevice(r *http.Request) (db.Device, error) {
	raw := r.PathValue("id")
	if raw == "" || len(raw) > 18 || strings.TrimLeft(raw, "0123456789") != "" {
		return db.Device{}, db.ErrNotFound
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		return db.Device{}, db.ErrNotFound
	}
	d, err := u.Store.GetDevice(r.Context(), id)
	if err != nil {
		return d, err
	}
	ok, err := u.Store.DeviceInScope(r.Context(), core.SessionOf(r).Scope(), d)
	if err != nil {
		return d, err
	}
	if !ok {
		return d, core.Forbidden()
	}
	return d, nil
}

// detailBackup loads a backup of device d by id: another device's backup
// is as missing as an unknown one.
func (u *handlers) detailBackup(r *http.Request, d db.Device, id string) (db.Backup, error) {
	if id == "" || len(id) > detailMaxBackupID {
		return db.Backup{}, db.ErrNotFound
	}
	b, err := u.Store.GetBackup(r.Context(), id)
	if err != nil {
		return b, err
	}
	if b.DeviceID != d.ID {
		return b, db.ErrNotFound
	}
	return b, nil
}

// detailVersionOf loads the device of the request's path and its attempt
// {backup}, as detailDevice and detailBackup check them.
func (u *handlers) detailVersionOf(r *http.Request) (db.Device, db.Backup, error) {
	d, err := u.detailDevice(r)
	if err != nil {
		return d, db.Backup{}, err
	}
	b, err := u.detailBackup(r, d, r.PathValue("backup"))
	return d, b, err
}

// detailLines are a stored text's lines as a diff numbers them (line n
// is [n-1]); none for an empty text.
func detailLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

func detailPath(d db.Device) string { return core.DevicePath(d.ID) }

func detailVersionPath(d db.Device, backupID string) string { return core.VersionPath(d.ID, backupID) }

func detailDiffPath(d db.Device, from, to string) string {
	return detailPath(d) + "/diff?" + url.Values{"from": {from}, "to": {to}}.Encode()
}

// The summary page.

// deviceDetailPage is the data of device.html.
type deviceDetailPage struct {
	Device db.Device
	Labels db.DeviceLabels
	// Remarks is the device's remarks, "" when none.
	Remarks string
	// LastChecked and LastBackup are zero when never; LastBackupKnown
	// says whether LastBackupOK tells how the last backup ended.
	// LastChanged is when the configuration last changed, zero when it
	// has not since the first backup.
	LastChecked, LastBackup, LastChanged time.Time
	LastBackupKnown, LastBackupOK        bool
	// Job is the device's queued or running backup (State "" for none):
	// the page follows it until it ends.
	Job     queue.ActiveJob
	HostKey detailHostKey
	Address detailAddress
	// History is nil for users without backups.view.
	History *detailHistory
	// PlatformName is the platform's display name (its id when the
	// platform is not known).
	PlatformName string
	// Source is the inventory source the device follows, nil for one
	// made by hand.
	Source *deviceSource
	// Notice and Error are message keys (Error with ErrorArgs); NoticeURL
	// and NoticeLink (a key) are where the notice leads, when it does.
	Notice     string
	NoticeURL  string
	NoticeLink string
	Error      string
	ErrorArgs  []any
}

// detailHostKey is what the page shows of a device's SSH host key.
type detailHostKey struct {
	// Shown is false for a telnet device that never pinned a key.
	Shown           bool
	Pinned, Pending detailKey
	// CanAccept is whether the user may accept a changed key: it edits
	// devices and may use the device's credential, which the key lets go
	// to whoever holds it.
	CanAccept bool
}

// detailAddress is a changed address the device's credential does not
// go to until someone confirms it (inventory.AddressUnconfirmed).
type detailAddress struct {
	Pending bool
	// Was is where the credential last went, Now the device's address,
	// as people read them; Seen is the address the form confirms.
	Was, Now, Seen string
	// CanConfirm is whether the user may confirm it: devices.update and
	// the use of the device's credential.
	CanConfirm bool
}

// detailKey is one stored host key.
type detailKey struct {
	Present bool
	// Fingerprint is "" for a key that cannot be read.
	Fingerprint string
}

func newDetailKey(key []byte) detailKey {
	return detailKey{Present: key != nil, Fingerprint: detailFingerprint(key)}
}

func (u *handlers) deviceDetail(w http.ResponseWriter, r *http.Request) error {
	d, err := u.detailDevice(r)
	if err != nil {
		return err
	}
	// Notices of the actions that come back here: accepting a host key,
	// and "Back up now" (whose handler adds queued=<count>).
	p := deviceDetailPage{}
	switch q := r.URL.Query(); {
	case q.Get("hostkey") == "accepted":
		p.Notice = keyDetailHostKeyAccepted
	case q.Get("address") == "confirmed":
		p.Notice = keyDetailAddressConfirmed
	case q.Get("queued") != "" && q.Get("queued") != "0":
		p.Notice, p.NoticeLink = keyDetailBackupQueued, keyDetailFollowJob
		p.NoticeURL = core.PathJobs + "?device=" + strconv.FormatInt(d.ID, 10)
	}
	return u.renderDeviceDetail(w, r, http.StatusOK, d, p)
}

// renderDeviceDetail fills p for device d (keeping its notice or error)
// and renders it with status.
func (u *handlers) renderDeviceDetail(w http.ResponseWriter, r *http.Request, status int, d db.Device, p deviceDetailPage) error {
	ctx := r.Context()
	var err error
	p.Device, p.PlatformName = d, d.Platform
	if info, ok := driver.Lookup(d.Platform); ok {
		p.PlatformName = info.Name
	}
	if p.Labels, err = u.Store.DeviceLabelsOf(ctx, d); err != nil {
		return err
	}
	if p.Source, err = u.deviceSourceOf(r, d); err != nil {
		return err
	}
	if d.LastCheckedAt != nil {
		p.LastChecked, _ = db.ParseTime(*d.LastCheckedAt)
	}
	if d.LastBackupAt != nil {
		p.LastBackup, _ = db.ParseTime(*d.LastBackupAt)
	}
	if d.LastBackupSuccess != nil {
		p.LastBackupKnown, p.LastBackupOK = true, *d.LastBackupSuccess
	}
	if d.LastChangedAt != nil {
		p.LastChanged, _ = db.ParseTime(*d.LastChangedAt)
	}
	if d.Remarks != nil {
		p.Remarks = *d.Remarks
	}
	jobs, err := u.Store.ActiveJobs(ctx, []int64{d.ID})
	if err != nil {
		return err
	}
	p.Job = jobs[d.ID]
	pinned, pending, err := u.Store.HostKeys(ctx, d.ID)
	if err != nil {
		return err
	}
	s := core.SessionOf(r)
	p.HostKey = detailHostKey{
		Shown:     d.LoginMethod == "ssh" || pinned != nil || pending != nil,
		Pinned:    newDetailKey(pinned),
		Pending:   newDetailKey(pending),
		CanAccept: s.Can("devices.update") && (d.CredentialID == nil || s.Principal().CanUseCredential(*d.CredentialID)),
	}
	if inventory.AddressUnconfirmed(d, pinned != nil) {
		p.Address = detailAddress{Pending: true, Was: inventory.ShowAddress(*d.AddressPin), Now: inventory.ShowAddress(d.Address()),
			Seen: d.Address(), CanConfirm: s.Can("devices.update") && s.Principal().CanUseCredential(*d.CredentialID)}
	}
	if core.SessionOf(r).Can("backups.view") {
		h, err := u.detailHistory(r, d)
		if err != nil {
			return err
		}
		p.History = h
		if h.Error != "" && status == http.StatusOK {
			status = http.StatusUnprocessableEntity
		}
	}
	return u.Render(w, r, status, "device.html", keyDetailTitle, p)
}

// detailFingerprint names an SSH public key (wire format, or an
// authorized_keys line) as ssh-keygen -l does: type and SHA256
// fingerprint. "" for no key or one that cannot be read.
func detailFingerprint(key []byte) string {
	if key == nil {
		return ""
	}
	if k, err := ssh.ParsePublicKey(key); err == nil {
		return k.Type() + " " + ssh.FingerprintSHA256(k)
	}
	if k, _, _, _, err := ssh.ParseAuthorizedKey(key); err == nil {
		return k.Type() + " " + ssh.FingerprintSHA256(k)
	}
	return ""
}
