package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"backupd/db/engine"
)

// CustomPlatform is a platform an administrator defined; Definition is
// its JSON document (app/platforms checks and converts it).
type CustomPlatform struct {
	ID         int64
	PlatformID string
	Definition string
	CreatedAt  string
	UpdatedAt  string
}

// MaxCustomPlatforms bounds how many platforms can be defined: every one
// is loaded into memory by every process that collects.
const MaxCustomPlatforms = 200

// ErrTooManyPlatforms refuses a platform beyond MaxCustomPlatforms.
var ErrTooManyPlatforms = errors.New("too many custom platforms")

// PlatformInUseError refuses deleting a platform devices or templates
// still name.
type PlatformInUseError struct {
	Devices, Templates int
}

func (e *PlatformInUseError) Error() string {
	return fmt.Sprintf("the platform is used by %d device(s) and %d template(s); change them to another platform first", e.Devices, e.Templates)
}

// Unwrap makes errors.Is(err, ErrInUse) hold.
func (e *PlatformInUseError) Unwrap() error { return ErrInUse }

const customPlatformColumns = `id, platform_id, definition, created_at, updated_at`

func scanCustomPlatform(row engine.Scanner) (CustomPlatform, error) {
	var p CustomPlatform
	err := row.Scan(&p.ID, &p.PlatformID, &p.Definition, &p.CreatedAt, &p.UpdatedAt)
	return p, err
}

// ListCustomPlatforms returns every custom platform ordered by platform ID.
func (s *Store) ListCustomPlatforms(ctx context.Context) ([]CustomPlatform, error) {
	ps, err := engine.QueryAll(ctx, s.reader, scanCustomPlatform,
		`SELECT `+customPlatformColumns+` FROM custom_platforms ORDER BY platform_id LIMIT ?`, MaxCustomPlatforms)
	if err != nil {
		return nil, fmt.Errorf("list custom platforms: %w", err)
	}
	return ps, nil
}

// GetCustomPlatform returns the platform with platformID or ErrNotFound.
func (s *Store) GetCustomPlatform(ctx context.Context, platformID string) (CustomPlatform, error) {
	return getCustomPlatform(ctx, s.reader, platformID)
}

func getCustomPlatform(ctx context.Context, q engine.Querier, platformID string) (CustomPlatform, error) {
	p, err := scanCustomPlatform(q.QueryRowContext(ctx,
		`SELECT `+customPlatformColumns+` FROM custom_platforms WHERE platform_id = ?`, platformID))
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("get custom platform %s: %w", platformID, err)
	}
	return p, nil
}

// CreateCustomPlatform inserts a platform; ErrNameExists when its
// platform ID is taken, ErrTooManyPlatforms beyond the bound.
func (s *Store) CreateCustomPlatform(ctx context.Context, platformID, definition string) (CustomPlatform, error) {
	var out CustomPlatform
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM custom_platforms WHERE platform_id = ?`, platformID); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM custom_platforms`).Scan(&n); err != nil {
			return err
		}
		if n >= MaxCustomPlatforms {
			return ErrTooManyPlatforms
		}
		now := Now()
		if _, err := tx.ExecContext(ctx, `INSERT INTO custom_platforms (platform_id, definition, created_at, updated_at) VALUES (?, ?, ?, ?)`,
			platformID, definition, now, now); err != nil {
			return fmt.Errorf("insert custom platform: %w", err)
		}
		var err error
		out, err = getCustomPlatform(ctx, tx, platformID)
		return err
	})
	return out, err
}

// UpdateCustomPlatform replaces the definition of platformID (its ID
// stays: devices and templates store it).
func (s *Store) UpdateCustomPlatform(ctx context.Context, platformID, definition string) (CustomPlatform, error) {
	var out CustomPlatform
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE custom_platforms SET definition = ?, updated_at = ? WHERE platform_id = ?`,
			definition, Now(), platformID)
		if err != nil {
			return fmt.Errorf("update custom platform: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		out, err = getCustomPlatform(ctx, tx, platformID)
		return err
	})
	return out, err
}

// PlatformUse counts the devices and templates that name platformID.
func (s *Store) PlatformUse(ctx context.Context, platformID string) (devices, templates int, err error) {
	return platformUse(ctx, s.reader, platformID)
}

func platformUse(ctx context.Context, q engine.Querier, platformID string) (devices, templates int, err error) {
	if err = q.QueryRowContext(ctx, `SELECT COUNT(*) FROM devices WHERE platform = ?`, platformID).Scan(&devices); err != nil {
		return 0, 0, fmt.Errorf("count devices of platform: %w", err)
	}
	if err = q.QueryRowContext(ctx, `SELECT COUNT(*) FROM templates WHERE platform = ?`, platformID).Scan(&templates); err != nil {
		return 0, 0, fmt.Errorf("count templates of platform: %w", err)
	}
	return devices, templates, nil
}

// DeleteCustomPlatform removes a platform no device or template uses;
// otherwise it returns a *PlatformInUseError (errors.Is ErrInUse).
func (s *Store) DeleteCustomPlatform(ctx context.Context, platformID string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		devices, templates, err := platformUse(ctx, tx, platformID)
		if err != nil {
			return err
		}
		if devices+templates > 0 {
			return &PlatformInUseError{Devices: devices, Templates: templates}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM custom_platforms WHERE platform_id = ?`, platformID)
		if err != nil {
			return fmt.Errorf("delete custom platform: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}
