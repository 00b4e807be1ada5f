package identity

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"backupd/app/netguard"
	"backupd/app/secret"
	"backupd/db"
)

// Secret is a secret as a form or a flag gives it: a new value, keep the
// stored one (empty), or clear it.
type Secret struct {
	Value string
	Clear bool
}

// seal applies s to the stored sealed value.
func (s Secret) seal(stored []byte, sealer *secret.Sealer, purpose string) []byte {
	switch {
	case s.Clear:
		return nil
	case s.Value != "":
		return sealer.Seal(s.Value, purpose)
	}
	return stored
}

// ErrHostRefused is a directory or provider at an address backupd does
// not connect out to (a cloud metadata or link-local address; see
// netguard), unless the outbound allow list names it.
var ErrHostRefused = errors.New("backupd does not connect to this address")

// checkHost refuses a URL's host netguard refuses.
func checkHost(ctx context.Context, store *db.Store, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return nil // the protocol's own validation says what is wrong
	}
	policy, err := netguard.Load(ctx, store)
	if err != nil {
		return err
	}
	if err := policy.CheckHost(u.Hostname()); err != nil {
		return fmt.Errorf("%w: %v", ErrHostRefused, err)
	}
	return nil
}

// SaveLDAP validates and stores the LDAP settings; the mappings stay as
// they are (AddMapping, DeleteMapping). bind is the service account's
// password (sealed; dropped with the bind DN). It returns what was stored
// before and after.
func SaveLDAP(ctx context.Context, store *db.Store, sealer *secret.Sealer, in db.LDAPSettings, bind Secret) (before, after db.LDAPSettings, err error) {
	if err := ValidateLDAP(in); err != nil {
		return before, after, err
	}
	if err := checkHost(ctx, store, in.URL); err != nil {
		return before, after, err
	}
	var cur db.LDAPSettings
	err = store.UpdateSetting(ctx, db.SettingLDAP, &cur, func(bool) error {
		before = cur
		in.Mappings = cur.Mappings
		in.BindPassword = bind.seal(cur.BindPassword, sealer, db.LDAPBindPurpose)
		if in.BindDN == "" {
			in.BindPassword = nil
		}
		after, cur = in, in
		return nil
	})
	return before, after, err
}

// SaveOIDC validates and stores the OpenID Connect settings; the mappings
// stay as they are. clientSecret is sealed.
func SaveOIDC(ctx context.Context, store *db.Store, sealer *secret.Sealer, in db.OIDCSettings, clientSecret Secret) (before, after db.OIDCSettings, err error) {
	if err := ValidateOIDC(in); err != nil {
		return before, after, err
	}
	if err := checkHost(ctx, store, in.Issuer); err != nil {
		return before, after, err
	}
	var cur db.OIDCSettings
	err = store.UpdateSetting(ctx, db.SettingOIDC, &cur, func(bool) error {
		before = cur
		in.Mappings = cur.Mappings
		in.ClientSecret = clientSecret.seal(cur.ClientSecret, sealer, db.OIDCSecretPurpose)
		after, cur = in, in
		return nil
	})
	return before, after, err
}

// MaxMappings bounds the mappings of one source.
const MaxMappings = 200

// Mapping errors.
var (
	ErrMappingGroup  = errors.New("name the directory group or claim value (at most 1,000 characters)")
	ErrMappingRoles  = errors.New("a mapping gives at least one role")
	ErrMappingExists = errors.New("this group is mapped already; delete its mapping first")
	ErrMappingLimit  = fmt.Errorf("at most %d mappings per source", MaxMappings)
	ErrNoMapping     = errors.New("no such mapping")
	ErrSource        = errors.New("the source is ldap or oidc")
)

// Mappings returns source's mappings.
func Mappings(ctx context.Context, store *db.Store, source string) ([]db.GroupMapping, error) {
	switch source {
	case db.UserLDAP:
		s, err := store.LDAPConfig(ctx)
		return s.Mappings, err
	case db.UserOIDC:
		s, err := store.OIDCConfig(ctx)
		return s.Mappings, err
	}
	return nil, ErrSource
}

