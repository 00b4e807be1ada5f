// Package demo runs the built-in fleet of `backupd serve --demo`:
// simulated devices on loopback, registered in the store, backed up at
// once and changing now and then, so a newcomer sees backups, diffs and
// failures within a minute and with no hardware.
package demo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"strconv"
	"time"

	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
)

// Names of what the demo registers; a restart finds and reuses them.
const (
	GroupName      = "Demo lab"
	CredentialName = "Demo lab login"
	ScheduleName   = "Demo lab: every 5 minutes"
	username       = "backup"
)

// member is one simulated device of the demo.
type member struct {
	name, platform, group, method string
	size                          int
	failure                       devsim.Failure
	// down: registered on a port where nothing listens, like a device
	// that is switched off.
	down bool
}

var fleet = []member{
	{name: "core-rtr-01", platform: "cisco_ios", group: "Core", size: 48 << 10},
	{name: "core-sw-01", platform: "cisco_nxos", group: "Core", size: 90 << 10},
	{name: "pe-rtr-01", platform: "cisco_xr", group: "Core", size: 60 << 10},
	{name: "core-sw-02", platform: "arista_eos", group: "Core", size: 40 << 10},
	{name: "edge-rtr-01", platform: "juniper_junos", group: "Core", size: 36 << 10},
	{name: "dc-sw-01", platform: "dell_os10", group: "Core", size: 24 << 10},
	{name: "campus-sw-01", platform: "huawei_vrp", group: "Campus", size: 32 << 10},
	{name: "campus-sw-02", platform: "huawei_vrpv8", group: "Campus", size: 28 << 10},
	{name: "campus-sw-03", platform: "h3c_comware", group: "Campus", size: 30 << 10},
	{name: "campus-sw-04", platform: "hp_procurve", group: "Campus", method: "telnet", size: 12 << 10},
	{name: "campus-sw-05", platform: "aruba_aoscx", group: "Campus", size: 20 << 10},
	{name: "campus-sw-06", platform: "ruijie_os", group: "Campus", method: "telnet", size: 16 << 10},
	{name: "campus-sw-07", platform: "extreme_exos", group: "Campus", size: 22 << 10},
	{name: "branch-rtr-01", platform: "mikrotik_routeros", group: "Branch", size: 10 << 10},
	{name: "branch-rtr-02", platform: "vyos", group: "Branch", size: 8 << 10},
	{name: "branch-rtr-03", platform: "cisco_xe", group: "Branch", size: 26 << 10, failure: devsim.FailWrongPassword},
	{name: "branch-fw-01", platform: "juniper_screenos", group: "Branch", down: true},
	{name: "dc-fw-01", platform: "cisco_asa", group: "Firewalls", size: 44 << 10},
	{name: "dc-fw-02", platform: "fortinet", group: "Firewalls", size: 120 << 10},
	{name: "dc-fw-03", platform: "paloalto_panos", group: "Firewalls", size: 30 << 10},
	{name: "pe-rtr-02", platform: "nokia_sros", group: "Core", size: 40 << 10},
	{name: "metro-sw-01", platform: "ciena_saos", group: "Core", size: 16 << 10},
	{name: "campus-wlc-01", platform: "aruba_os", group: "Campus", size: 24 << 10},
	{name: "access-olt-01", platform: "huawei_smartax", group: "Campus", method: "telnet", size: 20 << 10},
	{name: "branch-sw-01", platform: "cisco_smb", group: "Branch", size: 10 << 10},
	{name: "branch-fw-02", platform: "pfsense", group: "Branch", size: 14 << 10},
	{name: "dc-fw-04", platform: "checkpoint_gaia", group: "Firewalls", size: 20 << 10},
	{name: "dc-fw-05", platform: "sonicwall_sonicos", group: "Firewalls", size: 24 << 10},
	{name: "oob-con-01", platform: "opengear", group: "Console and power", size: 8 << 10},
	{name: "oob-con-02", platform: "perle_iolan", group: "Console and power", method: "telnet", size: 6 << 10},
	{name: "dc-ups-01", platform: "eaton_network", group: "Console and power", size: 6 << 10},
}

// Size is the number of devices in the demo lab.
func Size() int { return len(fleet) }

// Fleet is the running demo.
type Fleet struct {
	devices   []*devsim.Device
	deviceIDs []int64
	log       *slog.Logger
	// logTo is the syslog listener the devices log their changes to
	// ("" when none).
	logTo string
}

// LogTo makes the simulated devices log each configuration change Mutate
// makes to the syslog listener at addr, as devices whose `logging host`
// is backupd do. Call it before Mutate.
func (f *Fleet) LogTo(addr string) { f.logTo = addr }

// DeviceIDs are the registered demo devices.
func (f *Fleet) DeviceIDs() []int64 { return append([]int64(nil), f.deviceIDs...) }

// Close stops the simulated devices.
func (f *Fleet) Close() error {
	var errs []error
	for _, d := range f.devices {
		errs = append(errs, d.Close())
	}
	return errors.Join(errs...)
}

