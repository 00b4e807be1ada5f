package db_test

import (
	"context"
	"errors"
	"testing"

	"backupd/db"
)

func TestUpdateSettingIsReadModifyWrite(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	var rules []db.NoiseRule
	err := s.UpdateSetting(ctx, db.SettingNoiseRules, &rules, func(found bool) error {
		if found {
			t.Error("a setting never stored is reported found")
		}
		rules = append(rules, db.NoiseRule{Pattern: "^x$"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.SettingUpdatedAt(ctx, db.SettingNoiseRules); err != nil || !ok {
		t.Fatalf("SettingUpdatedAt after a write: %v %v", ok, err)
	}
	refuse := errors.New("no")
	var again []db.NoiseRule
	err = s.UpdateSetting(ctx, db.SettingNoiseRules, &again, func(found bool) error {
		if !found || len(again) != 1 || again[0].Pattern != "^x$" {
			t.Errorf("change sees %v (found %v), want the stored rule", again, found)
		}
		again = nil
		return refuse
	})
	if !errors.Is(err, refuse) {
		t.Fatalf("error of change = %v, want it returned", err)
	}
	got, err := s.NoiseRules(ctx)
	if err != nil || len(got) != 1 {
		t.Fatalf("a refused change stored something: %v %v", got, err)
	}
	if _, ok, _ := s.SettingUpdatedAt(ctx, "never"); ok {
		t.Error("SettingUpdatedAt reports a setting never stored")
	}
}
