package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"backupd/db/engine"
)

// Group is a node of the device-group tree. Path holds the ids from the
// root down to and including the group itself: "/3/7/".
type Group struct {
	ID        int64
	Name      string
	ParentID  *int64
	Path      string
	Depth     int
	SortOrder int
	CreatedAt string
}

const groupColumns = `id, name, parent_id, path, depth, sort_order, created_at`

func scanGroup(row engine.Scanner) (Group, error) {
	var g Group
	var parent sql.NullInt64
	if err := row.Scan(&g.ID, &g.Name, &parent, &g.Path, &g.Depth, &g.SortOrder, &g.CreatedAt); err != nil {
		return g, err
	}
	if parent.Valid {
		g.ParentID = &parent.Int64
	}
	return g, nil
}

// ListGroups returns one page of groups ordered by id, and the total count.
func (s *Store) ListGroups(ctx context.Context, limit, offset int) ([]Group, int, error) {
	items, total, err := engine.Page(ctx, s.reader, scanGroup, `SELECT COUNT(*) FROM device_groups`,
		`SELECT `+groupColumns+` FROM device_groups ORDER BY id`, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list groups: %w", err)
	}
	return items, total, nil
}

// AllGroups returns every group in tree order: by depth, then sort_order,
// name and id, so that a parent always comes before its children.
func (s *Store) AllGroups(ctx context.Context) ([]Group, error) {
	groups, err := engine.QueryAll(ctx, s.reader, scanGroup, `SELECT `+groupColumns+` FROM device_groups ORDER BY depth, sort_order, name, id`)
	if err != nil {
		return nil, fmt.Errorf("all groups: %w", err)
	}
	return groups, nil
}

// GetGroup returns one group or ErrNotFound.
func (s *Store) GetGroup(ctx context.Context, id int64) (Group, error) {
	return getGroup(ctx, s.reader, id)
}

func getGroup(ctx context.Context, q engine.Querier, id int64) (Group, error) {
	g, err := scanGroup(q.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM device_groups WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return g, ErrNotFound
	}
	if err != nil {
		return g, fmt.Errorf("get group %d: %w", id, err)
	}
	return g, nil
}

// GroupByName returns the group of that name (ASCII case folded, as the
// name column compares), or ErrNotFound.
func (s *Store) GroupByName(ctx context.Context, name string) (Group, error) {
	g, err := scanGroup(s.reader.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM device_groups WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return g, ErrNotFound
	}
	if err != nil {
		return g, fmt.Errorf("group %q: %w", name, err)
	}
	return g, nil
}

func groupNameTaken(ctx context.Context, q engine.Querier, name string, exceptID int64) (bool, error) {
	return engine.Exists(ctx, q, `SELECT 1 FROM device_groups WHERE name = ? AND id <> ?`, name, exceptID)
}

// nextSortOrder is one above the highest sort_order among parent's children.
func nextSortOrder(ctx context.Context, q engine.Querier, parentID *int64) (int, error) {
	var max sql.NullInt64
	var err error
	if parentID == nil {
		err = q.QueryRowContext(ctx, `SELECT MAX(sort_order) FROM device_groups WHERE parent_id IS NULL`).Scan(&max)
	} else {
		err = q.QueryRowContext(ctx, `SELECT MAX(sort_order) FROM device_groups WHERE parent_id = ?`, *parentID).Scan(&max)
	}
	if err != nil {
		return 0, fmt.Errorf("sibling order: %w", err)
	}
	if !max.Valid {
		return 0, nil
	}
	return int(max.Int64) + 1, nil
}

// parentPlacement resolves a parent id into the path prefix and depth its
// children get. A missing parent is ErrInvalidParent.
func parentPlacement(ctx context.Context, q engine.Querier, parentID *int64) (prefix string, depth int, err error) {
	if parentID == nil {
		return "/", 0, nil
	}
	p, err := getGroup(ctx, q, *parentID)
	if errors.Is(err, ErrNotFound) {
		return "", 0, fmt.Errorf("%w: group %d does not exist", ErrInvalidParent, *parentID)
	}
	if err != nil {
		return "", 0, err
	}
	return p.Path, p.Depth + 1, nil
}

