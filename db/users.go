package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// User is a person (or robot) who logs in and owns API keys.
type User struct {
	ID                 int64
	Username           string
	PasswordHash       string
	Active             bool
	AllGroups          bool
	MustChangePassword bool
	CreatedAt          string
	UpdatedAt          string
	// Roles and GroupIDs are filled by the queries that need them.
	Roles    []string
	GroupIDs []int64
}

// NewUser is what CreateUser needs.
type NewUser struct {
	Username           string
	PasswordHash       string
	AllGroups          bool
	MustChangePassword bool
	RoleIDs            []int64
	GroupIDs           []int64
}

// CountUsers returns how many users exist.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n)
	return n, err
}

// CreateUser inserts a user with its roles and group scope. A group that
// does not exist is ErrNotFound (wrapped, naming it).
func (s *Store) CreateUser(ctx context.Context, u NewUser) (int64, error) {
	var id int64
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if taken, err := exists(ctx, tx, `SELECT 1 FROM users WHERE username = ?`, u.Username); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		res, err := tx.ExecContext(ctx,
			`INSERT INTO users (username, password_hash, all_groups, must_change_password, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			u.Username, u.PasswordHash, u.AllGroups, u.MustChangePassword, now, now)
		if err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		for _, r := range u.RoleIDs {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO user_roles (user_id, role_id) VALUES (?, ?)`, id, r); err != nil {
				return fmt.Errorf("grant role: %w", err)
			}
		}
		for _, g := range u.GroupIDs {
			if _, err := getGroup(ctx, tx, g); err != nil {
				return fmt.Errorf("group %d: %w", g, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO user_groups (user_id, group_id) VALUES (?, ?)`, id, g); err != nil {
				return fmt.Errorf("scope user: %w", err)
			}
		}
		return nil
	})
	return id, err
}

const userColumns = `id, username, password_hash, active, all_groups, must_change_password, created_at, updated_at`

func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	err := row.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Active, &u.AllGroups, &u.MustChangePassword, &u.CreatedAt, &u.UpdatedAt)
	return u, err
}

// UserByName returns the user (with roles and groups) or ErrNotFound.
func (s *Store) UserByName(ctx context.Context, username string) (User, error) {
	u, err := scanUser(s.reader.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE username = ?`, username))
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("get user: %w", err)
	}
	return u, s.fillUser(ctx, &u)
}

func (s *Store) fillUser(ctx context.Context, u *User) error {
	rows, err := s.reader.QueryContext(ctx,
		`SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = ? ORDER BY r.id`, u.ID)
	if err != nil {
		return fmt.Errorf("user roles: %w", err)
	}
	u.Roles = nil
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		u.Roles = append(u.Roles, n)
	}
	rows.Close()
	gids, err := s.userGroupIDs(ctx, u.ID)
	u.GroupIDs = gids
	return err
}

func (s *Store) userGroupIDs(ctx context.Context, userID int64) ([]int64, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT group_id FROM user_groups WHERE user_id = ? ORDER BY group_id`, userID)
	if err != nil {
		return nil, fmt.Errorf("user groups: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// ListUsers returns every user with roles and groups, ordered by id.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT `+userColumns+` FROM users ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	var users []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		users = append(users, u)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range users {
		if err := s.fillUser(ctx, &users[i]); err != nil {
			return nil, err
		}
	}
	return users, nil
}

// SetUserPassword replaces a user's password hash.
func (s *Store) SetUserPassword(ctx context.Context, username, hash string, mustChange bool) error {
	res, err := s.writer.ExecContext(ctx,
		`UPDATE users SET password_hash = ?, must_change_password = ?, updated_at = ? WHERE username = ?`,
		hash, mustChange, Now(), username)
	if err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// SetUserActive enables or disables a user; a disabled user's keys stop
// working at once.
func (s *Store) SetUserActive(ctx context.Context, username string, active bool) error {
	res, err := s.writer.ExecContext(ctx, `UPDATE users SET active = ?, updated_at = ? WHERE username = ?`, active, Now(), username)
	if err != nil {
		return fmt.Errorf("set user active: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// Grants is what a user may do: every permission (all) or the listed ones.
type Grants struct {
	All         bool
	Permissions map[string]bool
}

// UserGrants returns the union of a user's roles' permissions.
func (s *Store) UserGrants(ctx context.Context, userID int64) (Grants, error) {
	g := Grants{Permissions: map[string]bool{}}
	var all sql.NullBool
	err := s.reader.QueryRowContext(ctx,
		`SELECT MAX(r.all_permissions) FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = ?`, userID).Scan(&all)
	if err != nil {
		return g, fmt.Errorf("user grants: %w", err)
	}
	g.All = all.Valid && all.Bool
	rows, err := s.reader.QueryContext(ctx,
		`SELECT DISTINCT rp.permission FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id WHERE ur.user_id = ?`, userID)
	if err != nil {
		return g, fmt.Errorf("user permissions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return g, err
		}
		g.Permissions[p] = true
	}
	return g, rows.Err()
}
