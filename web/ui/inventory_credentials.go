package ui

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"

	"backupd/app/secret"
	"backupd/db"
	"backupd/web/ui/core"
)

// Credentials: the logins devices are backed up with. Secrets are
// write-only: no page ever holds one, not even the form that sets it.
// A blank secret field keeps what is stored; a "remove" box clears it.
// Secrets are sealed exactly as the public API seals them (same sealer,
// same purposes), so the backup engine opens either.

var credentialNotices = map[string]string{
	"created":   keyInvCredCreated,
	"updated":   keyInvCredUpdated,
	"deleted":   keyInvCredDeleted,
	"unchanged": keyInvCredUnchanged,
}

// credentialListPage is the data of credentials.html.
type credentialListPage struct {
	Items []credentialRow
	Pager core.Pager
	// Scoped: the device counts leave out groups the user cannot see.
	Scoped bool
	Notice string
}

// credentialRow is a credential as the list shows it: whether each secret
// is set, never the secret.
type credentialRow struct {
	ID          int64
	Name        string
	Username    string
	Remarks     string
	HasPassword bool
	HasEnable   bool
	HasKey      bool
	// Devices counts the devices in the user's scope that use it.
	Devices int
}

func (u *UI) credentialList(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	page := core.PageNumber(r, core.MaxListPage)
	items, total, err := u.Store.ListCredentials(ctx, invPageSize, (page-1)*invPageSize)
	if err != nil {
		return err
	}
	if invPastEnd(w, r, "/credentials", page, len(items), total) {
		return nil
	}
	ids := make([]int64, len(items))
	for i, c := range items {
		ids[i] = c.ID
	}
	used, err := u.Store.DevicesUsingCredentials(ctx, core.SessionOf(r).Scope(), ids)
	if err != nil {
		return err
	}
	p := credentialListPage{Pager: core.NewPager(r, page, invPageSize, total),
		Scoped: !core.SessionOf(r).Scope().All, Notice: core.Notice(r, credentialNotices)}
	for _, c := range items {
		row := credentialRow{ID: c.ID, Name: c.Name, Username: c.Username, HasPassword: c.Password != nil,
			HasEnable: c.EnablePassword != nil, HasKey: c.PrivateKey != nil, Devices: used[c.ID]}
		if c.Remarks != nil {
			row.Remarks = *c.Remarks
		}
		p.Items = append(p.Items, row)
	}
	return u.Render(w, r, http.StatusOK, "credentials.html", keyInvTitleCredentials, p)
}

// credentialFormPage is the data of credentials_form.html, for a new
// credential (ID 0) or a stored one.
type credentialFormPage struct {
	ID int64
	// Heading is the stored name.
	Heading  string
	Name     string
	Username string
	Remarks  string
	// Which secrets are stored.
	HasPassword bool
	HasEnable   bool
	HasKey      bool
	// The "remove" boxes as ticked.
	ClearPassword bool
	ClearEnable   bool
	ClearKey      bool
	Devices       int
	UpdatedAt     string
	// Retype is set when the form comes back after secrets were typed:
	// they are not sent back, and must be typed again.
	Retype bool
	Error  string
	Args   []any
	Notice string
}

func (u *UI) newCredentialForm(w http.ResponseWriter, r *http.Request) error {
	return u.Render(w, r, http.StatusOK, "credentials_form.html", keyInvTitleNewCredential, credentialFormPage{})
}

func (u *UI) credentialDetail(w http.ResponseWriter, r *http.Request) error {
	c, err := u.pathCredential(r)
	if err != nil {
		return err
	}
	p := credentialFormPage{Notice: core.Notice(r, credentialNotices)}
	return u.renderCredentialForm(w, r, http.StatusOK, c, p, false)
}

func (u *UI) pathCredential(r *http.Request) (db.Credential, error) {
	id, err := core.PathID(r)
	if err != nil {
		return db.Credential{}, err
	}
	return u.Store.GetCredential(r.Context(), id)
}

// renderCredentialForm shows stored credential c, with the fields as
// typed when typed is set (a form that comes back), else as stored.
func (u *UI) renderCredentialForm(w http.ResponseWriter, r *http.Request, status int, c db.Credential, p credentialFormPage, typed bool) error {
	used, err := u.Store.DevicesUsingCredentials(r.Context(), core.SessionOf(r).Scope(), []int64{c.ID})
	if err != nil {
		return err
	}
	if !typed {
		p.Name, p.Username = c.Name, c.Username
		if c.Remarks != nil {
			p.Remarks = *c.Remarks
		}
	}
	p.ID, p.Heading, p.Devices, p.UpdatedAt = c.ID, c.Name, used[c.ID], c.UpdatedAt
	p.HasPassword, p.HasEnable, p.HasKey = c.Password != nil, c.EnablePassword != nil, c.PrivateKey != nil
	return u.Render(w, r, status, "credentials_form.html", keyInvTitleCredential, p)
}

