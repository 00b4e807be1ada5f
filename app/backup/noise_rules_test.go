package backup_test

import (
	"context"
	"errors"
	"testing"

	"backupd/app/backup"
	"backupd/db"
)

// An edit of the noise rules applies only to the list it was made from,
// and stores only what change detection can use.
func TestChangeNoiseRulesRefusesAStaleOrInvalidEdit(t *testing.T) {
	ctx := context.Background()
	s := schedOpenStore(t)
	add := func(r db.NoiseRule) func([]db.NoiseRule) ([]db.NoiseRule, error) {
		return func(rs []db.NoiseRule) ([]db.NoiseRule, error) { return append(rs, r), nil }
	}
	empty := backup.NoiseRulesVersion(nil)
	rules, err := backup.ChangeNoiseRules(ctx, s, empty, add(db.NoiseRule{Pattern: `^! Last change`}))
	if err != nil || len(rules) != 1 {
		t.Fatalf("first rule: %v, %v", rules, err)
	}
	// A second edit made from the empty list would now address rules by
	// positions that moved.
	if _, err := backup.ChangeNoiseRules(ctx, s, empty, add(db.NoiseRule{Pattern: `^ntp clock-period`})); !errors.Is(err, backup.ErrNoiseRulesChanged) {
		t.Fatalf("an edit of an older list: %v, want ErrNoiseRulesChanged", err)
	}
	var bad *backup.NoiseRuleError
	if _, err := backup.ChangeNoiseRules(ctx, s, backup.NoiseRulesVersion(rules), add(db.NoiseRule{Pattern: `(`})); !errors.As(err, &bad) || bad.Index != 1 {
		t.Fatalf("a pattern that does not compile: %v, want a NoiseRuleError of rule 2", err)
	}
	stored, err := s.NoiseRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 1 || stored[0].Pattern != `^! Last change` {
		t.Fatalf("stored %v, want the first rule only", stored)
	}
}
