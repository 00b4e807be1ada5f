package account

import (
	"context"
	"errors"
	"net/http"

	"backupd/app/identity"
	"backupd/app/identity/ldapdir"
	"backupd/db"
	"backupd/web/ui/core"
)

// Sign-in through the LDAP directory. A name no local account holds goes
// to the directory when LDAP sign-in is on; a local account never does,
// so the break-glass administrator signs in whatever the directory's
// state. The directory checks the password (backupd keeps none), and the
// user's groups give its roles afresh at every sign-in.

// errDirectoryDown is a directory that did not answer: the sign-in is
// neither right nor wrong, and counts as no failure.
var errDirectoryDown = errors.New("directory unavailable")

// ldapSignIn checks username and password with the directory. ok with a
// user signs in; otherwise reason says why not (for the audit log), and
// errDirectoryDown is a directory that did not answer.
func (u *handlers) ldapSignIn(ctx context.Context, r *http.Request, set db.LDAPSettings, username, password string) (user db.User, ok bool, reason string, err error) {
	dir, err := identity.OpenLDAP(set, u.Sealer)
	if err != nil {
		u.Log.Warn("the LDAP settings cannot be used", "err", err)
		return user, false, "directory_unavailable", errDirectoryDown
	}
	e, err := dir.Authenticate(ctx, username, password)
	switch {
	case errors.Is(err, ldapdir.ErrInvalidCredentials):
		return user, false, "wrong_password", nil
	case err != nil:
		u.Log.Warn("the directory did not answer a sign-in", "err", err)
		return user, false, "directory_unavailable", errDirectoryDown
	}
	user, a, ch, err := identity.Provision(ctx, u.Store, identity.Identity{
		Source: db.UserLDAP, ExternalID: e.DN, Username: e.Username, Groups: e.GroupKeys(),
	}, set.Mappings)
	switch {
	case errors.Is(err, identity.ErrNotMapped):
		gone, r2, found, rerr := identity.Revoke(ctx, u.Store, identity.Identity{Source: db.UserLDAP, Username: e.Username})
		if rerr != nil {
			return user, false, "", rerr
		}
		if found && (r2.Sessions > 0 || r2.Keys > 0 || gone.Active) {
			uid := gone.ID
			u.AuditEntry(r, db.AuditEntry{UserID: &uid, Username: gone.Username, Action: "user.directory_disabled",
				TargetType: "user", TargetID: core.IDString(gone.ID),
				Details: map[string]any{"source": db.UserLDAP, "reason": "no_mapped_group", "sessions_ended": r2.Sessions, "keys_revoked": r2.Keys}})
		}
		user.Username = e.Username
		if found {
			user.ID = gone.ID
		}
		return user, false, "no_mapped_group", nil
	case errors.Is(err, db.ErrLocalAccount):
		return user, false, "local_account_exists", nil
	case errors.Is(err, db.ErrUserDisabled):
		return user, false, "inactive", nil
	case err != nil:
		return user, false, "", err
	}
	if ch.Created || ch.Changed {
		uid := user.ID
		action := "user.directory_sync"
		if ch.Created {
			action = "user.directory_created"
		}
		u.AuditEntry(r, db.AuditEntry{UserID: &uid, Username: user.Username, Action: action, TargetType: "user",
			TargetID: core.IDString(user.ID), Details: map[string]any{"source": db.UserLDAP, "roles": user.Roles,
				"all_groups": user.AllGroups, "group_ids": user.GroupIDs, "groups": a.Matched}})
	}
	return user, true, "", nil
}