// credentialInput is the credential form as posted. The secrets live
// here only until they are sealed.
type credentialInput struct {
	name, username, remarks              string
	password, enable, key                string
	clearPassword, clearEnable, clearKey bool
}

// readCredentialForm reads and checks the form; a non-empty key says what
// to correct.
func readCredentialForm(r *http.Request) (credentialInput, string, []any) {
	var in credentialInput
	var fits [6]bool
	in.name, fits[0] = core.Field(r, "name", invMaxName)
	in.username, fits[1] = core.Field(r, "username", invMaxUsername)
	in.password, fits[2] = core.Field(r, "password", invMaxSecret)
	in.enable, fits[3] = core.Field(r, "enable_password", invMaxSecret)
	in.key, fits[4] = core.Field(r, "private_key", invMaxKey)
	in.remarks, fits[5] = core.Field(r, "remarks", invMaxRemarks)
	in.name, in.username = strings.TrimSpace(in.name), strings.TrimSpace(in.username)
	in.remarks = strings.TrimSpace(in.remarks)
	in.clearPassword, in.clearEnable, in.clearKey = core.Checked(r, "clear_password"), core.Checked(r, "clear_enable_password"), core.Checked(r, "clear_private_key")
	switch {
	case in.name == "":
		return in, keyInvNameMissing, nil
	case !fits[0]:
		return in, keyInvNameTooLong, []any{invMaxName}
	case !fits[1]:
		return in, keyInvCredUsernameTooLong, []any{invMaxUsername}
	case !fits[2]:
		return in, keyInvCredPasswordTooLong, []any{invMaxSecret}
	case !fits[3]:
		return in, keyInvCredEnableTooLong, []any{invMaxSecret}
	case !fits[4]:
		return in, keyInvCredKeyTooLong, []any{invMaxKey}
	case !fits[5]:
		return in, keyInvRemarksTooLong, []any{invMaxRemarks}
	case in.password != "" && in.clearPassword, in.enable != "" && in.clearEnable, in.key != "" && in.clearKey:
		return in, keyInvCredSetAndClear, nil
	}
	if in.key != "" {
		// Refuse now what the backup would fail on later: the engine
		// parses the key the same way and has no passphrase to give.
		in.key = strings.TrimSpace(in.key) + "\n"
		var missing *ssh.PassphraseMissingError
		if _, err := ssh.ParsePrivateKey([]byte(in.key)); errors.As(err, &missing) {
			return in, keyInvCredKeyPassphrase, nil
		} else if err != nil {
			return in, keyInvCredKeyInvalid, nil
		}
	}
	return in, "", nil
}

// typedSecret reports whether any secret field was filled in.
func (in credentialInput) typedSecret() bool {
	return in.password != "" || in.enable != "" || in.key != ""
}

// formPage is the form as typed, for showing it again: never a secret.
func (in credentialInput) formPage(key string, args []any) credentialFormPage {
	return credentialFormPage{Name: in.name, Username: in.username, Remarks: in.remarks,
		ClearPassword: in.clearPassword, ClearEnable: in.clearEnable, ClearKey: in.clearKey,
		Retype: in.typedSecret(), Error: key, Args: args}
}

// invSeal seals a typed secret as the public API does (its seal
// helper): same sealer, same purpose, so the engine opens it.
func (u *UI) invSeal(plain, purpose string) []byte {
	return u.Sealer.Seal(plain, purpose)
}

