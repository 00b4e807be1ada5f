package ui

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"

	"backupd/app/backup"
	"backupd/app/inventory"
	"backupd/db"
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

// mountDeviceDetail registers one device: its history, versions, diffs and host key.
func (u *UI) mountDeviceDetail(mux *http.ServeMux) {
	mux.Handle("GET /devices/{id}", u.Page("devices.view", u.deviceDetail))
	mux.Handle("GET /devices/{id}/versions/{backup}", u.Page("backups.view", u.deviceVersion))
	mux.Handle("GET /devices/{id}/versions/{backup}/raw", u.Page("backups.view", u.deviceVersionRaw))
	mux.Handle("GET /devices/{id}/diff", u.Page("backups.view", u.deviceDiff))
	mux.Handle("GET /devices/{id}/diff/raw", u.Page("backups.view", u.deviceDiffRaw))
	mux.Handle("POST /devices/{id}/host-key/accept", u.Page("devices.update", u.acceptDeviceHostKey))
	mux.Handle("POST /devices/{id}/address/confirm", u.Page("devices.update", u.confirmDeviceAddress))
}

// detailDevice loads the device a /devices/{id}/… request names: 404 for
// an id that is not a positive number or names no device, 403 for a
// device outside the user's scope (the public API's order: existence,
// then scope).
func (u *UI) detailDevice(r *http.Request) (db.Device, error) {
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
func (u *UI) detailBackup(r *http.Request, d db.Device, id string) (db.Backup, error) {
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

func detailPath(d db.Device) string { return "/devices/" + strconv.FormatInt(d.ID, 10) }

func detailVersionPath(d db.Device, backupID string) string {
	return detailPath(d) + "/versions/" + url.PathEscape(backupID)
}

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
	HostKey                              detailHostKey
	Address                              detailAddress
	// History is nil for users without backups.view.
	History *detailHistory
	// Notice and Error are message keys (Error with ErrorArgs).
	Notice    string
	Error     string
	ErrorArgs []any
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

// detailHistory is one page of the device's attempts.
type detailHistory struct {
	Rows                   []detailHistoryRow
	Total                  int
	Page, Pages            int
	First, Last            int
	NewestURL, NewerURL    string
	OlderURL, OldestURL    string
	HasVersions            bool
	DefaultFrom, DefaultTo string
}

// detailHistoryRow is one attempt as the history lists it.
type detailHistoryRow struct {
	ID           string
	StartedAt    time.Time
	When         string
	TriggerKey   string
	DurationKey  string
	DurationArgs []any
	Running      bool
	Success      bool
	Error        string
	Changed      bool
	// First marks the device's first version (not a change).
	First      bool
	Size       string
	HasText    bool
	VersionURL string
	// DiffURL compares a changed version with the one before it.
	DiffURL string
}

func (u *UI) deviceDetail(w http.ResponseWriter, r *http.Request) error {
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
		p.Notice = keyDetailBackupQueued
	}
	return u.renderDeviceDetail(w, r, http.StatusOK, d, p)
}

// renderDeviceDetail fills p for device d (keeping its notice or error)
// and renders it with status.
func (u *UI) renderDeviceDetail(w http.ResponseWriter, r *http.Request, status int, d db.Device, p deviceDetailPage) error {
	ctx := r.Context()
	var err error
	p.Device = d
	if p.Labels, err = u.Store.DeviceLabelsOf(ctx, d); err != nil {
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

// detailHistory reads the page of history the request's query asks for:
// the newest by default, older than ?before=, newer than ?after=, or
// ?page=last.
func (u *UI) detailHistory(r *http.Request, d db.Device) (*detailHistory, error) {
	q := db.HistoryQuery{Limit: detailHistoryPageSize}
	query := r.URL.Query()
	for _, c := range []struct {
		name string
		dst  **db.BackupCursor
	}{{"before", &q.Before}, {"after", &q.After}} {
		if v := query.Get(c.name); v != "" {
			cur, err := db.ParseBackupCursor(v)
			if err != nil {
				return nil, &core.PageError{Status: http.StatusBadRequest, Message: keyDetailBadPageLink}
			}
			*c.dst = &cur
		}
	}
	q.Oldest = query.Get("page") == "last" && q.Before == nil && q.After == nil
	page, err := u.Store.DeviceHistory(r.Context(), d.ID, q)
	if err != nil {
		return nil, err
	}
	// A page emptied by retention since its link was made: start over.
	if len(page.Items) == 0 && page.Total > 0 {
		if page, err = u.Store.DeviceHistory(r.Context(), d.ID, db.HistoryQuery{Limit: detailHistoryPageSize}); err != nil {
			return nil, err
		}
	}
	h := &detailHistory{Total: page.Total}
	if page.Total == 0 {
		return h, nil
	}
	h.Pages = (page.Total + detailHistoryPageSize - 1) / detailHistoryPageSize
	h.Page = min(page.Newer/detailHistoryPageSize+1, h.Pages)
	h.First, h.Last = page.Newer+1, page.Newer+len(page.Items)
	base := detailPath(d)
	if page.Newer > 0 {
		h.NewestURL = base + "#history"
		h.NewerURL = base + "?" + url.Values{"after": {db.CursorOf(page.Items[0]).String()}}.Encode() + "#history"
	}
	if h.Last < page.Total {
		h.OlderURL = base + "?" + url.Values{"before": {db.CursorOf(page.Items[len(page.Items)-1]).String()}}.Encode() + "#history"
		h.OldestURL = base + "?page=last#history"
	}
	if err := u.detailRows(r, d, h, page.Items); err != nil {
		return nil, err
	}
	return h, nil
}

// detailRows turns attempts into rows, linking each changed version to a
// diff with the version before it, and picks the two newest versions of
// the page as the comparison form's default.
func (u *UI) detailRows(r *http.Request, d db.Device, h *detailHistory, items []db.Backup) error {
	h.Rows = make([]detailHistoryRow, len(items))
	for i, b := range items {
		h.Rows[i] = u.detailRow(d, b)
	}
	// Each changed version links to a diff with the version before it,
	// found walking up from the page's oldest version, which needs one
	// look past the page.
	oldest := detailOldestVersion(h.Rows)
	var prev string
	if oldest >= 0 {
		before, ok, err := u.Store.PreviousVersion(r.Context(), d.ID, db.CursorOf(items[oldest]))
		if err != nil {
			return err
		}
		if ok {
			prev = before.ID
		}
	}
	for i := oldest; i >= 0; i-- {
		if !h.Rows[i].HasText {
			continue
		}
		if h.Rows[i].Changed && prev != "" {
			h.Rows[i].DiffURL = detailDiffPath(d, prev, items[i].ID)
		}
		prev = items[i].ID
	}
	for _, row := range h.Rows {
		if !row.HasText {
			continue
		}
		h.HasVersions = true
		switch {
		case h.DefaultTo == "":
			h.DefaultTo = row.ID
		case h.DefaultFrom == "":
			h.DefaultFrom = row.ID
		}
	}
	return nil
}

// detailOldestVersion is the index of the oldest row with a version, -1 when
// none has one.
func detailOldestVersion(rows []detailHistoryRow) int {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].HasText {
			return i
		}
	}
	return -1
}

func (u *UI) detailRow(d db.Device, b db.Backup) detailHistoryRow {
	row := detailHistoryRow{
		ID: b.ID, StartedAt: b.StartedAt, When: b.StartedAt.In(u.Location).Format("2006-01-02 15:04:05"),
		TriggerKey: detailTriggers[b.Trigger], Running: b.FinishedAt == nil && !b.Success, Success: b.Success,
		Changed: b.Changed && b.Success, First: b.First && b.Success, HasText: b.SnapshotHash != nil,
	}
	if row.TriggerKey == "" {
		row.TriggerKey = keyDetailTriggerOther
	}
	if b.ErrorMessage != nil {
		row.Error = *b.ErrorMessage
	}
	if b.DurationMS != nil {
		row.DurationKey, row.DurationArgs = detailDuration(*b.DurationMS)
	}
	if b.Bytes != nil {
		row.Size = detailSize(*b.Bytes)
	}
	if row.HasText {
		row.VersionURL = detailVersionPath(d, b.ID)
	}
	return row
}

// detailTriggers names each trigger's message.
var detailTriggers = map[string]string{
	db.TriggerManual:   keyDetailTriggerManual,
	db.TriggerSchedule: keyDetailTriggerSchedule,
	db.TriggerRetry:    keyDetailTriggerRetry,
	db.TriggerCLI:      keyDetailTriggerCLI,
	db.TriggerSyslog:   keyDetailTriggerSyslog,
}

// detailDuration is a duration's message and its arguments: milliseconds
// under a second, tenths of seconds under a minute, then minutes and
// seconds.
func detailDuration(ms int64) (string, []any) {
	switch {
	case ms < 1000:
		return keyDetailDurationMS, []any{ms}
	case ms < 60_000:
		return keyDetailDurationS, []any{strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64)}
	}
	s := ms / 1000
	return keyDetailDurationMin, []any{s / 60, s % 60}
}

