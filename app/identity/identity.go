// Package identity turns who a directory or an OpenID Connect provider
// says a person is into a backupd user: the person's groups, through the
// administrator's mappings, give roles and a device-group scope, and the
// user is created on first sign-in and brought in step at every sign-in
// and sync. The protocols live in ldapdir (LDAP / Active Directory) and
// oidc (OpenID Connect); this package knows neither.
package identity

import (
	"context"
	"errors"
	"slices"
	"strings"

	"backupd/db"
)

// Identity is a person as its source vouches for it.
type Identity struct {
	// Source is db.UserLDAP or db.UserOIDC.
	Source string
	// ExternalID names the person at the source (an LDAP DN, an OIDC
	// "ISSUER SUBJECT").
	ExternalID string
	Username   string
	// Groups are the person's groups (LDAP: DNs and names; OIDC: the
	// groups claim's values).
	Groups []string
}

// Access is what a person's groups give.
type Access struct {
	RoleIDs   []int64
	AllGroups bool
	GroupIDs  []int64
	// Matched are the mappings' groups the person is in, as the mappings
	// spell them.
	Matched []string
}

// ErrNotMapped is a person in no mapped group: it may not sign in.
var ErrNotMapped = errors.New("the user is in no group that gives a backupd role")

// Resolve adds up the mappings whose group is among groups (compared
// case-insensitively, as directories compare names and DNs). A mapping
// without roles still counts as matched only if it gives a scope; a
// person matched by no mapping that gives a role has no access (Access
// with no RoleIDs).
func Resolve(mappings []db.GroupMapping, groups []string) Access {
	have := make(map[string]bool, len(groups))
	for _, g := range groups {
		have[fold(g)] = true
	}
	var a Access
	for _, m := range mappings {
		if !have[fold(m.Group)] {
			continue
		}
		a.Matched = append(a.Matched, m.Group)
		a.RoleIDs = append(a.RoleIDs, m.RoleIDs...)
		a.AllGroups = a.AllGroups || m.AllGroups
		a.GroupIDs = append(a.GroupIDs, m.GroupIDs...)
	}
	a.RoleIDs = sortedUnique(a.RoleIDs)
	a.GroupIDs = sortedUnique(a.GroupIDs)
	if a.AllGroups {
		a.GroupIDs = nil
	}
	return a
}

// fold is the form groups are compared in: trimmed, lower case, and for
// a DN without the spaces after its commas.
func fold(g string) string {
	g = strings.ToLower(strings.TrimSpace(g))
	if strings.Contains(g, "=") {
		g = strings.ReplaceAll(g, ", ", ",")
	}
	return g
}

func sortedUnique(ids []int64) []int64 {
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Provision signs id in as a backupd user: created on first sign-in,
// otherwise its roles and scope replaced by what its groups give now.
// A person whose groups give no role is ErrNotMapped (the caller
// disables an existing user with Revoke). A name a local account holds
// is db.ErrLocalAccount; nothing changes.
func Provision(ctx context.Context, store *db.Store, id Identity, mappings []db.GroupMapping) (db.User, Access, db.DirectoryChange, error) {
	a := Resolve(mappings, id.Groups)
	if len(a.RoleIDs) == 0 {
		return db.User{}, a, db.DirectoryChange{}, ErrNotMapped
	}
	u, ch, err := store.SyncDirectoryUser(ctx, db.DirectoryUser{
		Source: id.Source, ExternalID: id.ExternalID, Username: id.Username,
		RoleIDs: a.RoleIDs, AllGroups: a.AllGroups, GroupIDs: a.GroupIDs,
	})
	return u, a, ch, err
}

// Revoke disables id's user, if there is one and it is active: its
// source no longer vouches for it. found reports a user of id's source
// and name — for single sign-on, of id's subject too, so that someone
// else under the same name at the provider cannot disable the user.
func Revoke(ctx context.Context, store *db.Store, id Identity) (u db.User, r db.Revoked, found bool, err error) {
	u, err = store.UserByName(ctx, id.Username)
	if errors.Is(err, db.ErrNotFound) {
		return u, r, false, nil
	}
	if err != nil || u.Source != id.Source || (id.Source == db.UserOIDC && u.ExternalID != id.ExternalID) {
		return u, r, false, err
	}
	r, err = store.DisableDirectoryUser(ctx, u.ID)
	return u, r, true, err
}
