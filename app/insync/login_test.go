package insync

import (
	"slices"
	"strings"
	"testing"

	"backupd/db"
)

// TestPlanLoginFromRecord plans records carrying Oxidized's input,
// port, ssh_port and telnet_port: the record's values win over the
// source's defaults, a bad one skips that device alone with its
// sentence, and a changed one is an update naming the field.
func TestPlanLoginFromRecord(t *testing.T) {
	src := db.InventorySource{ID: 1, Name: "oxi"}
	cfg := SourceConfig{Defaults: Defaults{LoginMethod: "telnet", Port: map[string]int{"ssh": 2222, "telnet": 2323}}}
	rec := func(name string, vars map[string]string) Record {
		return Record{Key: name, Name: name, Host: "192.0.2.1", Platform: "ios", Vars: vars}
	}
	for _, tc := range []struct {
		name   string
		vars   map[string]string
		method string
		port   int
		skip   string // the skip line's reason holds it; "" for a create
	}{
		{"defaults", nil, "telnet", 2323, ""},
		{"input ssh", map[string]string{"input": "ssh"}, "ssh", 2222, ""},
		{"input list, first wins", map[string]string{"input": "SSH, telnet"}, "ssh", 2222, ""},
		{"ssh_port", map[string]string{"input": "ssh", "ssh_port": "8022", "telnet_port": "99"}, "ssh", 8022, ""},
		{"telnet_port by the default method", map[string]string{"ssh_port": "8022", "telnet_port": "9023"}, "telnet", 9023, ""},
		{"port wins over ssh_port", map[string]string{"input": "ssh", "port": "830", "ssh_port": "8022"}, "ssh", 830, ""},
		{"unused bad port var", map[string]string{"input": "ssh", "telnet_port": "x"}, "ssh", 2222, ""},
		{"unknown method", map[string]string{"input": "scp, ssh"}, "", 0, `login method "scp" (input "scp, ssh"): backupd logs in with ssh or telnet`},
		{"port not a number", map[string]string{"input": "ssh", "ssh_port": "22a"}, "", 0, `ssh_port "22a" is not a port: a number from 1 to 65535`},
		{"port out of range", map[string]string{"port": "70000"}, "", 0, `port "70000" is not a port`},
		{"port zero", map[string]string{"telnet_port": "0"}, "", 0, `telnet_port "0" is not a port`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A good record beside it: a bad one skips itself alone.
			rep, changes := Plan(src, cfg, []Record{rec("r1", tc.vars), rec("r2", nil)}, State{})
			if len(rep.Lines) != 2 || rep.Lines[1].Action != ActCreate {
				t.Fatalf("lines %v: want r1's line and r2 created", rep.Lines)
			}
			l := rep.Lines[0]
			if tc.skip != "" {
				if l.Action != ActSkip || !strings.Contains(l.Reason.String(), tc.skip) {
					t.Fatalf("line %q, want a skip saying %q", l, tc.skip)
				}
				if len(changes) != 1 || changes[0].Key != "r2" {
					t.Fatalf("changes %+v: want r2's create only", changes)
				}
				return
			}
			if l.Action != ActCreate || len(changes) != 2 {
				t.Fatalf("line %q, %d changes: want a create", l, len(changes))
			}
			if d := changes[0].Device; d.LoginMethod != tc.method || d.Port != tc.port {
				t.Errorf("created %s:%d, want %s:%d", d.LoginMethod, d.Port, tc.method, tc.port)
			}
		})
	}

	// The source's device was ssh:22; the record now says telnet on
	// 2323: an update naming both fields, with what it must still find.
	cur := db.SyncedDevice{DeviceID: 7, Key: "r1", Enabled: true,
		Device: db.InventoryDevice{Name: "r1", Host: "192.0.2.1", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh"}}
	view := db.InventoryView{Devices: []db.InventoryViewDevice{{ID: 7, Name: "r1", SourceID: &src.ID, Key: &cur.Key}}}
	rep, changes := Plan(src, SourceConfig{}, []Record{rec("r1", map[string]string{"input": "telnet", "port": "2323"})},
		State{Synced: []db.SyncedDevice{cur}, View: view})
	if len(rep.Lines) != 1 || rep.Lines[0].String() != "update r1 (key r1): port, login_method" {
		t.Fatalf("lines %v, want one update naming port and login_method", rep.Lines)
	}
	c := changes[0]
	if c.Kind != db.InventoryUpdate || !slices.Equal(c.Fields, []string{"port", "login_method"}) ||
		c.Device.Port != 2323 || c.Device.LoginMethod != "telnet" || c.Was.Port != 22 || c.Was.LoginMethod != "ssh" {
		t.Errorf("change %+v", c)
	}
	// Unchanged when the record says what the device has.
	rep, _ = Plan(src, SourceConfig{}, []Record{rec("r1", map[string]string{"input": "ssh, telnet", "ssh_port": "22"})},
		State{Synced: []db.SyncedDevice{cur}, View: view})
	if len(rep.Lines) != 1 || rep.Lines[0].Action != ActLeave {
		t.Errorf("lines %v, want the device left unchanged", rep.Lines)
	}
}
