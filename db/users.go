package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"
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
	// Source is where the identity lives: UserLocal, UserLDAP or
	// UserOIDC. ExternalID names the user there (see NewDirectoryUser);
	// SyncedAt is when the source last vouched for it (nil: never).
	Source     string
	ExternalID string
	SyncedAt   *string
	// TOTPEnabled: the user has confirmed a second factor.
	TOTPEnabled bool
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
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM users WHERE username = ?`, u.Username); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		var err error
		id, err = engine.InsertID(ctx, tx,
			`INSERT INTO users (username, password_hash, all_groups, must_change_password, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			u.Username, u.PasswordHash, u.AllGroups, u.MustChangePassword, now, now)
		if err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		for _, r := range u.RoleIDs {
			if _, err := tx.ExecContext(ctx, s.d.InsertOrIgnore(`user_roles (user_id, role_id)`, `VALUES (?, ?)`), id, r); err != nil {
				return fmt.Errorf("grant role: %w", err)
			}
		}
		for _, g := range u.GroupIDs {
			if _, err := getGroup(ctx, tx, g); err != nil {
				return fmt.Errorf("group %d: %w", g, err)
			}
			if _, err := tx.ExecContext(ctx, s.d.InsertOrIgnore(`user_groups (user_id, group_id)`, `VALUES (?, ?)`), id, g); err != nil {
				return fmt.Errorf("scope user: %w", err)
			}
		}
		return nil
	})
	return id, err
}

const userColumns = `id, username, password_hash, active, all_groups, must_change_password, created_at, updated_at,
	source, external_id, synced_at, totp_enabled_at IS NOT NULL`

func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	var synced sql.NullString
	err := row.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Active, &u.AllGroups, &u.MustChangePassword, &u.CreatedAt, &u.UpdatedAt,
		&u.Source, &u.ExternalID, &synced, &u.TOTPEnabled)
	if synced.Valid {
		u.SyncedAt = &synced.String
	}
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

// Grants is what a user may do: every permission (all) or the listed ones,
// and the credentials its roles let it use one by one.
type Grants struct {
	All         bool
	Permissions map[string]bool
	Credentials map[int64]bool
}

// UserGrants returns the union of a user's roles' permissions.
func (s *Store) UserGrants(ctx context.Context, userID int64) (Grants, error) {
	g := Grants{Permissions: map[string]bool{}, Credentials: map[int64]bool{}}
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
	if err := rows.Err(); err != nil {
		return g, err
	}
	err = engine.EachRow(ctx, s.reader, `SELECT DISTINCT rc.credential_id FROM user_roles ur JOIN role_credentials rc ON rc.role_id = ur.role_id
		WHERE ur.user_id = ?`, []any{userID}, func(row engine.Scanner) error {
		var id int64
		if err := row.Scan(&id); err != nil {
			return err
		}
		g.Credentials[id] = true
		return nil
	})
	if err != nil {
		return g, fmt.Errorf("user credentials: %w", err)
	}
	return g, nil
}

// The users list is one page (LIMIT/OFFSET) plus what that page needs,
// fetched for the page's rows at once rather than row by row.

// GroupRef names a device group.
type GroupRef struct {
	ID   int64
	Name string
}

// UserSummary is a user as the users page lists it.
type UserSummary struct {
	ID                 int64
	Username           string
	Active             bool
	AllGroups          bool
	MustChangePassword bool
	CreatedAt          string
	// Source is where the user signs in (UserLocal, UserLDAP, UserOIDC).
	Source string
	Roles  []string
	Groups []GroupRef
	// LastLoginAt is the last sign-in to the web interface the audit log
	// records; nil when there is none.
	LastLoginAt *time.Time
}

