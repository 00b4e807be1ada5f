package auth

import (
	"slices"

	"backupd/db"
)

// Nobody hands out more than they hold. A role is given to a user, a
// permission or a credential put in a role (or taken out of it: for the
// role's holders that is a change they did not ask for), and another
// user is changed (its password reset, its roles replaced) only by a
// principal that holds all of it; else a helpdesk account that may
// change users could make itself, or anyone, an administrator.

// HoldsGrants reports whether p holds everything g grants: each of its
// permissions (the whole catalogue for g.All) and each credential it
// lets use.
func (p *Principal) HoldsGrants(g db.Grants) bool {
	for _, perm := range Permissions {
		if (g.All || g.Permissions[perm]) && !p.Can(perm) {
			return false
		}
	}
	for id := range g.Credentials {
		if !p.CanUseCredential(id) {
			return false
		}
	}
	return true
}

// CanGrantRole reports whether p may give role r to a user: it holds
// every permission of r and may use every credential r lists. Names in
// r that are no permission (left by an older release) grant nothing.
func (p *Principal) CanGrantRole(r db.Role) bool {
	if r.AllPermissions {
		return p.HoldsGrants(db.Grants{All: true})
	}
	for _, perm := range r.Permissions {
		if IsPermission(perm) && !p.Can(perm) {
			return false
		}
	}
	for _, id := range r.Credentials {
		if !p.CanUseCredential(id) {
			return false
		}
	}
	return true
}

// Ungrantable returns the first permission of the catalogue that one of
// before and after holds and the other does not, and that p does not
// hold: a change from before to after p may not make. "" when p may make
// it.
func (p *Principal) Ungrantable(before, after []string) string {
	for _, perm := range Permissions {
		if slices.Contains(before, perm) != slices.Contains(after, perm) && !p.Can(perm) {
			return perm
		}
	}
	return ""
}

// UngrantableCredential is Ungrantable for the credentials a role lets
// use one by one: the first id of before, then of after, in one and not
// the other that p may not use; 0 when none.
func (p *Principal) UngrantableCredential(before, after []int64) int64 {
	for _, list := range [][]int64{before, after} {
		for _, id := range list {
			if slices.Contains(before, id) != slices.Contains(after, id) && !p.CanUseCredential(id) {
				return id
			}
		}
	}
	return 0
}

// KeepUngrantable returns perms and creds, a role's new permissions and
// credentials as someone asked for them, with what p may not change put
// back as role r has it: a permission p does not hold, a credential p
// may not use, stays in the role, or out of it, as it is. (A form never
// sends those: their boxes are not p's to tick.)
func (p *Principal) KeepUngrantable(r db.Role, perms []string, creds []int64) ([]string, []int64) {
	perms, creds = slices.Clone(perms), slices.Clone(creds)
	for _, perm := range r.Permissions {
		if IsPermission(perm) && !p.Can(perm) && !slices.Contains(perms, perm) {
			perms = append(perms, perm)
		}
	}
	for _, id := range r.Credentials {
		if !p.CanUseCredential(id) && !slices.Contains(creds, id) {
			creds = append(creds, id)
		}
	}
	slices.Sort(creds)
	return perms, creds
}
