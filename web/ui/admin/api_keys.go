package admin

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// The API keys page: the signed-in user's keys (and, for users with
// users.view, everyone's), a form to create one, and revocation. A new key
// is shown once, on the answer to the form that created it: only its
// prefix and hash are stored, and it is never in a URL, a log line or the
// audit log.

// apiKeysPage is the data of apikeys.html.
type apiKeysPage struct {
	Keys []keyRow
	// All is set when the list shows every user's keys; CanSeeAll when
	// the user may ask for that.
	All       bool
	CanSeeAll bool
	Total     int
	Pager     core.Pager
	Notice    string
	Form      keyForm
}

// keyRow is a listed key. State is a message key.
type keyRow struct {
	ID          int64
	Name        string
	Prefix      string
	Owner       string
	Narrowed    bool
	Permissions []string
	State       string
	Active      bool
	Revoked     bool
	ExpiresAt   time.Time
	LastUsedAt  time.Time
	CreatedAt   time.Time
	CanRevoke   bool
}

// keyForm is the create form, kept when it is refused.
type keyForm struct {
	Name    string
	Expires string
	Narrow  bool
	Grid    []permRow
	// MinDate is tomorrow, the earliest expiry, in the server's zone.
	MinDate string
	Zone    string
	Error   string
	Args    []any
}

var keyNotices = map[string]string{"revoked": keyAdminKeyRevokedNotice}

func (u *handlers) apiKeys(w http.ResponseWriter, r *http.Request) error {
	return u.renderAPIKeys(w, r, http.StatusOK, keyForm{})
}

// renderAPIKeys shows the key list with the create form f.
func (u *handlers) renderAPIKeys(w http.ResponseWriter, r *http.Request, status int, f keyForm) error {
	s := core.SessionOf(r)
	p := apiKeysPage{CanSeeAll: s.Can("users.view"), Notice: core.DoneNotice(r, keyNotices)}
	p.All = p.CanSeeAll && r.URL.Query().Get("owner") == "all"
	owner := s.UserID
	if p.All {
		owner = 0
	}
	n := core.PageNumber(r, maxAdminPage)
	keys, total, err := u.Store.APIKeyPage(r.Context(), owner, adminPageSize, (n-1)*adminPageSize)
	if err != nil {
		return err
	}
	p.Total, p.Pager = total, core.NewPager(r, n, adminPageSize, total)
	now := u.Now()
	for _, k := range keys {
		p.Keys = append(p.Keys, u.keyRow(s, k, now))
	}
	f.MinDate = now.In(u.Location).AddDate(0, 0, 1).Format(time.DateOnly)
	f.Zone = u.DefaultZone()
	if f.Grid == nil {
		f.Grid = keyGrid(s, nil)
	}
	p.Form = f
	return u.Render(w, r, status, "apikeys.html", keyTitleAPIKeys, p)
}

func (u *handlers) keyRow(s *core.Session, k db.APIKey, now time.Time) keyRow {
	row := keyRow{ID: k.ID, Name: k.Name, Prefix: auth.KeyScheme + k.Prefix, Owner: k.Username,
		Narrowed: k.Narrowed, Permissions: k.Permissions, State: keyAdminKeyActive}
	row.CreatedAt, _ = db.ParseTime(k.CreatedAt)
	if k.LastUsedAt != nil {
		row.LastUsedAt, _ = db.ParseTime(*k.LastUsedAt)
	}
	if k.ExpiresAt != nil {
		row.ExpiresAt, _ = db.ParseTime(*k.ExpiresAt)
	}
	switch {
	case k.RevokedAt != nil:
		row.State, row.Revoked = keyAdminKeyRevoked, true
	case !row.ExpiresAt.IsZero() && !now.Before(row.ExpiresAt):
		row.State = keyAdminKeyExpired
	case !k.UserActive:
		row.State = keyAdminKeyOwnerInactive
	}
	row.Active = row.State == keyAdminKeyActive
	row.CanRevoke = !row.Revoked && s.Can("api_keys.delete") && (k.UserID == s.UserID || s.Can("users.update"))
	return row
}

// keyGrid offers the permissions s holds, ticking checked.
func keyGrid(s *core.Session, checked []string) []permRow {
	return permGrid(func(p string) bool { return slices.Contains(checked, p) }, s.Can)
}

