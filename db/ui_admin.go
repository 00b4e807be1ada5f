package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The administration pages' queries: users, roles, API keys and the audit
// log as the web interface lists and changes them. Every list is one page
// (LIMIT/OFFSET) plus what that page needs, fetched for the page's rows
// at once rather than row by row.

// Refusals of the administration changes.
var (
	// ErrLastAdmin refuses a change that would leave no active user
	// holding every permission: nobody could manage the system any more.
	ErrLastAdmin = errors.New("would leave no active administrator")
	// ErrBuiltinRole refuses changing or deleting a built-in role: each
	// start brings them back in step with the release.
	ErrBuiltinRole = errors.New("built-in roles cannot be changed")
	// ErrRoleInUse refuses deleting a role some user still holds.
	ErrRoleInUse = errors.New("role is held by users")
	// ErrTooManyRoles refuses a role beyond MaxRoles.
	ErrTooManyRoles = errors.New("too many roles")
)

// MaxRoles bounds how many roles (built-in ones included) may exist, so
// that every form that offers them all stays short.
const MaxRoles = 100

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
	Roles              []string
	Groups             []GroupRef
	// LastLoginAt is the last sign-in to the web interface the audit log
	// records; nil when there is none.
	LastLoginAt *time.Time
}

// UserPage returns one page of users ordered by username, those whose
// username contains q (case-insensitive) when q is set, and the total.
func (s *Store) UserPage(ctx context.Context, q string, limit, offset int) ([]UserSummary, int, error) {
	where, args := "1=1", []any{}
	if q != "" {
		where, args = `instr(lower(username), lower(?)) > 0`, []any{q}
	}
	items, total, err := page(ctx, s.reader, func(row scanner) (UserSummary, error) {
		var u UserSummary
		err := row.Scan(&u.ID, &u.Username, &u.Active, &u.AllGroups, &u.MustChangePassword, &u.CreatedAt)
		return u, err
	}, `SELECT COUNT(*) FROM users WHERE `+where,
		`SELECT id, username, active, all_groups, must_change_password, created_at FROM users WHERE `+where+
			` ORDER BY username COLLATE NOCASE, id`, limit, offset, args...)
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
	in := placeholders(len(ids))
	err = eachRow(ctx, s.reader, `SELECT ur.user_id, r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
		WHERE ur.user_id IN (`+in+`) ORDER BY r.id`, ids, func(row scanner) error {
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
	err = eachRow(ctx, s.reader, `SELECT ug.user_id, g.id, g.name FROM user_groups ug JOIN device_groups g ON g.id = ug.group_id
		WHERE ug.user_id IN (`+in+`) ORDER BY g.name COLLATE NOCASE, g.id`, ids, func(row scanner) error {
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
	err = eachRow(ctx, s.reader, `SELECT user_id, MAX(at) FROM audit_log
		WHERE action = 'session.login' AND user_id IN (`+in+`) GROUP BY user_id`, ids, func(row scanner) error {
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

// eachRow runs query and hands every row to fn.
func eachRow(ctx context.Context, q querier, query string, args []any, fn func(scanner) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
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
	return s.InTx(ctx, func(tx *sql.Tx) error {
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
			if ok, err := exists(ctx, tx, `SELECT 1 FROM roles WHERE id = ?`, r); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("role %d: %w", r, ErrNotFound)
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO user_roles (user_id, role_id) VALUES (?, ?)`, id, r); err != nil {
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
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO user_groups (user_id, group_id) VALUES (?, ?)`, id, g); err != nil {
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
	return s.InTx(ctx, func(tx *sql.Tx) error {
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
func activeAdmins(ctx context.Context, q querier) (int, error) {
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
func keepAnAdmin(ctx context.Context, q querier, before int) error {
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

// RoleSummary is a role with its permissions and how many users hold it.
type RoleSummary struct {
	Role
	Users int
}

// ListRoles returns every role (at most MaxRoles): built-in ones first,
// in the order they were made, then custom ones by name; each with its permissions and number of holders.
func (s *Store) ListRoles(ctx context.Context) ([]RoleSummary, error) {
	roles, err := queryAll(ctx, s.reader, func(row scanner) (RoleSummary, error) {
		var r RoleSummary
		err := row.Scan(&r.ID, &r.Name, &r.Description, &r.Builtin, &r.AllPermissions, &r.CreatedAt, &r.Users)
		return r, err
	}, `SELECT r.id, r.name, r.description, r.builtin, r.all_permissions, r.created_at,
		(SELECT COUNT(*) FROM user_roles ur WHERE ur.role_id = r.id)
		FROM roles r ORDER BY r.builtin DESC, CASE WHEN r.builtin = 1 THEN r.id END, r.name COLLATE NOCASE, r.id LIMIT ?`, MaxRoles)
	if err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	byID := map[int64]*RoleSummary{}
	for i := range roles {
		byID[roles[i].ID] = &roles[i]
	}
	err = eachRow(ctx, s.reader, `SELECT role_id, permission FROM role_permissions`, nil, func(row scanner) error {
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
	return roles, nil
}

// RoleByID returns a role with its permissions, or ErrNotFound.
func (s *Store) RoleByID(ctx context.Context, id int64) (Role, error) {
	var r Role
	err := s.reader.QueryRowContext(ctx,
		`SELECT id, name, description, builtin, all_permissions, created_at FROM roles WHERE id = ?`, id).
		Scan(&r.ID, &r.Name, &r.Description, &r.Builtin, &r.AllPermissions, &r.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	if err != nil {
		return r, fmt.Errorf("get role: %w", err)
	}
	err = eachRow(ctx, s.reader, `SELECT permission FROM role_permissions WHERE role_id = ? ORDER BY permission`, []any{id},
		func(row scanner) error {
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
	return r, nil
}

// RoleHolders returns up to limit usernames of the users holding role id,
// by name.
func (s *Store) RoleHolders(ctx context.Context, id int64, limit int) ([]string, error) {
	names, err := queryAll(ctx, s.reader, func(row scanner) (string, error) {
		var n string
		return n, row.Scan(&n)
	}, `SELECT u.username FROM user_roles ur JOIN users u ON u.id = ur.user_id WHERE ur.role_id = ?
		ORDER BY u.username COLLATE NOCASE LIMIT ?`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("role holders: %w", err)
	}
	return names, nil
}

// CreateRole adds a custom role. A taken name (in any letter case) is
// ErrNameExists; a role beyond MaxRoles is ErrTooManyRoles.
func (s *Store) CreateRole(ctx context.Context, name, description string, perms []string) (int64, error) {
	var id int64
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM roles`).Scan(&n); err != nil {
			return fmt.Errorf("count roles: %w", err)
		}
		if n >= MaxRoles {
			return ErrTooManyRoles
		}
		if taken, err := exists(ctx, tx, `SELECT 1 FROM roles WHERE name = ?`, name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO roles (name, description, builtin, all_permissions, created_at)
			VALUES (?, ?, 0, 0, ?)`, name, description, Now())
		if err != nil {
			return fmt.Errorf("insert role: %w", err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		return setRolePermissions(ctx, tx, id, perms)
	})
	return id, err
}

// UpdateRole renames a custom role and replaces its description and
// permissions. Sessions and keys of its holders see the change on their
// next request (permissions are read per request). Built-in roles are
// ErrBuiltinRole.
func (s *Store) UpdateRole(ctx context.Context, id int64, name, description string, perms []string) error {
	return s.InTx(ctx, func(tx *sql.Tx) error {
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
		if taken, err := exists(ctx, tx, `SELECT 1 FROM roles WHERE name = ? AND id <> ?`, name, id); err != nil {
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
		return setRolePermissions(ctx, tx, id, perms)
	})
}

func setRolePermissions(ctx context.Context, tx *sql.Tx, id int64, perms []string) error {
	for _, p := range perms {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO role_permissions (role_id, permission) VALUES (?, ?)`, id, p); err != nil {
			return fmt.Errorf("grant %s: %w", p, err)
		}
	}
	return nil
}

// DeleteRole deletes a custom role nobody holds: ErrBuiltinRole for a
// built-in one, ErrRoleInUse while a user holds it.
func (s *Store) DeleteRole(ctx context.Context, id int64) error {
	return s.InTx(ctx, func(tx *sql.Tx) error {
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
		if held, err := exists(ctx, tx, `SELECT 1 FROM user_roles WHERE role_id = ? LIMIT 1`, id); err != nil {
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

// APIKeyPage returns one page of API keys, newest first: the keys of
// userID, or everyone's when userID is 0; each with its narrowed
// permissions. The total comes with it.
func (s *Store) APIKeyPage(ctx context.Context, userID int64, limit, offset int) ([]APIKey, int, error) {
	where, args := "1=1", []any{}
	if userID != 0 {
		where, args = "k.user_id = ?", []any{userID}
	}
	keys, total, err := page(ctx, s.reader, func(row scanner) (APIKey, error) { return scanAPIKey(row) },
		`SELECT COUNT(*) FROM api_keys k WHERE `+where, apiKeySelect+` WHERE `+where+` ORDER BY k.id DESC`,
		limit, offset, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list api keys: %w", err)
	}
	var narrowed []any
	byID := map[int64]*APIKey{}
	for i := range keys {
		if keys[i].Narrowed {
			narrowed = append(narrowed, keys[i].ID)
			byID[keys[i].ID] = &keys[i]
		}
	}
	if len(narrowed) == 0 {
		return keys, total, nil
	}
	err = eachRow(ctx, s.reader, `SELECT key_id, permission FROM api_key_permissions WHERE key_id IN (`+
		placeholders(len(narrowed))+`) ORDER BY permission`, narrowed, func(row scanner) error {
		var id int64
		var p string
		if err := row.Scan(&id, &p); err != nil {
			return err
		}
		byID[id].Permissions = append(byID[id].Permissions, p)
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("api key permissions: %w", err)
	}
	return keys, total, nil
}

// APIKeyByID returns a key (without its narrowed permissions) or
// ErrNotFound.
func (s *Store) APIKeyByID(ctx context.Context, id int64) (APIKey, error) {
	k, err := scanAPIKey(s.reader.QueryRowContext(ctx, apiKeySelect+` WHERE k.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return k, ErrNotFound
	}
	if err != nil {
		return k, fmt.Errorf("get api key: %w", err)
	}
	return k, nil
}

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	// Username matches exactly, in any letter case.
	Username string
	// Action matches the action itself or any action under it: "device"
	// and "device." both match "device.create".
	Action     string
	Interface  string
	TargetType string
	// From and To bound the time: From <= at < To.
	From, To time.Time
	// Text is searched for (case-insensitive) in the details, the target
	// id and the request id.
	Text string
}

// AuditRecord is an audit entry with the visible prefix of the API key
// it names (empty when none, or when the key is gone).
type AuditRecord struct {
	AuditEntry
	KeyPrefix string
}

// SearchAudit returns one page of the entries f selects, newest first,
// and whether more follow. It walks the audit log's time index from the
// newest entry (or from f.To) and stops once the page is full, so a page
// costs what it skips and shows rather than the whole log: no total is
// counted.
func (s *Store) SearchAudit(ctx context.Context, f AuditFilter, limit, offset int) ([]AuditRecord, bool, error) {
	var conds []string
	var args []any
	add := func(cond string, a ...any) {
		conds = append(conds, cond)
		args = append(args, a...)
	}
	if !f.From.IsZero() {
		add(`a.at >= ?`, f.From.UTC().Format(TimeFormat))
	}
	if !f.To.IsZero() {
		add(`a.at < ?`, f.To.UTC().Format(TimeFormat))
	}
	if f.Username != "" {
		add(`a.username = ? COLLATE NOCASE`, f.Username)
	}
	if act := strings.TrimSuffix(f.Action, "."); act != "" {
		add(`(a.action = ? OR substr(a.action, 1, ?) = ?)`, act, len(act)+1, act+".")
	}
	if f.Interface != "" {
		add(`a.interface = ?`, f.Interface)
	}
	if f.TargetType != "" {
		add(`a.target_type = ?`, f.TargetType)
	}
	if f.Text != "" {
		add(`(instr(lower(COALESCE(a.details, '')), lower(?)) > 0 OR a.target_id = ? OR a.request_id = ?)`, f.Text, f.Text, f.Text)
	}
	where := "1=1"
	if len(conds) > 0 {
		where = strings.Join(conds, " AND ")
	}
	// ORDER BY at, id follows the audit_log_at index (its rows are
	// ordered by at, then rowid): no sort of the selection.
	rows, err := s.reader.QueryContext(ctx, `SELECT a.id, a.at, a.user_id, a.username, a.key_id, a.session_id, a.interface,
		a.action, a.target_type, COALESCE(a.target_id, ''), COALESCE(a.request_id, ''), COALESCE(a.remote_addr, ''),
		COALESCE(a.details, ''), COALESCE(k.prefix, '')
		FROM audit_log a LEFT JOIN api_keys k ON k.id = a.key_id
		WHERE `+where+` ORDER BY a.at DESC, a.id DESC LIMIT ? OFFSET ?`, append(args, limit+1, offset)...)
	if err != nil {
		return nil, false, fmt.Errorf("search audit: %w", err)
	}
	defer rows.Close()
	out := []AuditRecord{}
	for rows.Next() {
		var e AuditRecord
		var details string
		if err := rows.Scan(&e.ID, &e.At, &e.UserID, &e.Username, &e.KeyID, &e.SessionID, &e.Interface, &e.Action,
			&e.TargetType, &e.TargetID, &e.RequestID, &e.RemoteAddr, &details, &e.KeyPrefix); err != nil {
			return nil, false, err
		}
		if details != "" {
			// Details this release cannot read are shown without them.
			_ = json.Unmarshal([]byte(details), &e.Details)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}
