package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"backupd/db"
)

// newInventorySource makes a NetBox source named name.
func newInventorySource(t testing.TB, s *db.Store, name string) db.InventorySource {
	t.Helper()
	src, err := s.CreateInventorySource(context.Background(), db.InventorySource{Name: name, Kind: db.InventoryNetBox,
		Config: json.RawMessage(`{"url":"https://netbox.example.net"}`), Token: []byte("sealed"), Enabled: true,
		IntervalMinutes: db.DefaultInventoryInterval}, nil)
	if err != nil {
		t.Fatalf("create inventory source %q: %v", name, err)
	}
	return src
}

// auditActions are the actions of the audit log, oldest first.
func auditActions(t *testing.T, s *db.Store) []string {
	t.Helper()
	entries, _, err := s.ListAudit(context.Background(), 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(entries) - 1; i >= 0; i-- {
		out = append(out, entries[i].Action)
	}
	return out
}

// Sources are made, changed and deleted with their audit entries; bad
// names, kinds, configurations and intervals are refused by field, a
// name taken (in any letter case) is ErrNameExists, and an update that
// leaves the token alone keeps it.
func TestInventorySourceCRUD(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	by := func(action string) *db.AuditEntry {
		return &db.AuditEntry{Username: "admin", Interface: "web", Action: action}
	}
	src, err := s.CreateInventorySource(ctx, db.InventorySource{Name: "NetBox EU", Kind: db.InventoryNetBox,
		Config: json.RawMessage(`{"url":"https://netbox.example.net"}`), Token: []byte("sealed"), Enabled: true,
		IntervalMinutes: 60}, by("inventory_source.create"))
	if err != nil {
		t.Fatal(err)
	}
	if src.ID == 0 || src.LastSyncAt != nil || src.LastStatus != "" || string(src.LastCounts) != "{}" || string(src.Token) != "sealed" {
		t.Errorf("created %+v", src)
	}
	for name, bad := range map[string]db.InventorySource{
		"name":             {Name: "", Kind: db.InventoryHTTP},
		"name ":            {Name: strings.Repeat("x", db.MaxInventorySourceName+1), Kind: db.InventoryHTTP},
		"kind":             {Name: "other", Kind: "librenms"},
		"config":           {Name: "other", Kind: db.InventoryHTTP, Config: json.RawMessage(`[1]`)},
		"config ":          {Name: "other", Kind: db.InventoryHTTP, Config: json.RawMessage(`{"url":`)},
		"interval_minutes": {Name: "other", Kind: db.InventoryHTTP, IntervalMinutes: -1},
	} {
		_, err := s.CreateInventorySource(ctx, bad, by("inventory_source.create"))
		var field *db.ErrInvalidField
		if !errors.As(err, &field) || field.Field != strings.TrimSpace(name) {
			t.Errorf("%s: %v, want an invalid %s", name, err, strings.TrimSpace(name))
		}
	}
	if _, err := s.CreateInventorySource(ctx, db.InventorySource{Name: "netbox eu", Kind: db.InventoryHTTP}, by("inventory_source.create")); !errors.Is(err, db.ErrNameExists) {
		t.Errorf("a taken name: %v", err)
	}
	other, err := s.CreateInventorySource(ctx, db.InventorySource{Name: "CMDB", Kind: db.InventoryHTTP}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if other.IntervalMinutes != 0 || other.Token != nil {
		t.Errorf("on demand, no token: %+v", other)
	}

	up, err := s.UpdateInventorySource(ctx, src.ID, func(x *db.InventorySource) error {
		x.IntervalMinutes, x.Config = 15, json.RawMessage(`{"url":"https://netbox2.example.net"}`)
		return nil
	}, by("inventory_source.update"))
	if err != nil {
		t.Fatal(err)
	}
	if up.IntervalMinutes != 15 || string(up.Token) != "sealed" || !strings.Contains(string(up.Config), "netbox2") {
		t.Errorf("updated %+v", up)
	}
	if _, err := s.UpdateInventorySource(ctx, src.ID, func(x *db.InventorySource) error { x.Name = "cmdb"; return nil }, nil); !errors.Is(err, db.ErrNameExists) {
		t.Errorf("renamed onto another: %v", err)
	}
	list, err := s.InventorySources(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "CMDB" || list[1].Name != "NetBox EU" {
		t.Fatalf("list %+v, %v", list, err)
	}
	if err := s.DeleteInventorySource(ctx, src.ID, by("inventory_source.delete")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.InventorySource(ctx, src.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("deleted: %v", err)
	}
	if err := s.DeleteInventorySource(ctx, src.ID, by("inventory_source.delete")); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("deleted twice: %v", err)
	}
	want := []string{"inventory_source.create", "inventory_source.update", "inventory_source.delete"}
	if got := auditActions(t, s); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("audit %v, want %v", got, want)
	}
}
