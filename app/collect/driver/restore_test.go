package driver

import (
	"strings"
	"testing"
	"time"
)

// A restore declaration a method could not run with is refused when the
// platform is compiled, built-in or custom: each case names what is
// missing or wrong.
func TestRestoreCheck(t *testing.T) {
	timer := ConfirmTimer{Default: 5 * time.Minute, Min: time.Minute, Max: time.Hour}
	for _, c := range []struct {
		name string
		r    Restore
		want string
	}{
		{"commands without a method", Restore{Save: []string{"write memory"}}, "without a method"},
		{"unknown method", Restore{Method: "telnet_paste", ApplyError: re(`^%`)}, "unknown method"},
		{"no refusal pattern", Restore{Method: "frr_vtysh"}, "refusals"},
		{"refusal pattern matches an empty line", Restore{Method: "frr_vtysh", ApplyError: re(`^\s*$`)}, "empty line"},
		{"timer method without a timer", Restore{Method: "junos_commit_confirmed", ApplyError: re(`error:`)}, "confirm timer"},
		{"timer out of order", Restore{Method: "junos_commit_confirmed", ApplyError: re(`error:`),
			Timer: ConfirmTimer{Default: time.Hour, Min: time.Minute, Max: 5 * time.Minute}}, "minimum ≤ default ≤ maximum"},
		{"file method without a file", Restore{Method: "ios_configure_replace", ApplyError: re(`^%`), Timer: timer}, "needs the file"},
		{"merge without configuration mode", Restore{Method: "merge_lines", ApplyError: re(`^%`)}, "enters configuration mode"},
		{"bad line to drop", Restore{Method: "frr_vtysh", ApplyError: re(`\S`), Drop: []string{"(("}}, "line to drop"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.r.check()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("check: %v, want %q", err, c.want)
			}
		})
	}
	for _, ok := range []Restore{
		{},
		{Method: "frr_vtysh", ApplyError: re(`\S`), Save: []string{"write memory"}},
		{Method: "ios_configure_replace", ApplyError: re(`^%`), Timer: timer, File: "flash:r.cfg"},
		{Method: "merge_lines", ApplyError: re(`^%`), ConfigEnter: []string{"configure terminal"}, ConfigExit: []string{"end"}},
	} {
		if err := ok.check(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

// The methods that arm a timer or copy a file say so: the custom
// platform format requires the declaration's confirm minutes and file
// from them.
func TestRestoreMethodNeeds(t *testing.T) {
	for id, want := range map[string][2]bool{
		"frr_vtysh": {false, false}, "junos_commit_confirmed": {true, false},
		"ios_configure_replace": {true, true}, "vyos_commit_confirm": {true, false},
	} {
		m, ok := LookupRestoreMethod(id)
		if !ok || m.Timer != want[0] || m.File != want[1] {
			t.Errorf("%s: %+v, want timer %v file %v", id, m, want[0], want[1])
		}
	}
	for _, p := range Builtins() {
		if m, ok := LookupRestoreMethod(p.Restore.Method); ok && (m.Timer != (p.Restore.Timer != ConfirmTimer{}) || m.File != (p.Restore.File != "")) {
			t.Errorf("%s declares a timer or file its method %s does not use, or lacks one it needs", p.ID, m.ID)
		}
	}
}
