package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"backupd/app/devsim"
	"backupd/app/insync"
	"backupd/app/secret"
	"backupd/db"
)

// InventorySourceName is the demo's inventory source; a restart finds and
// reuses it.
const InventorySourceName = "Demo inventory (Oxidized-style HTTP JSON)"

// inventoryPath is where the demo's inventory answers.
const inventoryPath = "/demo-inventory/nodes.json"

// inventorySeedBase keeps the seeds (and so the host keys) of the
// inventory's devices apart from the lab's.
const inventorySeedBase = 100

// inventoryModels are the Oxidized model names the inventory gives its
// devices' platforms in, as an Oxidized source would: the sync maps them
// to backupd's platforms (ios → cisco_ios …).
var inventoryModels = map[string]string{"cisco_ios": "ios", "arista_eos": "eos", "juniper_junos": "junos"}

// inventoryFleet are the simulated devices only the demo inventory lists:
// nothing registers them but a sync of the demo source.
var inventoryFleet = []member{
	{name: "inv-rtr-01", platform: "cisco_ios", group: GroupName, size: 20 << 10},
	{name: "inv-sw-01", platform: "arista_eos", group: GroupName, size: 16 << 10},
	{name: "inv-rtr-02", platform: "juniper_junos", group: GroupName, size: 18 << 10},
}

// InventoryNames are the names of the devices the demo inventory lists.
func InventoryNames() []string {
	out := make([]string, len(inventoryFleet))
	for i, m := range inventoryFleet {
		out[i] = m.name
	}
	return out
}

// Inventory is the demo's source of truth on 127.0.0.1: an HTTP JSON
// inventory answering as an Oxidized `source: http` does, listing a few
// simulated devices the lab does not register, so that a newcomer sees
// Settings → Inventory sources at work (a dry run listing the creates,
// then Sync now) without a NetBox of their own.
type Inventory struct {
	srv      *http.Server
	url      string
	body     []byte
	devices  []*devsim.Device
	sourceID int64
	// deviceIDs are the listed devices an earlier sync already made.
	deviceIDs []int64
}

// URL is the inventory's address, as the demo source holds it.
func (inv *Inventory) URL() string { return inv.url }

// SourceID is the demo inventory source.
func (inv *Inventory) SourceID() int64 { return inv.sourceID }

// DeviceIDs are the devices of the inventory that an earlier sync made
// and that still exist, pointed at their simulators' new ports.
func (inv *Inventory) DeviceIDs() []int64 { return append([]int64(nil), inv.deviceIDs...) }

func (inv *Inventory) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(inv.body)
}

// Close stops the inventory's server and its simulated devices.
func (inv *Inventory) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	errs := []error{inv.srv.Shutdown(ctx)}
	for _, d := range inv.devices {
		errs = append(errs, d.Close())
	}
	return errors.Join(errs...)
}

// inventoryNode is one device of the inventory's answer, in the field
// names Oxidized's documentation uses for its http source.
type inventoryNode struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	IP      string `json:"ip"`
	Model   string `json:"model"`
	Group   string `json:"group"`
	SSHPort int    `json:"ssh_port"`
}

// StartInventory starts the inventory's simulated devices (with the demo
// credential's passwords) and its HTTP server, and registers (after a
// restart: repoints) the demo inventory source at it: synced on demand
// only (interval 0), so that the devices appear when the user runs it.
// Devices an earlier sync made are pointed at their simulators' new
// ports, as the lab's are. A demo source the user pointed elsewhere is
// left as it is.
func StartInventory(ctx context.Context, store *db.Store, sealer *secret.Sealer, log *slog.Logger) (*Inventory, error) {
	password, enable, _, err := credential(ctx, store, sealer)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo inventory: %w", err)
	}
	inv := &Inventory{url: "http://" + ln.Addr().String() + inventoryPath}
	mux := http.NewServeMux()
	mux.Handle("GET "+inventoryPath, inv)
	inv.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	nodes := make([]inventoryNode, 0, len(inventoryFleet))
	for i, m := range inventoryFleet {
		o := m.options(inventorySeedBase+i, password, enable)
		o.SSHAddr = "127.0.0.1:0"
		d, err := devsim.NewDevice(o)
		if err != nil {
			inv.closeDevices()
			ln.Close()
			return nil, fmt.Errorf("demo device %s: %w", m.name, err)
		}
		inv.devices = append(inv.devices, d)
		_, p, _ := net.SplitHostPort(d.SSHAddr())
		port, _ := strconv.Atoi(p)
		nodes = append(nodes, inventoryNode{ID: "demo-" + strconv.Itoa(i+1), Name: m.name, IP: "127.0.0.1",
			Model: inventoryModels[m.platform], Group: m.group, SSHPort: port})
	}
	if inv.body, err = json.Marshal(nodes); err != nil {
		inv.closeDevices()
		ln.Close()
		return nil, err
	}
	go func() { _ = inv.srv.Serve(ln) }()
	if err := inv.register(ctx, store); err != nil {
		inv.Close()
		return nil, err
	}
	for _, n := range nodes {
		id, ok, err := repoint(ctx, store, n)
		if err != nil {
			inv.Close()
			return nil, err
		}
		if ok {
			inv.deviceIDs = append(inv.deviceIDs, id)
		}
	}
	log.Info("demo inventory: an HTTP JSON source lists devices the lab does not have; dry-run and sync it in Settings → Inventory sources",
		"source", InventorySourceName, "devices", len(nodes))
	return inv, nil
}

