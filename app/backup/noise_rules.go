package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"

	"backupd/db"
)

// ErrNoiseRulesChanged refuses a change made from an older list of
// rules: rules are addressed by position, and the position may now name
// another rule.
var ErrNoiseRulesChanged = errors.New("noise rules changed since the page was shown")

// NoiseRulesVersion identifies a list of rules, so that an edit made
// from it can tell whether the list changed since.
func NoiseRulesVersion(rules []db.NoiseRule) string {
	if rules == nil {
		rules = []db.NoiseRule{}
	}
	raw, _ := json.Marshal(rules)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// ChangeNoiseRules applies edit to the stored rules in one transaction,
// provided they still are the list of the given version (else
// ErrNoiseRulesChanged), and stores the result once ValidateNoiseRules
// accepts it (else its *NoiseRuleError), as SaveNoiseRules would. edit
// gets a copy it may change; its error stops the change and is returned.
func ChangeNoiseRules(ctx context.Context, store *db.Store, version string, edit func([]db.NoiseRule) ([]db.NoiseRule, error)) ([]db.NoiseRule, error) {
	var rules []db.NoiseRule
	err := store.UpdateSetting(ctx, db.SettingNoiseRules, &rules, func(bool) error {
		if NoiseRulesVersion(rules) != version {
			return ErrNoiseRulesChanged
		}
		next, err := edit(slices.Clone(rules))
		if err != nil {
			return err
		}
		if err := ValidateNoiseRules(next); err != nil {
			return err
		}
		if next == nil {
			next = []db.NoiseRule{}
		}
		rules = next
		return nil
	})
	return rules, err
}
