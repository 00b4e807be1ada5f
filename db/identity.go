package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"
)

// Where a user's identity lives (User.Source).
const (
	// UserLocal users sign in with a password kept here.
	UserLocal = "local"
	// UserLDAP users are checked by the LDAP directory; ExternalID is
	// their entry's DN.
	UserLDAP = "ldap"
	// UserOIDC users are signed in by the OpenID Connect provider;
	// ExternalID is "ISSUER SUBJECT".
	UserOIDC = "oidc"
)

// Setting keys of the identity providers.
const (
	// SettingLDAP holds an LDAPSettings.
	SettingLDAP = "identity_ldap"
	// SettingOIDC holds an OIDCSettings.
	SettingOIDC = "identity_oidc"
)

// ErrLocalAccount is a directory or provider sign-in under a name a local
// account holds (or the other way round): the two are never merged, so
// that a directory cannot take over the break-glass administrator.
var ErrLocalAccount = errors.New("the username belongs to an account of another kind")

// ErrUserDisabled is a directory or provider sign-in of a user an
// administrator disabled: the source's word does not undo that.
var ErrUserDisabled = errors.New("an administrator disabled this user")

// ErrOtherPerson is a single sign-on whose provider names, under the
// user's name, another subject than the one the user was created for: a
// name reused or renamed at the provider must not take over an account.
var ErrOtherPerson = errors.New("the provider's subject for this username changed")

// GroupMapping gives the members of a directory group (or holders of a
// claim value) backupd roles and a device-group scope. Several mappings
// that match one user add up.
type GroupMapping struct {
	// Group is the group as the source names it: an LDAP group's DN or
	// its name (cn), an OIDC claim value. Compared case-insensitively.
	Group string `json:"group"`
	// RoleIDs are the roles it gives.
	RoleIDs []int64 `json:"role_ids"`
	// AllGroups gives every device group; otherwise GroupIDs (and their
	// descendants).
	AllGroups bool    `json:"all_groups,omitempty"`
	GroupIDs  []int64 `json:"group_ids,omitempty"`
}

// LDAPSettings is the LDAP / Active Directory sign-in (app/identity/ldap).
type LDAPSettings struct {
	Enabled bool `json:"enabled"`
	// URL is ldaps://host:636 or ldap://host:389.
	URL string `json:"url"`
	// Security is "ldaps", "starttls" or "insecure" (plain LDAP: the
	// password crosses the network readable; an explicit choice).
	Security string `json:"security"`
	// CACert (PEM) pins the server's certificate authority; empty uses
	// the system's.
	CACert string `json:"ca_cert,omitempty"`
	// Preset is "openldap" or "ad": the defaults the form filled in.
	Preset string `json:"preset,omitempty"`
	// BindDN and BindPassword (sealed, purpose LDAPBindPurpose) are the
	// service account that searches; an empty BindDN searches
	// anonymously.
	BindDN       string `json:"bind_dn,omitempty"`
	BindPassword []byte `json:"bind_password,omitempty"`
	// BaseDN is where users are searched; UserFilter finds one, with
	// {username} replaced by the escaped name typed.
	BaseDN     string `json:"base_dn"`
	UserFilter string `json:"user_filter"`
	// UsernameAttr is the attribute that is the backupd username (uid,
	// sAMAccountName, userPrincipalName).
	UsernameAttr string `json:"username_attr"`
	// GroupMode is how a user's groups are found: "memberof" (the
	// user's memberOf attribute), "search" (groups whose GroupMemberAttr
	// holds the user's DN, nested ones followed up) or "ad-chain" (Active
	// Directory's in-chain matching rule, nested groups included).
	GroupMode       string `json:"group_mode"`
	GroupBaseDN     string `json:"group_base_dn,omitempty"`
	GroupFilter     string `json:"group_filter,omitempty"`
	GroupMemberAttr string `json:"group_member_attr,omitempty"`
	// Timeout bounds each conversation with the server (default 10 s).
	Timeout Duration `json:"timeout,omitempty"`
	// SyncInterval is how often directory users are read again (default
	// 15 min).
	SyncInterval Duration       `json:"sync_interval,omitempty"`
	Mappings     []GroupMapping `json:"mappings"`
}

// LDAPBindPurpose seals LDAPSettings.BindPassword.
const LDAPBindPurpose = "ldap bind password"