// keyCreatedPage is the data of apikeys_created.html: the one answer that
// shows the key.
type keyCreatedPage struct {
	Name      string
	Key       string
	Prefix    string
	ExpiresAt time.Time
	Narrowed  bool
	Perms     []string
	// Origin is this server as the browser reached it, for the example.
	Origin string
}

// createAPIKey mints a key for the signed-in user: a name, an optional
// expiry date (the key stops working at the start of that day, server
// time) and optionally a subset of the user's permissions.
func (u *handlers) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	s := core.SessionOf(r)
	f := keyForm{
		Name:    core.Truncate(strings.TrimSpace(r.PostFormValue("name")), 4*core.MaxNameChars),
		Expires: core.Truncate(strings.TrimSpace(r.PostFormValue("expires")), 32),
		Narrow:  r.PostFormValue("narrow") == "1",
	}
	perms, ok := formPermissions(r)
	f.Grid = keyGrid(s, perms)
	fail := func(status int, key string, args ...any) error {
		f.Error, f.Args = key, args
		return u.renderAPIKeys(w, r, status, f)
	}
	if !ok {
		return fail(http.StatusUnprocessableEntity, keyAdminErrBadForm)
	}
	if f.Name == "" || core.NameLength(f.Name) > core.MaxNameChars {
		return fail(http.StatusUnprocessableEntity, keyAdminErrKeyName, core.MaxNameChars)
	}
	var expiresAt *string
	var expires time.Time
	if f.Expires != "" {
		t, err := time.ParseInLocation(time.DateOnly, f.Expires, u.Location)
		if err != nil {
			return fail(http.StatusUnprocessableEntity, keyAdminErrKeyExpiry)
		}
		if !t.After(u.Now()) {
			return fail(http.StatusUnprocessableEntity, keyAdminErrKeyExpiryPast)
		}
		expires = t
		v := t.UTC().Format(db.TimeFormat)
		expiresAt = &v
	}
	if f.Narrow {
		if len(perms) == 0 {
			return fail(http.StatusUnprocessableEntity, keyAdminErrKeyNoPerm)
		}
		for _, p := range perms {
			if !s.Can(p) {
				return fail(http.StatusForbidden, keyAdminErrPermAboveYou, p)
			}
		}
	} else {
		perms = nil
	}
	key, prefix, hash := auth.NewAPIKey()
	id, err := u.Store.CreateAPIKey(r.Context(), db.APIKey{
		UserID: s.UserID, Name: f.Name, Prefix: prefix, Hash: hash,
		Narrowed: f.Narrow, Permissions: perms, ExpiresAt: expiresAt,
	})
	if err != nil {
		return err
	}
	// As the command line records it: the prefix, never the key.
	u.Audit(r, "api_key.create", "api_key", id, map[string]any{
		"name": f.Name, "owner": s.Username, "prefix": auth.KeyScheme + prefix,
		"permissions": perms, "expires_at": expiresAt,
	})
	return u.Render(w, r, http.StatusOK, "apikeys_created.html", keyTitleAPIKeyCreated, keyCreatedPage{
		Name: f.Name, Key: key, Prefix: auth.KeyScheme + prefix, ExpiresAt: expires, Narrowed: f.Narrow, Perms: perms,
		Origin: core.Origin(r),
	})
}

// revokeAPIKey revokes one of the user's own keys, or anyone's for a user
// who may also change users.
func (u *handlers) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	id, err := core.PathID(r)
	if err != nil {
		return err
	}
	s := core.SessionOf(r)
	k, err := u.Store.APIKeyByID(r.Context(), id)
	if err != nil {
		return err
	}
	if k.UserID != s.UserID && !s.Can("users.update") {
		return core.Forbidden()
	}
	back := "/api-keys"
	if r.PostFormValue("owner") == "all" {
		back += "?owner=all"
	}
	if k.RevokedAt == nil {
		if err := u.Store.RevokeAPIKey(r.Context(), id); err != nil && !errors.Is(err, db.ErrNotFound) {
			return err
		}
		u.Audit(r, "api_key.revoke", "api_key", id, map[string]any{
			"name": k.Name, "owner": k.Username, "prefix": auth.KeyScheme + k.Prefix,
		})
	}
	core.RedirectDone(w, r, back, "revoked")
	return nil
}
