package auth

import (
	"context"
	"errors"
	"fmt"

	"backupd/db"
)

// AdminUsername is the account created on a fresh data directory.
const AdminUsername = "admin"

// Bootstrap brings the built-in roles in step with this release and, when
// there is no user at all, creates "admin" with a random password. It
// returns that password (empty when no user was created): the caller shows
// it once and nowhere else.
func Bootstrap(ctx context.Context, store *db.Store) (adminPassword string, err error) {
	for _, r := range BuiltinRoles {
		if err := store.EnsureRole(ctx, db.Role{
			Name: r.Name, Description: r.Description, Builtin: true,
			AllPermissions: r.AllPermissions, Permissions: r.Permissions,
		}); err != nil {
			return "", fmt.Errorf("built-in role %s: %w", r.Name, err)
		}
	}
	n, err := store.CountUsers(ctx)
	if err != nil {
		return "", fmt.Errorf("count users: %w", err)
	}
	if n > 0 {
		return "", nil
	}
	admin, err := store.RoleByName(ctx, RoleAdministrator)
	if err != nil {
		return "", err
	}
	password := RandomPassword()
	hash, err := HashPassword(password)
	if err != nil {
		return "", err
	}
	_, err = store.CreateUser(ctx, db.NewUser{
		Username: AdminUsername, PasswordHash: hash, AllGroups: true,
		MustChangePassword: true, RoleIDs: []int64{admin.ID},
	})
	if errors.Is(err, db.ErrNameExists) {
		// Another process bootstrapped at the same moment.
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("create admin user: %w", err)
	}
	return password, nil
}
