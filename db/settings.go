package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"
)

// Setting keys.
const (
	// SettingNoiseRules holds []NoiseRule: the user's own change-detection
	// rules, on top of the built-in per-platform ones.
	SettingNoiseRules = "noise_rules"
	// SettingRetention holds a Retention.
	SettingRetention = "retention"
	// SettingSyslogPatterns holds []SyslogPattern: the user's own
	// configuration-change messages, on top of the built-in ones.
	SettingSyslogPatterns = "syslog_patterns"
	// SettingSecretMasking holds a SecretMasking.
	SettingSecretMasking = "secret_masking"
)

// SecretMasking says where the secrets inside configurations are masked
// (app/redact). The store always keeps them.
type SecretMasking struct {
	// Git masks the files of the git mirror.
	Git bool `json:"git"`
	// Notifications masks the diffs notifications carry.
	Notifications bool `json:"notifications"`
	// Views masks the web pages and the CLI for everyone without the
	// permission to reveal secrets.
	Views bool `json:"views"`
	// API masks the public API's backup content for keys without that
	// permission; off, the API returns the stored text, as its contract
	// says.
	API bool `json:"api"`
}

// DefaultSecretMasking masks everywhere but in the public API, whose
// contract is to return the stored text.
var DefaultSecretMasking = SecretMasking{Git: true, Notifications: true, Views: true}

// SecretMaskingSettings returns where secrets are masked, or
// DefaultSecretMasking.
func (s *Store) SecretMaskingSettings(ctx context.Context) (SecretMasking, error) {
	m := DefaultSecretMasking
	_, err := s.GetSetting(ctx, SettingSecretMasking, &m)
	return m, err
}

// NoiseRule is a user rule: lines matching Pattern (a Go regular
// expression) are ignored when deciding whether a configuration changed.
// A pattern with a named group `mask`, e.g. `set password ENC (?P<mask>\S+)`,
// ignores only that part of the line and still compares the rest.
// Platform limits it to one platform; "" applies it to all.
type NoiseRule struct {
	Pattern     string `json:"pattern"`
	Platform    string `json:"platform,omitempty"`
	Description string `json:"description,omitempty"`
}

// Retention bounds each device's history. A version is removed only when
// it is outside both limits that are set (zero means "no limit of this
// kind"); a device's latest good version is never removed.
type Retention struct {
	KeepLast int `json:"keep_last"`
	KeepDays int `json:"keep_days"`
}

// DefaultRetention keeps a year of history and at least the last 100
// versions; storage stays bounded while nobody loses a change they might
// want to look back at.
var DefaultRetention = Retention{KeepLast: 100, KeepDays: 365}

// GetSetting decodes the JSON stored under key into v; it reports false
// (and leaves v alone) when the key was never set.
func (s *Store) GetSetting(ctx context.Context, key string, v any) (bool, error) {
	var raw string
	err := s.reader.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get setting %s: %w", key, err)
	}
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		return false, fmt.Errorf("setting %s: %w", key, err)
	}
	return true, nil
}

// PutSetting stores v as JSON under key.
func (s *Store) PutSetting(ctx context.Context, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("setting %s: %w", key, err)
	}
	_, err = s.writer.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, key, string(raw), Now())
	if err != nil {
		return fmt.Errorf("put setting %s: %w", key, err)
	}
	return nil
}

// NoiseRules returns the user's change-detection rules.
func (s *Store) NoiseRules(ctx context.Context) ([]NoiseRule, error) {
	rules := []NoiseRule{}
	_, err := s.GetSetting(ctx, SettingNoiseRules, &rules)
	return rules, err
}

// RetentionPolicy returns the retention settings, or DefaultRetention.
func (s *Store) RetentionPolicy(ctx context.Context) (Retention, error) {
	r := DefaultRetention
	_, err := s.GetSetting(ctx, SettingRetention, &r)
	return r, err
}

// UpdateSetting reads the JSON stored under key into v (found reports
// whether it was set; v is left alone when not), lets change modify v,
// and stores v back, all in one write transaction: two people editing a
// list setting at once cannot lose each other's change. An error from
// change stores nothing and is returned as is. change runs again, on v as
// the caller gave it, when the transaction does (inTx).
func (s *Store) UpdateSetting(ctx context.Context, key string, v any, change func(found bool) error) error {
	// inTx may run the transaction again: each run starts from v as the
	// caller gave it, not as the run before left it.
	initial, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("setting %s: %w", key, err)
	}
	runs := 0
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if runs++; runs > 1 {
			if p := reflect.ValueOf(v); p.Kind() == reflect.Pointer && !p.IsNil() {
				p.Elem().SetZero()
			}
			if err := json.Unmarshal(initial, v); err != nil {
				return fmt.Errorf("setting %s: %w", key, err)
			}
		}
		var raw string
		err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&raw)
		found := err == nil
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("get setting %s: %w", key, err)
		default:
			if err := json.Unmarshal([]byte(raw), v); err != nil {
				return fmt.Errorf("setting %s: %w", key, err)
			}
		}
		if err := change(found); err != nil {
			return err
		}
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("setting %s: %w", key, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			key, string(out), Now()); err != nil {
			return fmt.Errorf("put setting %s: %w", key, err)
		}
		return nil
	})
}

// SettingUpdatedAt is when the setting under key was last stored; false
// when it never was.
func (s *Store) SettingUpdatedAt(ctx context.Context, key string) (time.Time, bool, error) {
	var at string
	err := s.reader.QueryRowContext(ctx, `SELECT updated_at FROM settings WHERE key = ?`, key).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("setting %s updated_at: %w", key, err)
	}
	t, err := ParseTime(at)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("setting %s updated_at: %w", key, err)
	}
	return t, true, nil
}

// SettingKeyFingerprint is the settings key under which a PostgreSQL
// store keeps the fingerprint of the secret key its first node used
// (never the key): every node must use the same key.
const SettingKeyFingerprint = "secret_key_fingerprint"

// RecordKeyFingerprint records fp, the fingerprint of this node's secret
// key, as the store's unless one is recorded already, and returns the
// one recorded (the first node's): a node whose key differs must not use
// the store.
func (s *Store) RecordKeyFingerprint(ctx context.Context, fp string) (string, error) {
	// The first node's (or the copy's, db/pgcopy) wins.
	_, err := s.writer.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`,
		SettingKeyFingerprint, strconv.Quote(fp), Now())
	if err != nil {
		return "", fmt.Errorf("record the secret key's fingerprint: %w", err)
	}
	var have string
	if _, err := s.GetSetting(ctx, SettingKeyFingerprint, &have); err != nil {
		return "", err
	}
	return have, nil
}
