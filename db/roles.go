package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"backupd/db/engine"
)

// Role is a named set of permissions.
type Role struct {
	ID             int64
	Name           string
	Description    string
	Builtin        bool
	AllPermissions bool
	Permissions    []string
	// Credentials are the credentials the role may use one by one
	// (SetRoleCredentials), beside credentials.use, which is all of them.
	Credentials []int64
	CreatedAt   string
	// Require2FA: the role's holders with a local account must use a
	// second factor (set up at their next sign-in if they have none).
	Require2FA bool
}

// EnsureRole creates the role by name, or brings an existing one in step
// with r (description, flags and exact permission set).
func (s *Store) EnsureRole(ctx context.Context, r Role) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		// Insert-if-missing in one statement, then update: nodes starting
		// together on an empty database all run this at once. The UPDATE
		// locks the role's row on PostgreSQL, so one node at a time resets
		// its permissions.
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO roles (name, description, builtin, all_permissions, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			r.Name, r.Description, r.Builtin, r.AllPermissions, Now()); err != nil {
			return fmt.Errorf("insert role: %w", err)
		}
		var id int64
		if err := tx.QueryRowContext(ctx, `SELECT id FROM roles WHERE name = ?`, r.Name).Scan(&id); err != nil {
			return fmt.Errorf("find role: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE roles SET description = ?, builtin = ?, all_permissions = ? WHERE id = ?`,
			r.Description, r.Builtin, r.AllPermissions, id); err != nil {
			return fmt.Errorf("update role: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM role_permissions WHERE role_id = ?`, id); err != nil {
			return fmt.Errorf("reset role permissions: %w", err)
		}
		for _, p := range r.Permissions {
			if _, err := tx.ExecContext(ctx, `INSERT INTO role_permissions (role_id, permission) VALUES (?, ?)`, id, p); err != nil {
				return fmt.Errorf("grant %s: %w", p, err)
			}
		}
		return nil
	})
}

// RoleByName returns the role called name (without its permissions, with
// its credentials) or ErrNotFound.
func (s *Store) RoleByName(ctx context.Context, name string) (Role, error) {
	var r Role
	err := s.reader.QueryRowContext(ctx,
		`SELECT id, name, description, builtin, all_permissions, created_at, require_2fa FROM roles WHERE name = ?`, name).
		Scan(&r.ID, &r.Name, &r.Description, &r.Builtin, &r.AllPermissions, &r.CreatedAt, &r.Require2FA)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	if err != nil {
		return r, fmt.Errorf("get role: %w", err)
	}
	creds, err := roleCredentials(ctx, s.reader, &r.ID)
	if err != nil {
		return r, err
	}
	r.Credentials = creds[r.ID]
	return r, nil
}