// CreateGroup adds a group under parentID (nil for a root group).
func (s *Store) CreateGroup(ctx context.Context, name string, parentID *int64) (Group, error) {
	var g Group
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		g, err = s.createGroupTx(ctx, tx, name, parentID)
		return err
	})
	return g, err
}

// lockGroupTree makes tx the only one changing the group tree until it
// ends. SQLite's write transactions already take turns; PostgreSQL's,
// from several nodes, would otherwise read the same siblings and paths
// and give two groups one sort_order, or move a subtree under itself.
func (s *Store) lockGroupTree(ctx context.Context, tx *sql.Tx) error {
	if !s.pg {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('backupd.device_groups', 0))`)
	return err
}

func (s *Store) createGroupTx(ctx context.Context, tx *sql.Tx, name string, parentID *int64) (Group, error) {
	if err := s.lockGroupTree(ctx, tx); err != nil {
		return Group{}, err
	}
	prefix, depth, err := parentPlacement(ctx, tx, parentID)
	if err != nil {
		return Group{}, err
	}
	if taken, err := groupNameTaken(ctx, tx, name, 0); err != nil {
		return Group{}, err
	} else if taken {
		return Group{}, ErrNameExists
	}
	order, err := nextSortOrder(ctx, tx, parentID)
	if err != nil {
		return Group{}, err
	}
	id, err := engine.InsertID(ctx, tx,
		`INSERT INTO device_groups (name, parent_id, path, depth, sort_order, created_at) VALUES (?, ?, '', ?, ?, ?)`,
		name, parentID, depth, order, Now())
	if err != nil {
		return Group{}, fmt.Errorf("insert group: %w", err)
	}
	path := prefix + strconv.FormatInt(id, 10) + "/"
	if _, err := tx.ExecContext(ctx, `UPDATE device_groups SET path = ? WHERE id = ?`, path, id); err != nil {
		return Group{}, fmt.Errorf("set group path: %w", err)
	}
	return getGroup(ctx, tx, id)
}

// UpdateGroup renames (when name is non-nil) and places the group under
// parentID (nil: root). Moving rewrites path and depth of the whole subtree
// in the same transaction.
func (s *Store) UpdateGroup(ctx context.Context, id int64, name *string, parentID *int64) (Group, error) {
	var g Group
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.lockGroupTree(ctx, tx); err != nil {
			return err
		}
		cur, err := getGroup(ctx, tx, id)
		if err != nil {
			return err
		}
		prefix, depth, err := parentPlacement(ctx, tx, parentID)
		if err != nil {
			return err
		}
		if parentID != nil && len(prefix) >= len(cur.Path) && prefix[:len(cur.Path)] == cur.Path {
			return fmt.Errorf("%w: a group cannot be moved under itself or its descendants", ErrInvalidParent)
		}
		newName := cur.Name
		if name != nil {
			newName = *name
		}
		if taken, err := groupNameTaken(ctx, tx, newName, id); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		if _, err := tx.ExecContext(ctx, `UPDATE device_groups SET name = ? WHERE id = ?`, newName, id); err != nil {
			return fmt.Errorf("rename group: %w", err)
		}
		if !sameParent(cur.ParentID, parentID) {
			order, err := nextSortOrder(ctx, tx, parentID)
			if err != nil {
				return err
			}
			newPath := prefix + strconv.FormatInt(id, 10) + "/"
			// Every descendant's path starts with the old path; replace that
			// head and shift the depth. Paths hold only digits and '/', and
			// '0' follows '/', so the range scan below is exactly the subtree.
			upper := cur.Path[:len(cur.Path)-1] + "0"
			if _, err := tx.ExecContext(ctx,
				`UPDATE device_groups SET path = ? || substr(path, ?), depth = depth + ? WHERE path >= ? AND path < ?`,
				newPath, len(cur.Path)+1, depth-cur.Depth, cur.Path, upper); err != nil {
				return fmt.Errorf("move subtree: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE device_groups SET parent_id = ?, sort_order = ? WHERE id = ?`, parentID, order, id); err != nil {
				return fmt.Errorf("move group: %w", err)
			}
		}
		g, err = getGroup(ctx, tx, id)
		return err
	})
	return g, err
}

