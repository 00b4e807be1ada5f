package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"backupd/db/engine"
)

// Inventory sources are the sources of truth the device list follows (a
// NetBox, or any HTTP JSON inventory): what they are and how their last
// sync went. What a sync changes in the device list is
// inventory_sync.go's; fetching and planning are app/'s.

// Inventory source kinds.
const (
	InventoryNetBox = "netbox"
	InventoryHTTP   = "http"
)

// InventoryKinds lists the inventory source kinds.
var InventoryKinds = []string{InventoryNetBox, InventoryHTTP}

// How an inventory source's last sync ended; "" while it never ran.
const (
	InventorySyncOK     = "ok"
	InventorySyncFailed = "failed"
)

// Bounds of what an inventory source holds.
const (
	MaxInventorySourceName  = 100
	MaxInventoryConfigBytes = 64 << 10
	MaxInventoryTokenBytes  = 16 << 10 // sealed
	// MaxInventoryInterval is a week, in minutes.
	MaxInventoryInterval = 7 * 24 * 60
	// MaxInventoryErrorBytes bounds the last error kept.
	MaxInventoryErrorBytes = 4 << 10
)

// DefaultInventoryInterval is how often a source is synced unless told
// otherwise: hourly.
const DefaultInventoryInterval = 60

// InventorySource is one source of truth. Config holds its settings (a
// JSON object, the fetcher's to read), never a secret; Token the sealed
// bytes of its API token (app/secret), nil when it has none.
type InventorySource struct {
	ID      int64
	Name    string
	Kind    string
	Config  json.RawMessage
	Token   []byte
	Enabled bool
	// IntervalMinutes is how often it is synced; 0: only on demand.
	IntervalMinutes int
	CreatedAt       string
	UpdatedAt       string
	// LastSyncAt is when its last sync ended (nil: never), LastStatus
	// how (InventorySyncOK, InventorySyncFailed, "" never), LastError
	// why it failed, and LastCounts (a JSON object) what it did.
	LastSyncAt *string
	LastStatus string
	LastError  string
	LastCounts json.RawMessage
	// LastGoodSyncAt is when its last sync that applied ended (nil: none
	// yet): since when a failing source's device list is out of date.
	LastGoodSyncAt *string
}

