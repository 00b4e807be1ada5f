package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Role is a named set of permissions.
type Role struct {
	ID             int64
	Name           string
	Description    string
	Builtin        bool
	AllPermissions bool
	Permissions    []string
	CreatedAt      string
}

// EnsureRole creates the role by name, or brings an existing one in step
// with r (description, flags and exact permission set).
func (s *Store) EnsureRole(ctx context.Context, r Role) error {
	return s.InTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM roles WHERE name = ?`, r.Name).Scan(&id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			res, err := tx.ExecContext(ctx,
				`INSERT INTO roles (name, description, builtin, all_permissions, created_at) VALUES (?, ?, ?, ?, ?)`,
				r.Name, r.Description, r.Builtin, r.AllPermissions, Now())
			if err != nil {
				return fmt.Errorf("insert role: %w", err)
			}
			if id, err = res.LastInsertId(); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("find role: %w", err)
		default:
			if _, err := tx.ExecContext(ctx, `UPDATE roles SET description = ?, builtin = ?, all_permissions = ? WHERE id = ?`,
				r.Description, r.Builtin, r.AllPermissions, id); err != nil {
				return fmt.Errorf("update role: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM role_permissions WHERE role_id = ?`, id); err != nil {
				return fmt.Errorf("reset role permissions: %w", err)
			}
		}
		for _, p := range r.Permissions {
			if _, err := tx.ExecContext(ctx, `INSERT INTO role_permissions (role_id, permission) VALUES (?, ?)`, id, p); err != nil {
				return fmt.Errorf("grant %s: %w", p, err)
			}
		}
		return nil
	})
}

// RoleByName returns the role called name or ErrNotFound.
func (s *Store) RoleByName(ctx context.Context, name string) (Role, error) {
	var r Role
	err := s.reader.QueryRowContext(ctx,
		`SELECT id, name, description, builtin, all_permissions, created_at FROM roles WHERE name = ?`, name).
		Scan(&r.ID, &r.Name, &r.Description, &r.Builtin, &r.AllPermissions, &r.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	if err != nil {
		return r, fmt.Errorf("get role: %w", err)
	}
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