func (inv *Inventory) closeDevices() {
	for _, d := range inv.devices {
		d.Close()
	}
}

// inventoryConfig is the demo source's settings: what pasting the
// Oxidized configuration of such an inventory gives.
func inventoryConfig(url string) insync.SourceConfig {
	return insync.SourceConfig{
		HTTP: &insync.HTTPConfig{URL: url, Map: map[string]string{"key": "id", "name": "name", "ip": "ip", "model": "model", "group": "group"},
			VarsMap: map[string]string{"ssh_port": "ssh_port"}},
		Defaults: insync.Defaults{Credential: CredentialName},
	}
}

// register creates the demo source, or points it at this run's URL when
// it still points at the demo's own inventory of an earlier run (the
// rest of its settings, which the user may have edited, stays).
func (inv *Inventory) register(ctx context.Context, store *db.Store) error {
	srcs, err := store.InventorySources(ctx)
	if err != nil {
		return fmt.Errorf("demo inventory source: %w", err)
	}
	for _, src := range srcs {
		if src.Name != InventorySourceName {
			continue
		}
		inv.sourceID = src.ID
		cfg, err := insync.ParseConfig(src.Config)
		if err != nil || src.Kind != db.InventoryHTTP || cfg.HTTP == nil || cfg.HTTP.Preset != "" ||
			!strings.HasPrefix(cfg.HTTP.URL, "http://127.0.0.1:") || !strings.HasSuffix(cfg.HTTP.URL, inventoryPath) {
			return nil // the user's now
		}
		cfg.HTTP.URL = inv.url
		raw, err := storedConfig(cfg)
		if err != nil {
			return err
		}
		if _, err := store.UpdateInventorySource(ctx, src.ID, func(s *db.InventorySource) error {
			s.Config = raw
			return nil
		}, nil); err != nil {
			return fmt.Errorf("demo inventory source: %w", err)
		}
		return nil
	}
	raw, err := storedConfig(inventoryConfig(inv.url))
	if err != nil {
		return err
	}
	src, err := store.CreateInventorySource(ctx, db.InventorySource{Name: InventorySourceName, Kind: db.InventoryHTTP,
		Config: raw, Enabled: true, IntervalMinutes: 0}, nil)
	if err != nil {
		return fmt.Errorf("demo inventory source: %w", err)
	}
	inv.sourceID = src.ID
	return nil
}

// storedConfig is cfg as the source stores it, checked as a sync reads
// it.
func storedConfig(cfg insync.SourceConfig) (json.RawMessage, error) {
	if _, err := cfg.Fetcher(db.InventoryHTTP, ""); err != nil {
		return nil, fmt.Errorf("demo inventory source: %w", err)
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("demo inventory source: %w", err)
	}
	return raw, nil
}

// repoint points the device an earlier sync made of n, if there is one,
// at its simulator's new port, as upsertDevice does for the lab, so that
// it is backed up at once and the next sync finds it unchanged; ok is
// false when no such device exists or it is disabled (nothing to back
// up).
func repoint(ctx context.Context, store *db.Store, n inventoryNode) (id int64, ok bool, err error) {
	have, err := store.DeviceByName(ctx, n.Name)
	if errors.Is(err, db.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("demo device %s: %w", n.Name, err)
	}
	if have.Host != n.IP || have.LoginMethod != "ssh" {
		return 0, false, nil // not the demo's device (any more)
	}
	moved, err := store.UpdateDevice(ctx, have.ID, func(cur *db.Device) error {
		cur.Port = n.SSHPort
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("demo device %s: %w", n.Name, err)
	}
	if _, err := store.ConfirmAddress(ctx, have.ID, moved.Address()); err != nil && !errors.Is(err, db.ErrAddressConfirmed) {
		return 0, false, fmt.Errorf("demo device %s: %w", n.Name, err)
	}
	return have.ID, moved.Enabled, nil
}