// OIDCSettings is the OpenID Connect single sign-on (app/identity/oidc).
type OIDCSettings struct {
	Enabled bool `json:"enabled"`
	// Name is the provider as the login page's button names it.
	Name string `json:"name"`
	// Issuer is the provider's issuer URL; discovery is read from
	// Issuer + "/.well-known/openid-configuration".
	Issuer   string `json:"issuer"`
	ClientID string `json:"client_id"`
	// ClientSecret is sealed (purpose OIDCSecretPurpose); empty for a
	// public client (PKCE alone).
	ClientSecret []byte `json:"client_secret,omitempty"`
	// ExternalURL is how browsers reach backupd (behind a reverse proxy,
	// the proxy's URL); the redirect URL is ExternalURL + "/login/oidc/callback".
	ExternalURL string `json:"external_url"`
	// Scopes beyond "openid" (default profile, email, groups).
	Scopes []string `json:"scopes,omitempty"`
	// UsernameClaim names the backupd username (default
	// preferred_username); GroupsClaim the groups (default groups; a
	// string or a list of strings).
	UsernameClaim string `json:"username_claim,omitempty"`
	GroupsClaim   string `json:"groups_claim,omitempty"`
	// CACert (PEM) pins the provider's certificate authority.
	CACert   string         `json:"ca_cert,omitempty"`
	Mappings []GroupMapping `json:"mappings"`
}

// OIDCSecretPurpose seals OIDCSettings.ClientSecret.
const OIDCSecretPurpose = "oidc client secret"

// Duration is a time.Duration kept in JSON as Go's text ("15m0s").
type Duration time.Duration

// MarshalJSON writes the duration as text.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Duration(d).String() + `"`), nil
}

// UnmarshalJSON reads a duration's text.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("duration %s: want a string such as \"15m\"", b)
	}
	v, err := time.ParseDuration(string(b[1 : len(b)-1]))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// LDAPConfig returns the LDAP settings (zero and disabled when never set).
func (s *Store) LDAPConfig(ctx context.Context) (LDAPSettings, error) {
	var v LDAPSettings
	_, err := s.GetSetting(ctx, SettingLDAP, &v)
	return v, err
}

// OIDCConfig returns the OpenID Connect settings (zero and disabled when
// never set).
func (s *Store) OIDCConfig(ctx context.Context) (OIDCSettings, error) {
	var v OIDCSettings
	_, err := s.GetSetting(ctx, SettingOIDC, &v)
	return v, err
}

// DirectoryUser is a user as its directory or provider describes it at
// sign-in or sync, with the access its mappings give.
type DirectoryUser struct {
	Source     string
	ExternalID string
	Username   string
	RoleIDs    []int64
	AllGroups  bool
	GroupIDs   []int64
}

// DirectoryChange says what SyncDirectoryUser did.
type DirectoryChange struct {
	Created bool
	// Changed: roles, scope, external id or active changed.
	Changed bool
	// Reactivated: the user had been disabled (by a sync) and is active
	// again.
	Reactivated bool
}

// SyncDirectoryUser creates the user on its first sign-in or brings an
// existing one of the same source in step: roles, scope and external id
// replaced, active, synced now. A name held by a user of another source
// is ErrLocalAccount, a user an administrator disabled ErrUserDisabled,
// and a single sign-on user whose provider subject changed
// ErrOtherPerson (an LDAP DN may change: entries move between OUs); each
// changes nothing. Role and group ids that no
// longer exist are skipped (a mapping may outlive a deleted role).
func (s *Store) SyncDirectoryUser(ctx context.Context, d DirectoryUser) (User, DirectoryChange, error) {
	var ch DirectoryChange
	var id int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		ch = DirectoryChange{}
		now := Now()
		var source, ext string
		var active, sourceDisabled bool
		err := tx.QueryRowContext(ctx, `SELECT id, source, external_id, active, source_disabled FROM users WHERE username = ?`, d.Username).
			Scan(&id, &source, &ext, &active, &sourceDisabled)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			id, err = engine.InsertID(ctx, tx, `INSERT INTO users (username, password_hash, all_groups, must_change_password,
				created_at, updated_at, source, external_id, synced_at) VALUES (?, '', ?, 0, ?, ?, ?, ?, ?)`,
				d.Username, d.AllGroups, now, now, d.Source, d.ExternalID, now)
			if err != nil {
				return fmt.Errorf("insert user: %w", err)
			}
			ch.Created = true
		case err != nil:
			return fmt.Errorf("get user: %w", err)
		case source != d.Source:
			return ErrLocalAccount
		case !active && !sourceDisabled:
			return ErrUserDisabled
		case d.Source == UserOIDC && ext != "" && ext != d.ExternalID:
			return ErrOtherPerson
		default:
			ch.Reactivated = !active
			ch.Changed = !active || ext != d.ExternalID
		}
		before, err := accessOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET active = 1, source_disabled = 0, all_groups = ?, external_id = ?, synced_at = ?,
			updated_at = ? WHERE id = ?`, d.AllGroups, d.ExternalID, now, now, id); err != nil {
			return fmt.Errorf("update user: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM user_roles WHERE user_id = ?`, id); err != nil {
			return fmt.Errorf("reset user roles: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM user_groups WHERE user_id = ?`, id); err != nil {
			return fmt.Errorf("reset user groups: %w", err)
		}
		for _, r := range d.RoleIDs {
			if _, err := tx.ExecContext(ctx, s.d.InsertOrIgnore(`user_roles (user_id, role_id)`,
				`SELECT ?, id FROM roles WHERE id = ?`), id, r); err != nil {
				return fmt.Errorf("grant role: %w", err)
			}
		}
		if !d.AllGroups {
			for _, g := range d.GroupIDs {
				if _, err := tx.ExecContext(ctx, s.d.InsertOrIgnore(`user_groups (user_id, group_id)`,
					`SELECT ?, id FROM device_groups WHERE id = ?`), id, g); err != nil {
					return fmt.Errorf("scope user: %w", err)
				}
			}
		}
		after, err := accessOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if !ch.Created && before != after {
			ch.Changed = true
		}
		return nil
	})
	if err != nil {
		return User{}, ch, err
	}
	u, err := s.UserByID(ctx, id)
	return u, ch, err
}