// Start starts the simulated devices and registers (or, after a restart,
// updates) the group, credential, devices and a five-minute schedule.
func Start(ctx context.Context, store *db.Store, sealer *secret.Sealer, log *slog.Logger) (*Fleet, error) {
	password, enable, credID, err := credential(ctx, store, sealer)
	if err != nil {
		return nil, err
	}
	rootID, err := groupID(ctx, store, GroupName, nil)
	if err != nil {
		return nil, err
	}
	f := &Fleet{log: log}
	for i, m := range fleet {
		gid, err := groupID(ctx, store, m.group, &rootID)
		if err != nil {
			f.Close()
			return nil, err
		}
		method := m.method
		if method == "" {
			method = "ssh"
		}
		var port int
		if m.down {
			if port, err = closedPort(); err != nil {
				f.Close()
				return nil, err
			}
		} else {
			o := m.options(i, password, enable)
			if method == "telnet" {
				o.TelnetAddr = "127.0.0.1:0"
			} else {
				o.SSHAddr = "127.0.0.1:0"
			}
			d, err := devsim.NewDevice(o)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("demo device %s: %w", m.name, err)
			}
			f.devices = append(f.devices, d)
			addr := d.SSHAddr()
			if method == "telnet" {
				addr = d.TelnetAddr()
			}
			_, p, _ := net.SplitHostPort(addr)
			port, _ = strconv.Atoi(p)
		}
		id, err := upsertDevice(ctx, store, db.Device{
			Name: m.name, Host: "127.0.0.1", Port: port, Platform: m.platform, LoginMethod: method,
			GroupID: &gid, CredentialID: &credID, Encoding: "utf-8", Enabled: true,
		})
		if err != nil {
			f.Close()
			return nil, err
		}
		f.deviceIDs = append(f.deviceIDs, id)
	}
	if err := ensureSchedule(ctx, store, rootID); err != nil {
		f.Close()
		return nil, err
	}
	log.Info("demo fleet started", "devices", len(fleet), "group", GroupName)
	return f, nil
}

// Simulated returns the simulator's options and the platform of the demo
// device name as the demo runs it (password and enable password as
// given), false for a name not in the lab, one that is down, or one set
// to fail: what a test needs to try the demo's devices one by one.
func Simulated(name, password, enable string) (devsim.Options, bool) {
	for i, m := range fleet {
		if m.name == name && !m.down && m.failure == "" {
			return m.options(i, password, enable), true
		}
	}
	return devsim.Options{}, false
}

// Names are the demo devices' names, in the lab's order.
func Names() []string {
	out := make([]string, len(fleet))
	for i, m := range fleet {
		out[i] = m.name
	}
	return out
}

// options are the simulator's options of member m, the fleet's i-th (the
// inventory's are numbered from inventorySeedBase).
func (m member) options(i int, password, enable string) devsim.Options {
	o := devsim.Options{
		Platform: m.platform, Hostname: m.name, Username: username, Password: password,
		ConfigSize: m.size, Seed: int64(1000 + i), // the seed keeps host keys across restarts
	}
	if p, ok := devsim.Lookup(m.platform); ok && p.EnableCommand != "" {
		o.EnablePassword = enable
	}
	if m.failure != "" {
		o.Failures = []devsim.Failure{m.failure}
	}
	return o
}

// Rotated are the secrets (the simulator's names for them) a change may
// rotate, as an operator changing a local password or a community does.
var Rotated = []string{"user", "snmp"}

// Secrets returns, for each demo device that runs (the inventory's
// too), the secrets its configuration holds, now and after up to
// rotations changes of each of Rotated: what must never leave backupd in
// clear text. The devices' secrets follow from their seeds, as the
// running fleet's do.
func Secrets(rotations int) (map[string][]string, error) {
	out := map[string][]string{}
	type seeded struct {
		m    member
		seed int
	}
	var all []seeded
	for i, m := range fleet {
		all = append(all, seeded{m, i})
	}
	for i, m := range inventoryFleet {
		all = append(all, seeded{m, inventorySeedBase + i})
	}
	for _, s := range all {
		m := s.m
		if m.down {
			continue
		}
		d, err := devsim.NewDevice(m.options(s.seed, "unused", "unused"))
		if err != nil {
			return nil, fmt.Errorf("demo device %s: %w", m.name, err)
		}
		for range rotations {
			for _, name := range Rotated {
				d.RotateSecret(name)
			}
		}
		out[m.name] = d.Secrets()
		d.Close()
	}
	return out, nil
}

// Mutate changes the configuration of a few healthy devices every
// interval until ctx ends, so the schedule records changes and diffs.
func (f *Fleet) Mutate(ctx context.Context, interval time.Duration, perRound int) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f.MutateOnce(perRound)
	}
}

// MutateOnce changes the configuration of n healthy devices picked at
// random (a device may be picked twice) and, when LogTo was called, has
// each log the change.
func (f *Fleet) MutateOnce(n int) {
	logged := 0
	for range n {
		if f.change(f.devices[randInt(len(f.devices))]) {
			logged++
		}
	}
	f.log.Info("demo: changed some device configurations", "devices", n, "logged_to_syslog", logged)
}

