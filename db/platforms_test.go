package db_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"backupd/db"
)

func TestCustomPlatformsCRUD(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)

	p, err := s.CreateCustomPlatform(ctx, "custom_acme", `{"id":"custom_acme"}`)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID == 0 || p.PlatformID != "custom_acme" || p.CreatedAt == "" || p.UpdatedAt == "" {
		t.Fatalf("created %+v", p)
	}
	if _, err := s.CreateCustomPlatform(ctx, "custom_acme", `{}`); !errors.Is(err, db.ErrNameExists) {
		t.Fatalf("second create: %v, want ErrNameExists", err)
	}
	if _, err := s.CreateCustomPlatform(ctx, "custom_beta", `{"id":"custom_beta"}`); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetCustomPlatform(ctx, "custom_acme")
	if err != nil || got.Definition != `{"id":"custom_acme"}` {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := s.GetCustomPlatform(ctx, "custom_none"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	up, err := s.UpdateCustomPlatform(ctx, "custom_acme", `{"id":"custom_acme","name":"x"}`)
	if err != nil || up.Definition != `{"id":"custom_acme","name":"x"}` || up.ID != p.ID {
		t.Fatalf("update: %+v %v", up, err)
	}
	if _, err := s.UpdateCustomPlatform(ctx, "custom_none", `{}`); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("update missing: %v", err)
	}
	list, err := s.ListCustomPlatforms(ctx)
	if err != nil || len(list) != 2 || list[0].PlatformID != "custom_acme" || list[1].PlatformID != "custom_beta" {
		t.Fatalf("list: %+v %v", list, err)
	}

	// A platform named by a device and a template cannot go; the refusal
	// counts both.
	dev := createDevice(t, s, "edge-1", "custom_acme")
	if _, err := s.CreateTemplate(ctx, db.Template{Name: "acme", Platform: "custom_acme", Commands: "show"}); err != nil {
		t.Fatal(err)
	}
	err = s.DeleteCustomPlatform(ctx, "custom_acme")
	var inUse *db.PlatformInUseError
	if !errors.As(err, &inUse) || !errors.Is(err, db.ErrInUse) || inUse.Devices != 1 || inUse.Templates != 1 {
		t.Fatalf("delete used platform: %v", err)
	}
	if !strings.Contains(err.Error(), "1 device(s) and 1 template(s)") {
		t.Fatalf("message %q does not say how many", err)
	}
	if _, err := s.GetCustomPlatform(ctx, "custom_acme"); err != nil {
		t.Fatalf("refused delete removed it: %v", err)
	}
	if err := s.DeleteDevice(ctx, dev.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCustomPlatform(ctx, "custom_beta"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCustomPlatform(ctx, "custom_beta"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if d, tpl, err := s.PlatformUse(ctx, "custom_acme"); err != nil || d != 0 || tpl != 1 {
		t.Fatalf("use: %d %d %v", d, tpl, err)
	}
	// Ids are never reused.
	again, err := s.CreateCustomPlatform(ctx, "custom_beta", `{}`)
	if err != nil || again.ID <= p.ID+1 {
		t.Fatalf("recreated %+v %v: id reused", again, err)
	}
}

func TestCustomPlatformsBounded(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	for i := 0; i < db.MaxCustomPlatforms; i++ {
		if _, err := s.CreateCustomPlatform(ctx, "custom_p"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+itoa(i), `{}`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateCustomPlatform(ctx, "custom_one_more", `{}`); !errors.Is(err, db.ErrTooManyPlatforms) {
		t.Fatalf("beyond the bound: %v", err)
	}
}

func createDevice(t *testing.T, s *db.Store, name, platform string) db.Device {
	t.Helper()
	d, err := s.CreateDevice(context.Background(), db.Device{Name: name, Host: "192.0.2.1", Port: 22,
		Platform: platform, LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatalf("CreateDevice: %v", err)
	}
	return d
}

func itoa(i int) string { return strconv.Itoa(i) }
