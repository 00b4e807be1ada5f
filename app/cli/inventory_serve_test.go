package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"backupd/app/secret"
	"backupd/db"
)

// The running server syncs an inventory source on its schedule: a source
// never synced is due at once, so the leader fetches it as it starts and
// the NetBox's devices with an address are created, owned by the source.
// The NetBox answer is pynetbox's recorded devices list
// (app/insync/testdata/netbox/README.md says where it came from), served
// whole by a real HTTP server that checks the token.
func TestServeSyncsInventorySourceOnSchedule(t *testing.T) {
	page, err := os.ReadFile("../insync/testdata/netbox/devices.json")
	if err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef0123456789abcdef01234567"
	netbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Token "+token {
			http.Error(w, `{"detail": "Invalid token"}`, http.StatusForbidden)
			return
		}
		if r.URL.Path != "/api/dcim/devices/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(page)
	}))
	t.Cleanup(netbox.Close)

	data := storeDir(t)
	ctx := context.Background()
	sealer, err := secret.LoadOrCreate(data)
	if err != nil {
		t.Fatal(err)
	}
	store := openStore(t, data)
	cfg, _ := json.Marshal(map[string]any{"netbox": map[string]any{"url": netbox.URL, "host_from": "primary_ip"}})
	src, err := store.CreateInventorySource(ctx, db.InventorySource{Name: "NetBox lab", Kind: db.InventoryNetBox, Config: cfg,
		Token: sealer.Seal(token, secret.PurposeInventoryToken), IntervalMinutes: 60, Enabled: true}, nil)
	if err != nil {
		t.Fatal(err)
	}

	startServe(t, data)
	deadline := time.Now().Add(60 * time.Second)
	for {
		s, err := store.InventorySource(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		if s.LastStatus != "" {
			if s.LastStatus != db.InventorySyncOK {
				t.Fatalf("the scheduled sync: %s, %s", s.LastStatus, s.LastError)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not sync the source within 60 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	owned, err := store.SyncedDevices(ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(owned) != 4 {
		t.Fatalf("the source owns %d devices, want the 4 NetBox gives an address: %+v", len(owned), owned)
	}
}
