package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"backupd/db/engine"
)

// Template is a named list of backup commands for one platform.
type Template struct {
	ID        int64
	Name      string
	Platform  string
	Commands  string
	CreatedAt string
	UpdatedAt string
}

const templateColumns = `id, name, platform, commands, created_at, updated_at`

func scanTemplate(row engine.Scanner) (Template, error) {
	var t Template
	err := row.Scan(&t.ID, &t.Name, &t.Platform, &t.Commands, &t.CreatedAt, &t.UpdatedAt)
	return t, err
}

// ListTemplates returns one page ordered by id and the total count.
func (s *Store) ListTemplates(ctx context.Context, limit, offset int) ([]Template, int, error) {
	items, total, err := engine.Page(ctx, s.reader, scanTemplate, `SELECT COUNT(*) FROM templates`,
		`SELECT `+templateColumns+` FROM templates ORDER BY id`, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list templates: %w", err)
	}
	return items, total, nil
}

// GetTemplate returns one template or ErrNotFound.
func (s *Store) GetTemplate(ctx context.Context, id int64) (Template, error) {
	return getTemplate(ctx, s.reader, id)
}

func getTemplate(ctx context.Context, q engine.Querier, id int64) (Template, error) {
	t, err := scanTemplate(q.QueryRowContext(ctx, `SELECT `+templateColumns+` FROM templates WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	if err != nil {
		return t, fmt.Errorf("get template %d: %w", id, err)
	}
	return t, nil
}

// CreateTemplate inserts t.
func (s *Store) CreateTemplate(ctx context.Context, t Template) (Template, error) {
	now := Now()
	id, err := engine.InsertID(ctx, s.writer,
		`INSERT INTO templates (name, platform, commands, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
		t.Name, t.Platform, t.Commands, now, now)
	if err != nil {
		return t, fmt.Errorf("insert template: %w", err)
	}
	return getTemplate(ctx, s.writer, id)
}

// UpdateTemplate reads the template, lets patch change it and writes it back
// in one transaction.
// patch runs again when the transaction does (inTx): it must set, not add to, what it records.
func (s *Store) UpdateTemplate(ctx context.Context, id int64, patch func(*Template) error) (Template, error) {
	var out Template
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		t, err := getTemplate(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := patch(&t); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			`UPDATE templates SET name = ?, platform = ?, commands = ?, updated_at = ? WHERE id = ?`,
			t.Name, t.Platform, t.Commands, Now(), id); err != nil {
			return fmt.Errorf("update template: %w", err)
		}
		out, err = getTemplate(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteTemplate removes a template. Devices that used it fall back to their
// platform's default commands (template_id is set to NULL by the schema).
func (s *Store) DeleteTemplate(ctx context.Context, id int64) error {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM templates WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete template: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
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

// TemplateInUse reports whether any device (in any group) backs up with
// template id.
func (s *Store) TemplateInUse(ctx context.Context, id int64) (bool, error) {
	used, err := engine.Exists(ctx, s.reader, `SELECT 1 FROM devices WHERE template_id = ? LIMIT 1`, id)
	if err != nil {
		return false, fmt.Errorf("template %d in use: %w", id, err)
	}
	return used, nil
}