// AddMapping adds m to source's mappings (roles and groups as given;
// the caller checks who may grant them).
func AddMapping(ctx context.Context, store *db.Store, source string, m db.GroupMapping) error {
	m.Group = strings.TrimSpace(m.Group)
	if m.Group == "" || len(m.Group) > 1000 || strings.ContainsAny(m.Group, "\r\n\x00") {
		return ErrMappingGroup
	}
	if len(m.RoleIDs) == 0 {
		return ErrMappingRoles
	}
	if m.AllGroups {
		m.GroupIDs = nil
	}
	m.RoleIDs, m.GroupIDs = sortedUnique(m.RoleIDs), sortedUnique(m.GroupIDs)
	return updateMappings(ctx, store, source, func(ms []db.GroupMapping) ([]db.GroupMapping, error) {
		if slices.ContainsFunc(ms, func(x db.GroupMapping) bool { return fold(x.Group) == fold(m.Group) }) {
			return nil, ErrMappingExists
		}
		if len(ms) >= MaxMappings {
			return nil, ErrMappingLimit
		}
		return append(ms, m), nil
	})
}

// DeleteMapping deletes source's mapping of group and returns it.
func DeleteMapping(ctx context.Context, store *db.Store, source, group string) (db.GroupMapping, error) {
	var gone db.GroupMapping
	err := updateMappings(ctx, store, source, func(ms []db.GroupMapping) ([]db.GroupMapping, error) {
		i := slices.IndexFunc(ms, func(x db.GroupMapping) bool { return fold(x.Group) == fold(group) })
		if i < 0 {
			return nil, ErrNoMapping
		}
		gone = ms[i]
		return slices.Delete(ms, i, i+1), nil
	})
	return gone, err
}

func updateMappings(ctx context.Context, store *db.Store, source string, change func([]db.GroupMapping) ([]db.GroupMapping, error)) error {
	switch source {
	case db.UserLDAP:
		var s db.LDAPSettings
		return store.UpdateSetting(ctx, db.SettingLDAP, &s, func(bool) error {
			ms, err := change(s.Mappings)
			s.Mappings = ms
			return err
		})
	case db.UserOIDC:
		var s db.OIDCSettings
		return store.UpdateSetting(ctx, db.SettingOIDC, &s, func(bool) error {
			ms, err := change(s.Mappings)
			s.Mappings = ms
			return err
		})
	}
	return ErrSource
}

// SyncInterval is the settings' sync interval or the default.
func SyncInterval(s db.LDAPSettings) time.Duration {
	if s.SyncInterval > 0 {
		return time.Duration(s.SyncInterval)
	}
	return DefaultSyncInterval
}

// LDAPAudit is what the audit log keeps of a change of the LDAP settings,
// from the web page or the command line alike: every field but the
// service account's password, which is only said to have changed.
func LDAPAudit(before, after db.LDAPSettings) map[string]any {
	return map[string]any{
		"enabled": after.Enabled, "url": after.URL, "security": after.Security, "ca_cert_set": after.CACert != "",
		"bind_dn": after.BindDN, "bind_password_changed": !slices.Equal(before.BindPassword, after.BindPassword),
		"base_dn": after.BaseDN, "user_filter": after.UserFilter, "username_attr": after.UsernameAttr,
		"group_mode": after.GroupMode, "group_base_dn": after.GroupBaseDN, "group_filter": after.GroupFilter,
		"timeout": time.Duration(after.Timeout).String(), "sync_interval": time.Duration(after.SyncInterval).String(),
	}
}

// OIDCAudit is what the audit log keeps of a change of the OpenID Connect
// settings: every field but the client secret, which is only said to
// have changed.
func OIDCAudit(before, after db.OIDCSettings) map[string]any {
	return map[string]any{
		"enabled": after.Enabled, "name": after.Name, "issuer": after.Issuer, "client_id": after.ClientID,
		"client_secret_changed": !slices.Equal(before.ClientSecret, after.ClientSecret), "external_url": after.ExternalURL,
		"scopes": after.Scopes, "username_claim": after.UsernameClaim, "groups_claim": after.GroupsClaim, "ca_cert_set": after.CACert != "",
	}
}
