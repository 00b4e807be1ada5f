package inventory

import (
	"net/http"

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

func (u *handlers) credentialList(w http.ResponseWriter, r *http.Request) error {
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

func (u *handlers) newCredentialForm(w http.ResponseWriter, r *http.Request) error {
	return u.Render(w, r, http.StatusOK, "credentials_form.html", keyInvTitleNewCredential, credentialFormPage{})
}

func (u *handlers) credentialDetail(w http.ResponseWriter, r *http.Request) error {
	c, err := u.pathCredential(r)
	if err != nil {
		return err
	}
	p := credentialFormPage{Notice: core.Notice(r, credentialNotices)}
	return u.renderCredentialForm(w, r, http.StatusOK, c, p, false)
}

func (u *handlers) pathCredential(r *http.Request) (db.Credential, error) {
	id, err := core.PathID(r)
	if err != nil {
		return db.Credential{}, err
	}
	return u.Store.GetCredential(r.Context(), id)
}

// renderCredentialForm shows stored credential c, with the fields as
// typed when typed is set (a form that comes back), else as stored.
func (u *handlers) renderCredentialForm(w http.ResponseWriter, r *http.Request, status int, c db.Credential, p credentialFormPage, typed bool) error {
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