// detailSize writes a byte count the way people read it.
func detailSize(n int64) string {
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1024*1024:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KB"
	}
	return strconv.FormatFloat(float64(n)/(1024*1024), 'f', 1, 64) + " MB"
}

// Host key.

// acceptDeviceHostKey pins the changed host key a device presented, as
// `backupd device accept-hostkey` does, provided it is still the key the
// page showed (its fingerprint comes back with the form): a key that
// changed again in between is refused, shown, and must be checked anew.
func (u *UI) acceptDeviceHostKey(w http.ResponseWriter, r *http.Request) error {
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
	u.AuditEntry(r, db.AuditEntry{
		UserID: &s.UserID, Username: s.Username, SessionID: s.AuditRef(), Action: "device.accept_hostkey",
		TargetType: "device", TargetID: core.IDString(d.ID), Details: details,
	})
	http.Redirect(w, r, detailPath(d)+"?hostkey=accepted#host-key", http.StatusSeeOther)
	return nil
}

// Address.

// confirmDeviceAddress lets the device's credential go to its changed
// address, as `backupd device accept-address` does, provided the address
// is still the one the page showed (it comes back with the form). Only a
// user who may use the credential confirms: confirming sends it there.
func (u *UI) confirmDeviceAddress(w http.ResponseWriter, r *http.Request) error {
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
	u.AuditEntry(r, db.AuditEntry{
		UserID: &s.UserID, Username: s.Username, SessionID: s.AuditRef(), Action: "device.confirm_address",
		TargetType: "device", TargetID: core.IDString(d.ID), Details: map[string]any{
			"address": inventory.ShowAddress(d.Address()), "previous": inventory.ShowAddress(previous),
			"credential_id": *d.CredentialID, "credential": name, "credential_use": inventory.UseAddress,
		},
	})
	http.Redirect(w, r, detailPath(d)+"?address=confirmed#address", http.StatusSeeOther)
	return nil
}