// UserPage returns one page of users ordered by username, those whose
// username contains q (case-insensitive) when q is set, and the total.
func (s *Store) UserPage(ctx context.Context, q string, limit, offset int) ([]UserSummary, int, error) {
	where, args := "1=1", []any{}
	if q != "" {
		where, args = s.d.Position(`lower(username)`, `lower(?)`)+` > 0`, []any{q}
	}
	items, total, err := engine.Page(ctx, s.reader, func(row engine.Scanner) (UserSummary, error) {
		var u UserSummary
		err := row.Scan(&u.ID, &u.Username, &u.Active, &u.AllGroups, &u.MustChangePassword, &u.CreatedAt, &u.Source)
		return u, err
	}, `SELECT COUNT(*) FROM users WHERE `+where,
		`SELECT id, username, active, all_groups, must_change_password, created_at, source FROM users WHERE `+where+
			` ORDER BY `+s.d.FoldedOrder("username")+`, id`, limit, offset, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list users: %w", err)
	}
	if len(items) == 0 {
		return items, total, nil
	}
	ids := make([]any, len(items))
	byID := map[int64]*UserSummary{}
	for i := range items {
		ids[i] = items[i].ID
		byID[items[i].ID] = &items[i]
	}
	in := engine.Placeholders(len(ids))
	err = engine.EachRow(ctx, s.reader, `SELECT ur.user_id, r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
		WHERE ur.user_id IN (`+in+`) ORDER BY r.id`, ids, func(row engine.Scanner) error {
		var id int64
		var name string
		if err := row.Scan(&id, &name); err != nil {
			return err
		}
		byID[id].Roles = append(byID[id].Roles, name)
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("user roles: %w", err)
	}
	err = engine.EachRow(ctx, s.reader, `SELECT ug.user_id, g.id, g.name FROM user_groups ug JOIN device_groups g ON g.id = ug.group_id
		WHERE ug.user_id IN (`+in+`) ORDER BY `+s.d.FoldedOrder("g.name")+`, g.id`, ids, func(row engine.Scanner) error {
		var id int64
		var g GroupRef
		if err := row.Scan(&id, &g.ID, &g.Name); err != nil {
			return err
		}
		byID[id].Groups = append(byID[id].Groups, g)
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("user groups: %w", err)
	}
	// One look-up per user in audit_log_user_action serves the page.
	err = engine.EachRow(ctx, s.reader, `SELECT user_id, MAX(at) FROM audit_log
		WHERE action = 'session.login' AND user_id IN (`+in+`) GROUP BY user_id`, ids, func(row engine.Scanner) error {
		var id int64
		var at string
		if err := row.Scan(&id, &at); err != nil {
			return err
		}
		if t, err := ParseTime(at); err == nil {
			byID[id].LastLoginAt = &t
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("last sign-ins: %w", err)
	}
	return items, total, nil
}

// LastSignIn is the time of the user's last web sign-in the audit log
// records, nil when none.
func (s *Store) LastSignIn(ctx context.Context, userID int64) (*time.Time, error) {
	var at string
	err := s.reader.QueryRowContext(ctx, `SELECT at FROM audit_log WHERE action = 'session.login' AND user_id = ?
		ORDER BY at DESC, id DESC LIMIT 1`, userID).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("last sign-in: %w", err)
	}
	t, err := ParseTime(at)
	if err != nil {
		return nil, nil
	}
	return &t, nil
}

// UserByID returns the user (with role names and group ids) or
// ErrNotFound.
func (s *Store) UserByID(ctx context.Context, id int64) (User, error) {
	u, err := scanUser(s.reader.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("get user: %w", err)
	}
	return u, s.fillUser(ctx, &u)
}

// UserAccess is what an administrator sets on an existing user.
type UserAccess struct {
	RoleIDs   []int64
	AllGroups bool
	GroupIDs  []int64
	Active    bool
}

// UpdateUserAccess replaces a user's roles and group scope and sets it
// active or not, in one transaction. Deactivating a user ends its web
// sessions with it (its API keys are refused from then on because their
// owner is inactive). A missing role or group is ErrNotFound, wrapped
// naming it; a change that leaves no active administrator is
// ErrLastAdmin and changes nothing.
func (s *Store) UpdateUserAccess(ctx context.Context, id int64, a UserAccess) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		before, err := activeAdmins(ctx, tx)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE users SET active = ?, all_groups = ?, updated_at = ? WHERE id = ?`,
			a.Active, a.AllGroups, Now(), id)
		if err != nil {
			return fmt.Errorf("update user: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM user_roles WHERE user_id = ?`, id); err != nil {
			return fmt.Errorf("reset user roles: %w", err)
		}
		for _, r := range a.RoleIDs {
			if ok, err := engine.Exists(ctx, tx, `SELECT 1 FROM roles WHERE id = ?`, r); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("role %d: %w", r, ErrNotFound)
			}
			if _, err := tx.ExecContext(ctx, s.d.InsertOrIgnore(`user_roles (user_id, role_id)`, `VALUES (?, ?)`), id, r); err != nil {
				return fmt.Errorf("grant role: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM user_groups WHERE user_id = ?`, id); err != nil {
			return fmt.Errorf("reset user groups: %w", err)
		}
		if !a.AllGroups {
			for _, g := range a.GroupIDs {
				if _, err := getGroup(ctx, tx, g); err != nil {
					return fmt.Errorf("group %d: %w", g, err)
				}
				if _, err := tx.ExecContext(ctx, s.d.InsertOrIgnore(`user_groups (user_id, group_id)`, `VALUES (?, ?)`), id, g); err != nil {
					return fmt.Errorf("scope user: %w", err)
				}
			}
		}
		if !a.Active {
			if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE user_id = ?`, id); err != nil {
				return fmt.Errorf("end web sessions: %w", err)
			}
		}
		return keepAnAdmin(ctx, tx, before)
	})
}

// DeleteUser deletes a user; its roles, group scope, API keys and web
// sessions go with it (the audit log keeps its name). Deleting the last
// active administrator is ErrLastAdmin.
func (s *Store) DeleteUser(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		before, err := activeAdmins(ctx, tx)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("delete user: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return keepAnAdmin(ctx, tx, before)
	})
}

// activeAdmins counts the active users holding a role with every
// permission.
func activeAdmins(ctx context.Context, q engine.Querier) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(DISTINCT u.id) FROM users u
		JOIN user_roles ur ON ur.user_id = u.id JOIN roles r ON r.id = ur.role_id
		WHERE u.active = 1 AND r.all_permissions = 1`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count administrators: %w", err)
	}
	return n, nil
}

// keepAnAdmin refuses a change that took the count of active
// administrators from some to none. (A system that already had none, set
// up that way from the command line, is not blocked by it.)
func keepAnAdmin(ctx context.Context, q engine.Querier, before int) error {
	if before == 0 {
		return nil
	}
	after, err := activeAdmins(ctx, q)
	if err != nil {
		return err
	}
	if after == 0 {
		return ErrLastAdmin
	}
	return nil
}
