package db

import (
	"context"
	"database/sql"
	"fmt"
)

// Queries of the web interface's groups, credentials and templates pages.
// Each count is one grouped query over an index of devices, so a page
// costs the same whether it lists five rows or fifty.

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

// DevicesUsingCredentials counts, for each of ids, the devices of scope
// that log in with that credential. Ids nobody uses are absent.
func (s *Store) DevicesUsingCredentials(ctx context.Context, scope Scope, ids []int64) (map[int64]int, error) {
	out, err := s.devicesUsing(ctx, "credential_id", scope, ids)
	if err != nil {
		return nil, fmt.Errorf("devices using credentials: %w", err)
	}
	return out, nil
}

// DevicesUsingTemplates counts, for each of ids, the devices of scope
// that back up with that template. Ids nobody uses are absent.
func (s *Store) DevicesUsingTemplates(ctx context.Context, scope Scope, ids []int64) (map[int64]int, error) {
	out, err := s.devicesUsing(ctx, "template_id", scope, ids)
	if err != nil {
		return nil, fmt.Errorf("devices using templates: %w", err)
	}
	return out, nil
}

// maxCountIDs bounds the ids of one devicesUsing call (and its SQL
// parameters): a page of a list is far fewer.
const maxCountIDs = 500

// devicesUsing counts scope's devices per value of column (a constant
// from this file, never user input) among ids.
func (s *Store) devicesUsing(ctx context.Context, column string, scope Scope, ids []int64) (map[int64]int, error) {
	out := map[int64]int{}
	if len(ids) == 0 {
		return out, nil
	}
	if len(ids) > maxCountIDs {
		return nil, fmt.Errorf("%d ids, at most %d", len(ids), maxCountIDs)
	}
	cond, sargs := scope.clause()
	args := make([]any, 0, len(ids)+len(sargs))
	for _, id := range ids {
		args = append(args, id)
	}
	args = append(args, sargs...)
	rows, err := s.reader.QueryContext(ctx, `SELECT d.`+column+`, COUNT(*) FROM devices d
		WHERE d.`+column+` IN (`+placeholders(len(ids))+`) AND `+cond+` GROUP BY d.`+column, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}

// TemplateInUse reports whether any device (in any group) backs up with
// template id.
func (s *Store) TemplateInUse(ctx context.Context, id int64) (bool, error) {
	used, err := exists(ctx, s.reader, `SELECT 1 FROM devices WHERE template_id = ? LIMIT 1`, id)
	if err != nil {
		return false, fmt.Errorf("template %d in use: %w", id, err)
	}
	return used, nil
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
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		g, err := getGroup(ctx, tx, id)
		if err != nil {
			return err
		}
		siblings, err := queryAll(ctx, tx, func(r scanner) (int64, error) {
			var sid int64
			return sid, r.Scan(&sid)
		}, `SELECT id FROM device_groups WHERE parent_id IS ? ORDER BY sort_order, name, id`, g.ParentID)
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