func sameParent(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// DeleteGroup removes a leaf group that no device uses.
func (s *Store) DeleteGroup(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.lockGroupTree(ctx, tx); err != nil {
			return err
		}
		if _, err := getGroup(ctx, tx, id); err != nil {
			return err
		}
		if has, err := engine.Exists(ctx, tx, `SELECT 1 FROM device_groups WHERE parent_id = ? LIMIT 1`, id); err != nil {
			return err
		} else if has {
			return ErrHasChildren
		}
		if used, err := engine.Exists(ctx, tx, `SELECT 1 FROM devices WHERE group_id = ? LIMIT 1`, id); err != nil {
			return err
		} else if used {
			return ErrInUse
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM device_groups WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete group: %w", err)
		}
		return nil
	})
}

// GroupDeviceCounts returns how many devices sit directly in each group
// that has any. Devices outside every group are counted under key 0 (no
// group has id 0). Callers sum subtrees themselves and show each count
// only to users whose scope holds the group.
func (s *Store) GroupDeviceCounts(ctx context.Context) (map[int64]int, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT group_id, COUNT(*) FROM devices GROUP BY group_id`)
	if err != nil {
		return nil, fmt.Errorf("group device counts: %w", err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id sql.NullInt64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id.Int64] += n
	}
	return out, rows.Err()
}

// DevicesInGroup counts the devices directly in group id (not in its
// subgroups): what keeps the group from being deleted.
func (s *Store) DevicesInGroup(ctx context.Context, id int64) (int, error) {
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM devices WHERE group_id = ?`, id).Scan(&n); err != nil {
		return 0, fmt.Errorf("devices in group %d: %w", id, err)
	}
	return n, nil
}

// ReorderGroup moves group id one place among its siblings: up (step -1)
// or down (step +1) in the tree's order (sort_order, name, id). The
// siblings are renumbered 0, 1, 2 … in their new order in the same
// transaction, so that equal sort_order values left by older data or a
// concurrent create cannot make a move a no-op. moved is false when the
// group already is first (up) or last (down).
func (s *Store) ReorderGroup(ctx context.Context, id int64, step int) (moved bool, err error) {
	if step != -1 && step != 1 {
		return false, fmt.Errorf("reorder group %d: step %d, want -1 or 1", id, step)
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		moved = false
		if err := s.lockGroupTree(ctx, tx); err != nil {
			return err
		}
		g, err := getGroup(ctx, tx, id)
		if err != nil {
			return err
		}
		siblings, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (int64, error) {
			var sid int64
			return sid, r.Scan(&sid)
		}, `SELECT id FROM device_groups WHERE `+s.d.Same("parent_id", "?")+` ORDER BY sort_order, name, id`, g.ParentID)
		if err != nil {
			return fmt.Errorf("siblings of group %d: %w", id, err)
		}
		at := -1
		for i, sid := range siblings {
			if sid == id {
				at = i
			}
		}
		to := at + step
		if at < 0 || to < 0 || to >= len(siblings) {
			return nil
		}
		siblings[at], siblings[to] = siblings[to], siblings[at]
		for i, sid := range siblings {
			if _, err := tx.ExecContext(ctx, `UPDATE device_groups SET sort_order = ? WHERE id = ? AND sort_order <> ?`, i, sid, i); err != nil {
				return fmt.Errorf("renumber group %d: %w", sid, err)
			}
		}
		moved = true
		return nil
	})
	return moved, err
}
