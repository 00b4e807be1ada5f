package restore

import (
	"context"
	"fmt"
	"time"

	"backupd/db"
)

// SettingKey holds the restore Settings.
const SettingKey = "restore"

// Settings are the installation's rules for restores.
type Settings struct {
	// FourEyes: the person who requested a restore cannot approve it.
	FourEyes bool `json:"four_eyes"`
	// PendingHours: a request not approved within it expires.
	PendingHours int `json:"pending_hours"`
	// ApprovedHours: an approved restore that could not start within
	// it (its device busy or unreachable by the queue) expires.
	ApprovedHours int `json:"approved_hours"`
}

// DefaultSettings: anyone allowed may approve, a request waits a day, an
// approved restore an hour.
var DefaultSettings = Settings{FourEyes: false, PendingHours: 24, ApprovedHours: 1}

// Bounds of the settings.
const (
	MinHours = 1
	MaxHours = 24 * 30
)

// Check refuses settings out of bounds, naming the field.
func (s Settings) Check() error {
	if s.PendingHours < MinHours || s.PendingHours > MaxHours {
		return &db.ErrInvalidField{Field: "pending_hours", Message: fmt.Sprintf("between %d and %d", MinHours, MaxHours)}
	}
	if s.ApprovedHours < MinHours || s.ApprovedHours > MaxHours {
		return &db.ErrInvalidField{Field: "approved_hours", Message: fmt.Sprintf("between %d and %d", MinHours, MaxHours)}
	}
	return nil
}

// LoadSettings returns the stored settings, or the defaults.
func LoadSettings(ctx context.Context, store *db.Store) (Settings, error) {
	s := DefaultSettings
	if _, err := store.GetSetting(ctx, SettingKey, &s); err != nil {
		return DefaultSettings, err
	}
	return s, nil
}

// SaveSettings checks and stores the settings.
func SaveSettings(ctx context.Context, store *db.Store, s Settings) error {
	if err := s.Check(); err != nil {
		return err
	}
	return store.PutSetting(ctx, SettingKey, s)
}

func (s Settings) pendingTTL() time.Duration  { return time.Duration(s.PendingHours) * time.Hour }
func (s Settings) approvedTTL() time.Duration { return time.Duration(s.ApprovedHours) * time.Hour }
