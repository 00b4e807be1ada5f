package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"backupd/db/engine"
)

// NotificationChannel is one destination of notifications. Config holds
// its non-secret settings (a JSON object, the sender's to read); Secret
// the sealed bytes of its secret (app/secret), never plain text; nil when
// it has none.
type NotificationChannel struct {
	ID        int64
	Name      string
	Type      string
	Enabled   bool
	Config    json.RawMessage
	Secret    []byte
	Language  string // en or zh
	CreatedAt string
	UpdatedAt string
}

func checkName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return &ErrInvalidField{"name", "must not be empty"}
	case name != strings.TrimSpace(name):
		return &ErrInvalidField{"name", "must not start or end with spaces"}
	case !utf8.ValidString(name):
		return &ErrInvalidField{"name", "must be UTF-8 text"}
	case utf8.RuneCountInString(name) > MaxNotificationNameLen:
		return &ErrInvalidField{"name", fmt.Sprintf("must be at most %d characters", MaxNotificationNameLen)}
	case strings.ContainsFunc(name, unicode.IsControl):
		return &ErrInvalidField{"name", "must not contain control characters"}
	}
	return nil
}

func (c *NotificationChannel) check() error {
	if err := checkName(c.Name); err != nil {
		return err
	}
	if !slices.Contains(ChannelTypes, c.Type) {
		return &ErrInvalidField{"type", "must be one of " + strings.Join(ChannelTypes, ", ")}
	}
	if c.Language == "" {
		c.Language = "en"
	}
	if c.Language != "en" && c.Language != "zh" {
		return &ErrInvalidField{"language", "must be en or zh"}
	}
	if len(c.Config) == 0 {
		c.Config = json.RawMessage(`{}`)
	}
	if len(c.Config) > MaxChannelConfigBytes {
		return &ErrInvalidField{"config", fmt.Sprintf("must be at most %d bytes", MaxChannelConfigBytes)}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(c.Config, &obj); err != nil || obj == nil {
		return &ErrInvalidField{"config", "must be a JSON object"}
	}
	if len(c.Secret) > MaxChannelSecretBytes {
		return &ErrInvalidField{"secret", fmt.Sprintf("must be at most %d bytes sealed", MaxChannelSecretBytes)}
	}
	return nil
}

const channelColumns = `id, name, type, enabled, config, secret, language, created_at, updated_at`

func scanChannel(row engine.Scanner) (NotificationChannel, error) {
	var c NotificationChannel
	var cfg string
	err := row.Scan(&c.ID, &c.Name, &c.Type, &c.Enabled, &cfg, &c.Secret, &c.Language, &c.CreatedAt, &c.UpdatedAt)
	c.Config = json.RawMessage(cfg)
	return c, err
}

// NotificationChannels returns every channel by name.
func (s *Store) NotificationChannels(ctx context.Context) ([]NotificationChannel, error) {
	out, err := engine.QueryAll(ctx, s.reader, scanChannel, `SELECT `+channelColumns+` FROM notification_channels ORDER BY name, id`)
	if err != nil {
		return nil, fmt.Errorf("list notification channels: %w", err)
	}
	return out, nil
}

// GetNotificationChannel returns one channel or ErrNotFound.
func (s *Store) GetNotificationChannel(ctx context.Context, id int64) (NotificationChannel, error) {
	return getChannel(ctx, s.reader, id)
}

func getChannel(ctx context.Context, q engine.Querier, id int64) (NotificationChannel, error) {
	c, err := scanChannel(q.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM notification_channels WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("get notification channel %d: %w", id, err)
	}
	return c, nil
}

// CreateNotificationChannel checks and inserts c (its ID and times are the
// store's).
func (s *Store) CreateNotificationChannel(ctx context.Context, c NotificationChannel) (NotificationChannel, error) {
	if err := c.check(); err != nil {
		return NotificationChannel{}, err
	}
	var out NotificationChannel
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM notification_channels WHERE name = ?`, c.Name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		id, err := engine.InsertID(ctx, tx, `INSERT INTO notification_channels (name, type, enabled, config, secret, language, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, c.Name, c.Type, c.Enabled, string(c.Config), c.Secret, c.Language, now, now)
		if err != nil {
			return fmt.Errorf("insert notification channel: %w", err)
		}
		out, err = getChannel(ctx, tx, id)
		return err
	})
	return out, err
}

// UpdateNotificationChannel reads the channel, lets patch change it (a
// patch that leaves Secret alone keeps the sealed secret), checks and
// writes it back, in one transaction.
// patch runs again when the transaction does (inTx): it must set, not add to, what it records.
func (s *Store) UpdateNotificationChannel(ctx context.Context, id int64, patch func(*NotificationChannel) error) (NotificationChannel, error) {
	var out NotificationChannel
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		c, err := getChannel(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := patch(&c); err != nil {
			return err
		}
		if err := c.check(); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM notification_channels WHERE name = ? AND id <> ?`, c.Name, id); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notification_channels SET name = ?, type = ?, enabled = ?, config = ?, secret = ?,
				language = ?, updated_at = ? WHERE id = ?`,
			c.Name, c.Type, c.Enabled, string(c.Config), c.Secret, c.Language, Now(), id); err != nil {
			return fmt.Errorf("update notification channel: %w", err)
		}
		out, err = getChannel(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteNotificationChannel removes a channel no rule uses, with its
// deliveries (and so its delivery log).
func (s *Store) DeleteNotificationChannel(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := getChannel(ctx, tx, id); err != nil {
			return err
		}
		if used, err := engine.Exists(ctx, tx, `SELECT 1 FROM notification_rule_channels WHERE channel_id = ? LIMIT 1`, id); err != nil {
			return err
		} else if used {
			return ErrChannelInUse
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM notification_channels WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete notification channel: %w", err)
		}
		return nil
	})
}