func (src *InventorySource) check() error {
	if err := checkName(src.Name); err != nil {
		return err
	}
	if utf8.RuneCountInString(src.Name) > MaxInventorySourceName {
		return &ErrInvalidField{"name", fmt.Sprintf("must be at most %d characters", MaxInventorySourceName)}
	}
	if !slices.Contains(InventoryKinds, src.Kind) {
		return &ErrInvalidField{"kind", "must be one of " + strings.Join(InventoryKinds, ", ")}
	}
	if len(src.Config) == 0 {
		src.Config = json.RawMessage(`{}`)
	}
	if len(src.Config) > MaxInventoryConfigBytes {
		return &ErrInvalidField{"config", fmt.Sprintf("must be at most %d bytes", MaxInventoryConfigBytes)}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(src.Config, &obj); err != nil || obj == nil {
		return &ErrInvalidField{"config", "must be a JSON object"}
	}
	if len(src.Token) > MaxInventoryTokenBytes {
		return &ErrInvalidField{"token", fmt.Sprintf("must be at most %d bytes sealed", MaxInventoryTokenBytes)}
	}
	if src.IntervalMinutes < 0 || src.IntervalMinutes > MaxInventoryInterval {
		return &ErrInvalidField{"interval_minutes", fmt.Sprintf("must be between 0 (on demand only) and %d", MaxInventoryInterval)}
	}
	return nil
}

const inventorySourceColumns = `id, name, kind, config, token, enabled, interval_minutes, created_at, updated_at,
	last_sync_at, last_status, last_error, last_counts, last_good_sync_at`

func scanInventorySource(row engine.Scanner) (InventorySource, error) {
	var src InventorySource
	var cfg, counts string
	err := row.Scan(&src.ID, &src.Name, &src.Kind, &cfg, &src.Token, &src.Enabled, &src.IntervalMinutes, &src.CreatedAt,
		&src.UpdatedAt, &src.LastSyncAt, &src.LastStatus, &src.LastError, &counts, &src.LastGoodSyncAt)
	src.Config, src.LastCounts = json.RawMessage(cfg), json.RawMessage(counts)
	return src, err
}

func getInventorySource(ctx context.Context, q engine.Querier, id int64) (InventorySource, error) {
	src, err := scanInventorySource(q.QueryRowContext(ctx, `SELECT `+inventorySourceColumns+` FROM inventory_sources WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return src, ErrNotFound
	}
	if err != nil {
		return src, fmt.Errorf("get inventory source %d: %w", id, err)
	}
	return src, nil
}

// InventorySources returns every inventory source by name.
func (s *Store) InventorySources(ctx context.Context) ([]InventorySource, error) {
	out, err := engine.QueryAll(ctx, s.reader, scanInventorySource,
		`SELECT `+inventorySourceColumns+` FROM inventory_sources ORDER BY `+s.d.FoldedOrder("name")+`, id`)
	if err != nil {
		return nil, fmt.Errorf("list inventory sources: %w", err)
	}
	return out, nil
}

// InventorySource returns one inventory source or ErrNotFound.
func (s *Store) InventorySource(ctx context.Context, id int64) (InventorySource, error) {
	return getInventorySource(ctx, s.reader, id)
}

// CreateInventorySource checks and inserts src (its ID, times and last
// sync are the store's), with the optional audit entry in its
// transaction. A name another source has is ErrNameExists.
func (s *Store) CreateInventorySource(ctx context.Context, src InventorySource, audit *AuditEntry) (InventorySource, error) {
	if err := src.check(); err != nil {
		return InventorySource{}, err
	}
	var out InventorySource
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM inventory_sources WHERE name = ?`, src.Name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		id, err := engine.InsertID(ctx, tx, `INSERT INTO inventory_sources (name, kind, config, token, enabled, interval_minutes,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			src.Name, src.Kind, string(src.Config), src.Token, src.Enabled, src.IntervalMinutes, now, now)
		if err != nil {
			return fmt.Errorf("insert inventory source: %w", err)
		}
		if err := auditIn(ctx, tx, audit, "inventory_source", id); err != nil {
			return err
		}
		out, err = getInventorySource(ctx, tx, id)
		return err
	})
	return out, err
}

// UpdateInventorySource reads the source, lets patch change it (a patch
// that leaves Token alone keeps the sealed token; the last sync's
// figures are the store's and stay), checks and writes it back, with the
// optional audit entry, in one transaction.
// patch runs again when the transaction does (inTx): it must set, not add to, what it records.
func (s *Store) UpdateInventorySource(ctx context.Context, id int64, patch func(*InventorySource) error, audit *AuditEntry) (InventorySource, error) {
	var out InventorySource
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		src, err := getInventorySource(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := patch(&src); err != nil {
			return err
		}
		if err := src.check(); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM inventory_sources WHERE name = ? AND id <> ?`, src.Name, id); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		if _, err := tx.ExecContext(ctx, `UPDATE inventory_sources SET name = ?, kind = ?, config = ?, token = ?, enabled = ?,
			interval_minutes = ?, updated_at = ? WHERE id = ?`,
			src.Name, src.Kind, string(src.Config), src.Token, src.Enabled, src.IntervalMinutes, Now(), id); err != nil {
			return fmt.Errorf("update inventory source: %w", err)
		}
		if err := auditIn(ctx, tx, audit, "inventory_source", id); err != nil {
			return err
		}
		out, err = getInventorySource(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteInventorySource removes a source, with the optional audit entry
// in its transaction. Its devices stay, with their history, as devices
// made by hand: no source, no key, and no sync's disable to undo (one it
// disabled stays disabled until a person enables it).
func (s *Store) DeleteInventorySource(ctx context.Context, id int64, audit *AuditEntry) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := getInventorySource(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE devices SET inventory_source_id = NULL, inventory_key = NULL, disabled_by_sync = 0
			WHERE inventory_source_id = ?`, id); err != nil {
			return fmt.Errorf("release devices of inventory source %d: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM inventory_sources WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete inventory source %d: %w", id, err)
		}
		return auditIn(ctx, tx, audit, "inventory_source", id)
	})
}