// Change changes the configuration of the demo device named name (and
// has it log the change, see LogTo); false when no such device runs.
func (f *Fleet) Change(name string) bool {
	for _, d := range f.devices {
		if d.Hostname() == name {
			f.change(d)
			return true
		}
	}
	return false
}

// change mutates d (and one time in three rotates one of its secrets,
// which backupd shows masked) and has it log the change; it reports
// whether a message the syslog listener recognises went out.
func (f *Fleet) change(d *devsim.Device) bool {
	d.Mutate(time.Now().UnixNano())
	if randInt(3) == 0 {
		d.RotateSecret(Rotated[randInt(len(Rotated))])
	}
	if f.logTo == "" {
		return false
	}
	ok, err := d.LogChange(f.logTo)
	if err != nil {
		f.log.Warn("demo: a device could not log its change", "device", d.Hostname(), "err", err)
	}
	return ok
}

func randInt(n int) int {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		return 0
	}
	return int(v.Int64())
}

// credential returns the demo login, creating it with random passwords on
// the first start.
func credential(ctx context.Context, store *db.Store, sealer *secret.Sealer) (password, enable string, id int64, err error) {
	have, err := store.CredentialByName(ctx, CredentialName)
	if err == nil {
		if password, err = sealer.Open(have.Password, secret.PurposePassword); err != nil {
			return "", "", 0, fmt.Errorf("demo credential: %w", err)
		}
		if enable, err = sealer.Open(have.EnablePassword, secret.PurposeEnablePassword); err != nil {
			return "", "", 0, fmt.Errorf("demo credential: %w", err)
		}
		return password, enable, have.ID, nil
	}
	if !errors.Is(err, db.ErrNotFound) {
		return "", "", 0, fmt.Errorf("demo credential: %w", err)
	}
	password, enable = rand.Text(), rand.Text()
	remarks := "Login of the simulated demo devices; passwords are random per data directory."
	c, err := store.CreateCredential(ctx, db.Credential{
		Name: CredentialName, Username: username,
		Password:       sealer.Seal(password, secret.PurposePassword),
		EnablePassword: sealer.Seal(enable, secret.PurposeEnablePassword),
		Remarks:        &remarks,
	})
	if err != nil {
		return "", "", 0, fmt.Errorf("demo credential: %w", err)
	}
	return password, enable, c.ID, nil
}

func groupID(ctx context.Context, store *db.Store, name string, parent *int64) (int64, error) {
	have, err := store.GroupByName(ctx, name)
	if err == nil {
		return have.ID, nil
	}
	if !errors.Is(err, db.ErrNotFound) {
		return 0, fmt.Errorf("demo group %s: %w", name, err)
	}
	g, err := store.CreateGroup(ctx, name, parent)
	if err != nil {
		return 0, fmt.Errorf("demo group %s: %w", name, err)
	}
	return g.ID, nil
}

// upsertDevice registers d, or points the existing device of that name at
// its new port (the simulator picks free ports at every start).
func upsertDevice(ctx context.Context, store *db.Store, d db.Device) (int64, error) {
	have, err := store.DeviceByName(ctx, d.Name)
	if errors.Is(err, db.ErrNotFound) {
		created, err := store.CreateDevice(ctx, d)
		if err != nil {
			return 0, fmt.Errorf("demo device %s: %w", d.Name, err)
		}
		return created.ID, nil
	}
	if err != nil {
		return 0, fmt.Errorf("demo device %s: %w", d.Name, err)
	}
	id := have.ID
	moved, err := store.UpdateDevice(ctx, id, func(cur *db.Device) error {
		cur.Host, cur.Port, cur.LoginMethod = d.Host, d.Port, d.LoginMethod
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("demo device %s: %w", d.Name, err)
	}
	// The simulator listens on a new port each start: the demo vouches
	// for the address it just gave its own device, which would otherwise
	// wait for someone to confirm it before its credential is sent.
	if _, err := store.ConfirmAddress(ctx, id, moved.Address()); err != nil && !errors.Is(err, db.ErrAddressConfirmed) {
		return 0, fmt.Errorf("demo device %s: %w", d.Name, err)
	}
	return id, nil
}

// closedPort returns a loopback port nothing listens on (it was free a
// moment ago; connecting to it is refused).
func closedPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port, nil
}

func ensureSchedule(ctx context.Context, store *db.Store, rootID int64) error {
	if _, err := store.ScheduleByName(ctx, ScheduleName); !errors.Is(err, db.ErrNotFound) {
		return err
	}
	_, err := store.CreateSchedule(ctx, db.Schedule{
		Name: ScheduleName, Cron: "*/5 * * * *", Timezone: "UTC", Target: "groups",
		TargetIDs: []int64{rootID}, SpreadSeconds: 30, Enabled: true,
	})
	if err != nil {
		return fmt.Errorf("demo schedule: %w", err)
	}
	return nil
}