// ListRoleNames returns every role's name, ordered by id.
func (s *Store) ListRoleNames(ctx context.Context) ([]string, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT name FROM roles ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// MaxRoles bounds how many roles (built-in ones included) may exist, so
// that every form that offers them all stays short.
const MaxRoles = 100

// RoleSummary is a role with its permissions and how many users hold it.
type RoleSummary struct {
	Role
	Users int
}

// ListRoles returns every role (at most MaxRoles): built-in ones first,
// in the order they were made, then custom ones by name; each with its permissions and number of holders.
func (s *Store) ListRoles(ctx context.Context) ([]RoleSummary, error) {
	roles, err := engine.QueryAll(ctx, s.reader, func(row engine.Scanner) (RoleSummary, error) {
		var r RoleSummary
		err := row.Scan(&r.ID, &r.Name, &r.Description, &r.Builtin, &r.AllPermissions, &r.CreatedAt, &r.Require2FA, &r.Users)
		return r, err
	}, `SELECT r.id, r.name, r.description, r.builtin, r.all_permissions, r.created_at, r.require_2fa,
		(SELECT COUNT(*) FROM user_roles ur WHERE ur.role_id = r.id)
		FROM roles r ORDER BY r.builtin DESC, CASE WHEN r.builtin = 1 THEN r.id END, `+s.d.FoldedOrder("r.name")+`, r.id LIMIT ?`, MaxRoles)
	if err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	byID := map[int64]*RoleSummary{}
	for i := range roles {
		byID[roles[i].ID] = &roles[i]
	}
	err = engine.EachRow(ctx, s.reader, `SELECT role_id, permission FROM role_permissions`, nil, func(row engine.Scanner) error {
		var id int64
		var p string
		if err := row.Scan(&id, &p); err != nil {
			return err
		}
		if r := byID[id]; r != nil {
			r.Permissions = append(r.Permissions, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("role permissions: %w", err)
	}
	creds, err := roleCredentials(ctx, s.reader, nil)
	if err != nil {
		return nil, err
	}
	for i := range roles {
		roles[i].Credentials = creds[roles[i].ID]
	}
	return roles, nil
}

// RoleByID returns a role with its permissions, or ErrNotFound.
func (s *Store) RoleByID(ctx context.Context, id int64) (Role, error) {
	var r Role
	err := s.reader.QueryRowContext(ctx,
		`SELECT id, name, description, builtin, all_permissions, created_at, require_2fa FROM roles WHERE id = ?`, id).
		Scan(&r.ID, &r.Name, &r.Description, &r.Builtin, &r.AllPermissions, &r.CreatedAt, &r.Require2FA)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	if err != nil {
		return r, fmt.Errorf("get role: %w", err)
	}
	err = engine.EachRow(ctx, s.reader, `SELECT permission FROM role_permissions WHERE role_id = ? ORDER BY permission`, []any{id},
		func(row engine.Scanner) error {
			var p string
			if err := row.Scan(&p); err != nil {
				return err
			}
			r.Permissions = append(r.Permissions, p)
			return nil
		})
	if err != nil {
		return r, fmt.Errorf("role permissions: %w", err)
	}
	creds, err := roleCredentials(ctx, s.reader, &id)
	if err != nil {
		return r, err
	}
	r.Credentials = creds[id]
	return r, nil
}

// RoleHolders returns up to limit usernames of the users holding role id,
// by name.
func (s *Store) RoleHolders(ctx context.Context, id int64, limit int) ([]string, error) {
	names, err := engine.QueryAll(ctx, s.reader, func(row engine.Scanner) (string, error) {
		var n string
		return n, row.Scan(&n)
	}, `SELECT u.username FROM user_roles ur JOIN users u ON u.id = ur.user_id WHERE ur.role_id = ?
		ORDER BY `+s.d.FoldedOrder("u.username")+` LIMIT ?`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("role holders: %w", err)
	}
	return names, nil
}

// CreateRole adds a custom role. A taken name (in any letter case) is
// ErrNameExists; a role beyond MaxRoles is ErrTooManyRoles.
func (s *Store) CreateRole(ctx context.Context, name, description string, perms []string) (int64, error) {
	var id int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM roles`).Scan(&n); err != nil {
			return fmt.Errorf("count roles: %w", err)
		}
		if n >= MaxRoles {
			return ErrTooManyRoles
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM roles WHERE name = ?`, name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		var err error
		id, err = engine.InsertID(ctx, tx, `INSERT INTO roles (name, description, builtin, all_permissions, created_at)
			VALUES (?, ?, 0, 0, ?)`, name, description, Now())
		if err != nil {
			return fmt.Errorf("insert role: %w", err)
		}
		return setRolePermissions(ctx, tx, s.d, id, perms)
	})
	return id, err
}

// UpdateRole renames a custom role and replaces its description and
// permissions. Sessions and keys of its holders see the change on their
// next request (permissions are read per request). Built-in roles are
// ErrBuiltinRole.
func (s *Store) UpdateRole(ctx context.Context, id int64, name, description string, perms []string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := customRole(ctx, tx, id); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM roles WHERE name = ? AND id <> ?`, name, id); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		if _, err := tx.ExecContext(ctx, `UPDATE roles SET name = ?, description = ? WHERE id = ?`, name, description, id); err != nil {
			return fmt.Errorf("update role: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM role_permissions WHERE role_id = ?`, id); err != nil {
			return fmt.Errorf("reset role permissions: %w", err)
		}
		return setRolePermissions(ctx, tx, s.d, id, perms)
	})
}

func setRolePermissions(ctx context.Context, tx *sql.Tx, d engine.Dialect, id int64, perms []string) error {
	for _, p := range perms {
		if _, err := tx.ExecContext(ctx, d.InsertOrIgnore(`role_permissions (role_id, permission)`, `VALUES (?, ?)`), id, p); err != nil {
			return fmt.Errorf("grant %s: %w", p, err)
		}
	}
	return nil
}

// SetRoleRequire2FA sets whether the role's holders (local accounts)
// must use a second factor; built-in roles too, as their permissions
// are what most needs guarding. It applies at each holder's next
// sign-in: sessions already open stay.
func (s *Store) SetRoleRequire2FA(ctx context.Context, id int64, on bool) error {
	res, err := s.writer.ExecContext(ctx, `UPDATE roles SET require_2fa = ? WHERE id = ?`, on, id)
	if err != nil {
		return fmt.Errorf("set role second-factor rule: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteRole deletes a custom role nobody holds: ErrBuiltinRole for a
// built-in one, ErrRoleInUse while a user holds it.
func (s *Store) DeleteRole(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := customRole(ctx, tx, id); err != nil {
			return err
		}
		if held, err := engine.Exists(ctx, tx, `SELECT 1 FROM user_roles WHERE role_id = ? LIMIT 1`, id); err != nil {
			return err
		} else if held {
			return ErrRoleInUse
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM roles WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete role: %w", err)
		}
		return nil
	})
}

// customRole checks, in tx, that role id exists and is not built in:
// ErrNotFound, ErrBuiltinRole.
func customRole(ctx context.Context, tx *sql.Tx, id int64) error {
	var builtin bool
	err := tx.QueryRowContext(ctx, `SELECT builtin FROM roles WHERE id = ?`, id).Scan(&builtin)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("get role: %w", err)
	}
	if builtin {
		return ErrBuiltinRole
	}
	return nil
}