func invRemarks(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (u *UI) createCredential(w http.ResponseWriter, r *http.Request) error {
	in, bad, args := readCredentialForm(r)
	fail := func(status int, key string, args ...any) error {
		p := in.formPage(key, args)
		p.ClearPassword, p.ClearEnable, p.ClearKey = false, false, false
		return u.Render(w, r, status, "credentials_form.html", keyInvTitleNewCredential, p)
	}
	if bad != "" {
		return fail(http.StatusUnprocessableEntity, bad, args...)
	}
	c := db.Credential{Name: in.name, Username: in.username, Remarks: invRemarks(in.remarks)}
	if in.password != "" {
		c.Password = u.invSeal(in.password, secret.PurposePassword)
	}
	if in.enable != "" {
		c.EnablePassword = u.invSeal(in.enable, secret.PurposeEnablePassword)
	}
	if in.key != "" {
		c.PrivateKey = u.invSeal(in.key, secret.PurposePrivateKey)
	}
	c, err := u.Store.CreateCredential(r.Context(), c)
	switch {
	case errors.Is(err, db.ErrNameExists):
		return fail(http.StatusConflict, keyInvCredNameExists, in.name)
	case err != nil:
		return err
	}
	u.Audit(r, "credential.create", "credential", c.ID, map[string]any{"name": c.Name,
		"secrets": invSecretNames(c.Password != nil, c.EnablePassword != nil, c.PrivateKey != nil)})
	core.RedirectNotice(w, r, "/credentials", "created")
	return nil
}

// invSecretNames names the secrets that are set, for the audit log.
func invSecretNames(password, enable, key bool) []string {
	out := []string{}
	for _, s := range []struct {
		set  bool
		name string
	}{{password, "password"}, {enable, "enable_password"}, {key, "private_key"}} {
		if s.set {
			out = append(out, s.name)
		}
	}
	return out
}

// invErrNoChange stops an update that would change nothing.
var invErrNoChange = errors.New("nothing to change")

func (u *UI) updateCredential(w http.ResponseWriter, r *http.Request) error {
	stored, err := u.pathCredential(r)
	if err != nil {
		return err
	}
	in, bad, args := readCredentialForm(r)
	fail := func(status int, key string, args ...any) error {
		return u.renderCredentialForm(w, r, status, stored, in.formPage(key, args), true)
	}
	if bad != "" {
		return fail(http.StatusUnprocessableEntity, bad, args...)
	}
	var fields []string
	c, err := u.Store.UpdateCredential(r.Context(), stored.ID, func(c *db.Credential) error {
		fields = u.applyCredentialInput(c, in)
		if len(fields) == 0 {
			return invErrNoChange
		}
		return nil
	})
	switch {
	case errors.Is(err, invErrNoChange):
		core.RedirectNotice(w, r, "/credentials/"+strconv.FormatInt(stored.ID, 10), "unchanged")
		return nil
	case errors.Is(err, db.ErrNameExists):
		return fail(http.StatusConflict, keyInvCredNameExists, in.name)
	case err != nil:
		return err
	}
	u.Audit(r, "credential.update", "credential", c.ID, map[string]any{"fields": fields, "name": c.Name})
	core.RedirectNotice(w, r, "/credentials", "updated")
	return nil
}

// applyCredentialInput changes c as the form asks and names the fields
// it changed. A blank secret keeps the stored one; a ticked box removes
// it.
func (u *UI) applyCredentialInput(c *db.Credential, in credentialInput) []string {
	var fields []string
	if c.Name != in.name {
		c.Name, fields = in.name, append(fields, "name")
	}
	if c.Username != in.username {
		c.Username, fields = in.username, append(fields, "username")
	}
	if old := invRemarks(in.remarks); (c.Remarks == nil) != (old == nil) || (old != nil && *c.Remarks != *old) {
		c.Remarks, fields = old, append(fields, "remarks")
	}
	for _, s := range []struct {
		field, typed, purpose string
		clear                 bool
		stored                *[]byte
	}{
		{"password", in.password, secret.PurposePassword, in.clearPassword, &c.Password},
		{"enable_password", in.enable, secret.PurposeEnablePassword, in.clearEnable, &c.EnablePassword},
		{"private_key", in.key, secret.PurposePrivateKey, in.clearKey, &c.PrivateKey},
	} {
		switch {
		case s.typed != "":
			*s.stored, fields = u.invSeal(s.typed, s.purpose), append(fields, s.field)
		case s.clear && *s.stored != nil:
			*s.stored, fields = nil, append(fields, s.field)
		}
	}
	return fields
}

func (u *UI) deleteCredential(w http.ResponseWriter, r *http.Request) error {
	c, err := u.pathCredential(r)
	if err != nil {
		return err
	}
	err = u.Store.DeleteCredential(r.Context(), c.ID)
	switch {
	case errors.Is(err, db.ErrInUse):
		return u.renderCredentialForm(w, r, http.StatusConflict, c, credentialFormPage{Error: keyInvCredInUse, Args: []any{c.Name}}, false)
	case err != nil:
		return err
	}
	u.Audit(r, "credential.delete", "credential", c.ID, map[string]any{"name": c.Name})
	core.RedirectNotice(w, r, "/credentials", "deleted")
	return nil
}