// One version.

// deviceVersionPage is the data of device_version.html.
type deviceVersionPage struct {
	Device  db.Device
	Backup  detailHistoryRow
	HasText bool
	// Lines are the text's lines, at most detailMaxConfigLines of
	// TotalLines.
	Lines      []string
	TotalLines int
	Truncated  bool
	RawURL     string
	// PrevURL and NextURL open the neighbouring versions; DiffPrevURL
	// compares this one with the previous.
	PrevURL, NextURL, DiffPrevURL string
	HistoryURL                    string
}

func (u *UI) deviceVersion(w http.ResponseWriter, r *http.Request) error {
	d, err := u.detailDevice(r)
	if err != nil {
		return err
	}
	b, err := u.detailBackup(r, d, r.PathValue("backup"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	p := deviceVersionPage{Device: d, Backup: u.detailRow(d, b), HistoryURL: detailPath(d) + "#history"}
	if b.SnapshotHash != nil {
		text, err := u.Store.SnapshotText(ctx, *b.SnapshotHash)
		if err != nil {
			return err
		}
		p.HasText = true
		p.RawURL = detailVersionPath(d, b.ID) + "/raw"
		p.Lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if text == "" {
			p.Lines = nil
		}
		p.TotalLines = len(p.Lines)
		if len(p.Lines) > detailMaxConfigLines {
			p.Lines, p.Truncated = p.Lines[:detailMaxConfigLines], true
		}
	}
	cur := db.CursorOf(b)
	prev, ok, err := u.Store.PreviousVersion(ctx, d.ID, cur)
	if err != nil {
		return err
	}
	if ok {
		p.PrevURL = detailVersionPath(d, prev.ID)
		if p.HasText {
			p.DiffPrevURL = detailDiffPath(d, prev.ID, b.ID)
		}
	}
	next, ok, err := u.Store.NextVersion(ctx, d.ID, cur)
	if err != nil {
		return err
	}
	if ok {
		p.NextURL = detailVersionPath(d, next.ID)
	}
	return u.Render(w, r, http.StatusOK, "device_version.html", keyDetailVersionTitle, p)
}

// deviceVersionRaw serves a version's text exactly as stored: inline, or
// with ?download=1 as a file named after the device and the time.
func (u *UI) deviceVersionRaw(w http.ResponseWriter, r *http.Request) error {
	d, err := u.detailDevice(r)
	if err != nil {
		return err
	}
	b, err := u.detailBackup(r, d, r.PathValue("backup"))
	if err != nil {
		return err
	}
	if b.SnapshotHash == nil {
		return &core.PageError{Status: http.StatusNotFound, Message: keyDetailNoTextError}
	}
	text, err := u.Store.SnapshotText(r.Context(), *b.SnapshotHash)
	if err != nil {
		return err
	}
	disposition := "inline"
	if r.URL.Query().Get("download") != "" {
		disposition = "attachment"
	}
	name := detailFileName(d.Name, b.StartedAt.In(u.Location).Format("20060102-150405"), ".txt")
	detailWriteText(w, disposition, name, text)
	return nil
}

// detailWriteText answers with plain text. The security headers (nosniff
// among them) are already set.
func detailWriteText(w http.ResponseWriter, disposition, name, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Disposition", detailDisposition(disposition, name))
	h.Set("Content-Length", strconv.Itoa(len(text)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(text))
}

// detailFileName is a safe file name for a device's text: the device name
// with anything but letters, digits, '-', '_' and '.' replaced by '_',
// then "_" and stamp, then ext.
func detailFileName(device, stamp, ext string) string {
	var b strings.Builder
	n := 0
	for _, c := range device {
		if n == 80 {
			break
		}
		n++
		if unicode.IsLetter(c) || unicode.IsDigit(c) || c == '-' || c == '_' || c == '.' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	// A leading dot would make a hidden file.
	base := strings.TrimLeft(b.String(), ".")
	if base == "" {
		base = "device"
	}
	return base + "_" + stamp + ext
}

// detailDisposition writes the header of RFC 6266: an ASCII filename for
// old clients and the exact UTF-8 one in filename* (RFC 8187).
func detailDisposition(disposition, name string) string {
	ascii := make([]byte, 0, len(name))
	var ext strings.Builder
	for i := 0; i < len(name); {
		c, size := utf8.DecodeRuneInString(name[i:])
		switch {
		case c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.", c)):
			ascii = append(ascii, byte(c))
			ext.WriteByte(byte(c))
		default:
			ascii = append(ascii, '_')
			for _, by := range []byte(name[i : i+size]) {
				fmt.Fprintf(&ext, "%%%02X", by)
			}
		}
		i += size
	}
	return disposition + `; filename="` + string(ascii) + `"; filename*=UTF-8''` + ext.String()
}

// Diffs.

// deviceDiffPage is the data of device_diff.html.
type deviceDiffPage struct {
	Device   db.Device
	From, To detailHistoryRow
	// Same: the texts are equal. NoiseOnly: they differ only by noise.
	Same, NoiseOnly bool
	Added, Removed  int
	Unified         bool
	Rows            []detailDiffRow
	// Truncated: only Shown of Total diff lines are rendered.
	Truncated    bool
	Shown, Total int
	HasNoise     bool
	RulesIgnored bool
	SplitURL     string
	UnifiedURL   string
	SwapURL      string
	RawURL       string
	HistoryURL   string
}

// detailDiffRow is one row of the diff table: a hunk header, or a line on
// the left, the right or both sides. The unified view uses Left for the
// line and Right for nothing but its new line number.
type detailDiffRow struct {
	Header      string
	Left, Right detailDiffCell
}

// detailDiffCell is one side of a row; No is 0 where the side has no line.
type detailDiffCell struct {
	No   int
	Text string
	// Class is the cell's CSS class: its kind, and whether it is noise.
	Class string
}

func (u *UI) deviceDiff(w http.ResponseWriter, r *http.Request) error {
	d, from, to, err := u.detailDiffVersions(r)
	if err != nil {
		return err
	}
	res, rulesIgnored, err := u.detailDiff(r, from, to)
	if err != nil {
		return err
	}
	unified := r.URL.Query().Get("view") == "unified"
	p := deviceDiffPage{
		Device: d, From: u.detailRow(d, from), To: u.detailRow(d, to),
		Same: len(res.Hunks) == 0, NoiseOnly: len(res.Hunks) > 0 && !res.Changed,
		Added: res.Added, Removed: res.Removed, Unified: unified, RulesIgnored: rulesIgnored,
		HistoryURL: detailPath(d) + "#history",
	}
	base := detailDiffPath(d, from.ID, to.ID)
	p.SplitURL, p.UnifiedURL = base, base+"&view=unified"
	p.SwapURL = detailDiffPath(d, to.ID, from.ID)
	if unified {
		p.SwapURL += "&view=unified"
	}
	p.RawURL = detailPath(d) + "/diff/raw?" + url.Values{"from": {from.ID}, "to": {to.ID}}.Encode()
	for _, h := range res.Hunks {
		p.Total += len(h.Lines)
	}
	if unified {
		p.Rows, p.Shown, p.HasNoise = detailUnifiedRows(res.Hunks, detailMaxDiffRows)
	} else {
		p.Rows, p.Shown, p.HasNoise = detailSplitRows(res.Hunks, detailMaxDiffRows)
	}
	p.Truncated = p.Shown < p.Total
	return u.Render(w, r, http.StatusOK, "device_diff.html", keyDetailDiffTitle, p)
}

// deviceDiffRaw serves the unified diff of two versions as a file.
func (u *UI) deviceDiffRaw(w http.ResponseWriter, r *http.Request) error {
	d, from, to, err := u.detailDiffVersions(r)
	if err != nil {
		return err
	}
	res, _, err := u.detailDiff(r, from, to)
	if err != nil {
		return err
	}
	stamp := from.StartedAt.In(u.Location).Format("20060102-150405") + "_" + to.StartedAt.In(u.Location).Format("20060102-150405")
	detailWriteText(w, "attachment", detailFileName(d.Name, stamp, ".diff"), res.Unified)
	return nil
}

// detailDiffVersions reads ?from= and ?to=: two backups of the device that have
// a configuration. Without from, the version before to is meant.
func (u *UI) detailDiffVersions(r *http.Request) (d db.Device, from, to db.Backup, err error) {
	if d, err = u.detailDevice(r); err != nil {
		return
	}
	q := r.URL.Query()
	if q.Get("to") == "" {
		err = &core.PageError{Status: http.StatusBadRequest, Message: keyDetailDiffPickTwo}
		return
	}
	if to, err = u.detailBackup(r, d, q.Get("to")); err != nil {
		return
	}
	if q.Get("from") == "" {
		prev, ok, perr := u.Store.PreviousVersion(r.Context(), d.ID, db.CursorOf(to))
		if err = perr; err != nil {
			return
		}
		if !ok {
			err = &core.PageError{Status: http.StatusNotFound, Message: keyDetailDiffNoPrevious}
			return
		}
		from = prev
	} else if from, err = u.detailBackup(r, d, q.Get("from")); err != nil {
		return
	}
	for _, b := range []db.Backup{from, to} {
		if b.SnapshotHash == nil {
			err = &core.PageError{Status: http.StatusUnprocessableEntity, Message: keyDetailDiffNoText,
				Args: []any{b.StartedAt.In(u.Location).Format("2006-01-02 15:04:05")}}
			return
		}
	}
	return
}

// detailDiff compares two versions with the noise rules change detection
// uses: the platform's built-in ones and the user's. A user rule that
// cannot be used (saved by an older release, say) does not stop the
// diff: it is made with the built-in rules only, and the page says so.
func (u *UI) detailDiff(r *http.Request, from, to db.Backup) (backup.DiffResult, bool, error) {
	ctx := r.Context()
	rules, err := u.Store.NoiseRules(ctx)
	if err != nil {
		return backup.DiffResult{}, false, err
	}
	res, err := backup.Diff(ctx, u.Store, from.ID, to.ID, rules)
	var bad *backup.NoiseRuleError
	if errors.As(err, &bad) {
		res, err = backup.Diff(ctx, u.Store, from.ID, to.ID, nil)
		return res, true, err
	}
	return res, false, err
}

// CSS classes of diff cells.
const (
	detailClassContext = "diff-ctx"
	detailClassRemoved = "diff-del"
	detailClassAdded   = "diff-add"
	detailClassEmpty   = "diff-none"
	detailClassNoise   = " diff-noise"
)

func detailCell(l backup.DiffLine, no int) detailDiffCell {
	c := detailDiffCell{No: no, Text: l.Text}
	switch l.Kind {
	case backup.LineRemoved:
		c.Class = detailClassRemoved
	case backup.LineAdded:
		c.Class = detailClassAdded
	default:
		c.Class = detailClassContext
	}
	if l.Noise {
		c.Class += detailClassNoise
	}
	return c
}

var detailEmptyCell = detailDiffCell{Class: detailClassEmpty}

// detailHunkHeader is a hunk's "@@ -a,b +c,d @@" line.
func detailHunkHeader(h backup.Hunk) string {
	return "@@ -" + strconv.Itoa(h.OldStart) + "," + strconv.Itoa(h.OldLines) +
		" +" + strconv.Itoa(h.NewStart) + "," + strconv.Itoa(h.NewLines) + " @@"
}

// detailSplitRows lays hunks out side by side: context lines on both
// sides, and in each run of changes the removed lines on the left beside
// the added ones on the right, pair by pair. It stops at limit rows and
// returns how many diff lines it laid out, and whether any is noise.
func detailSplitRows(hunks []backup.Hunk, limit int) (rows []detailDiffRow, shown int, noise bool) {
	for _, h := range hunks {
		if len(rows) >= limit {
			break
		}
		rows = append(rows, detailDiffRow{Header: detailHunkHeader(h)})
		lines := h.Lines
		for i := 0; i < len(lines) && len(rows) < limit; {
			l := lines[i]
			if l.Kind == backup.LineContext {
				rows = append(rows, detailDiffRow{Left: detailCell(l, l.OldNo), Right: detailCell(l, l.NewNo)})
				noise = noise || l.Noise
				shown++
				i++
				continue
			}
			end := i
			var removed, added []backup.DiffLine
			for end < len(lines) && lines[end].Kind != backup.LineContext {
				if lines[end].Kind == backup.LineRemoved {
					removed = append(removed, lines[end])
				} else {
					added = append(added, lines[end])
				}
				end++
			}
			pairs := min(max(len(removed), len(added)), limit-len(rows))
			for j := range pairs {
				row := detailDiffRow{Left: detailEmptyCell, Right: detailEmptyCell}
				if j < len(removed) {
					row.Left = detailCell(removed[j], removed[j].OldNo)
					noise = noise || removed[j].Noise
				}
				if j < len(added) {
					row.Right = detailCell(added[j], added[j].NewNo)
					noise = noise || added[j].Noise
				}
				rows = append(rows, row)
			}
			shown += min(pairs, len(removed)) + min(pairs, len(added))
			i = end
		}
	}
	return rows, shown, noise
}

// detailUnifiedRows lays hunks out one line a row, as diff -u shows them,
// up to limit rows.
func detailUnifiedRows(hunks []backup.Hunk, limit int) (rows []detailDiffRow, shown int, noise bool) {
	for _, h := range hunks {
		if len(rows) >= limit {
			break
		}
		rows = append(rows, detailDiffRow{Header: detailHunkHeader(h)})
		for _, l := range h.Lines {
			if len(rows) >= limit {
				break
			}
			rows = append(rows, detailDiffRow{Left: detailCell(l, l.OldNo), Right: detailDiffCell{No: l.NewNo}})
			noise = noise || l.Noise
			shown++
		}
	}
	return rows, shown, noise
}