// accessOf is a user's roles and scope in a comparable form.
func accessOf(ctx context.Context, q engine.Querier, id int64) (string, error) {
	var all bool
	if err := q.QueryRowContext(ctx, `SELECT all_groups FROM users WHERE id = ?`, id).Scan(&all); err != nil {
		return "", fmt.Errorf("user scope: %w", err)
	}
	out := fmt.Sprintf("all=%v roles=", all)
	for _, qs := range []string{`SELECT role_id FROM user_roles WHERE user_id = ? ORDER BY role_id`,
		`SELECT group_id FROM user_groups WHERE user_id = ? ORDER BY group_id`} {
		err := engine.EachRow(ctx, q, qs, []any{id}, func(row engine.Scanner) error {
			var v int64
			if err := row.Scan(&v); err != nil {
				return err
			}
			out += fmt.Sprintf("%d,", v)
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("user access: %w", err)
		}
		out += " groups="
	}
	return out, nil
}

// DirectoryUsers returns the users of source (active or not), by id.
func (s *Store) DirectoryUsers(ctx context.Context, source string) ([]User, error) {
	return engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (User, error) { return scanUser(r) }, `SELECT `+userColumns+` FROM users WHERE source = ? ORDER BY id`, source)
}

// Revoked is what DisableDirectoryUser ended.
type Revoked struct {
	Sessions int
	Keys     int
}

// DisableDirectoryUser disables a directory or provider user its source
// no longer vouches for, in one transaction: inactive, every web session
// ended, every API key revoked. A user already inactive is left as is
// (zero counts). The last-administrator rule does not hold it back: the
// directory decides, and the local break-glass administrator remains.
func (s *Store) DisableDirectoryUser(ctx context.Context, id int64) (Revoked, error) {
	var r Revoked
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		r = Revoked{}
		now := Now()
		res, err := tx.ExecContext(ctx, `UPDATE users SET active = 0, source_disabled = 1, updated_at = ?
			WHERE id = ? AND active = 1 AND source <> ?`, now, id, UserLocal)
		if err != nil {
			return fmt.Errorf("disable user: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		res, err = tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE user_id = ?`, id)
		if err != nil {
			return fmt.Errorf("end web sessions: %w", err)
		}
		n, _ := res.RowsAffected()
		r.Sessions = int(n)
		res, err = tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL`, now, id)
		if err != nil {
			return fmt.Errorf("revoke api keys: %w", err)
		}
		n, _ = res.RowsAffected()
		r.Keys = int(n)
		return nil
	})
	return r, err
}

// TouchDirectoryUser records that the source vouched for the user now,
// when nothing else changed.
func (s *Store) TouchDirectoryUser(ctx context.Context, id int64) error {
	if _, err := s.writer.ExecContext(ctx, `UPDATE users SET synced_at = ? WHERE id = ?`, Now(), id); err != nil {
		return fmt.Errorf("touch user: %w", err)
	}
	return nil
}
