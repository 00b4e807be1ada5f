package platforms_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/app/collect/driver"
	"backupd/app/platforms"
)

// replacing is valid() restoring the way IOS-XE does, with every field a
// restore can have.
func replacing() platforms.Definition {
	d := valid()
	d.Restore = &platforms.Restore{
		Method:         "ios_configure_replace",
		ConfigEnter:    []string{"configure terminal"},
		ConfigExit:     []string{"end"},
		Save:           []string{"write memory"},
		ApplyError:     `^% Invalid input|Rollback aborted`,
		ConfirmMinutes: &platforms.ConfirmMinutes{Default: 5, Min: 1, Max: 120},
		File:           "flash:backupd-restore.cfg",
		Drop:           []string{`^Building configuration\.\.\.$`},
	}
	return d
}

func TestRestoreDefinitionConverts(t *testing.T) {
	p, err := valid().Platform()
	if err != nil {
		t.Fatal(err)
	}
	if p.CanRestore() {
		t.Fatalf("a definition without restore can restore: %+v", p.Restore)
	}
	p, err = replacing().Platform()
	if err != nil {
		t.Fatal(err)
	}
	r := p.Restore
	if !p.CanRestore() || r.Method != "ios_configure_replace" || r.File != "flash:backupd-restore.cfg" ||
		r.Timer != (driver.ConfirmTimer{Default: 5 * time.Minute, Min: time.Minute, Max: 120 * time.Minute}) ||
		!slices.Equal(r.Save, []string{"write memory"}) || !slices.Equal(r.ConfigEnter, []string{"configure terminal"}) ||
		!slices.Equal(r.ConfigExit, []string{"end"}) || len(r.Drop) != 1 || !r.ApplyError.MatchString("% Invalid input detected") {
		t.Fatalf("converted restore %+v", r)
	}
	// Through the JSON file and back.
	d, err := platforms.Parse(platforms.Marshal(replacing()))
	if err != nil {
		t.Fatal(err)
	}
	if q, err := d.Platform(); err != nil || q.Restore.File != r.File || q.Restore.Timer != r.Timer {
		t.Fatalf("JSON round trip: %+v %v", q.Restore, err)
	}
	// A method without a timer or file needs neither.
	d = valid()
	d.Restore = &platforms.Restore{Method: "frr_vtysh", Save: []string{"write memory"}, ApplyError: `\S`}
	if p, err := d.Platform(); err != nil || p.Restore.Method != "frr_vtysh" {
		t.Fatalf("frr_vtysh: %+v %v", p.Restore, err)
	}
	// A custom platform merges selected lines as classic IOS does.
	d = valid()
	d.Restore = &platforms.Restore{Method: "merge_lines", ConfigEnter: []string{"configure terminal"}, ConfigExit: []string{"end"},
		Save: []string{"write memory"}, ApplyError: `^% (Invalid input|Incomplete command|Ambiguous command)`, Drop: []string{`^!`, `^end$`}}
	if p, err := d.Platform(); err != nil || p.Restore.Method != "merge_lines" || !slices.Equal(p.Restore.ConfigEnter, []string{"configure terminal"}) ||
		!p.Restore.ApplyError.MatchString("% Incomplete command.") || len(p.Restore.Drop) != 2 {
		t.Fatalf("merge_lines: %+v %v", p.Restore, err)
	}
}

// Each bad restore field is refused with its own field name and problem,
// as the rest of a definition is.
func TestRestoreDefinitionValidation(t *testing.T) {
	many := make([]string, platforms.MaxRules+1)
	for i := range many {
		many[i] = "^x$"
	}
	cmds := make([]string, platforms.MaxCommands+1)
	for i := range cmds {
		cmds[i] = "configure"
	}
	r := func(d *platforms.Definition) *platforms.Restore { return d.Restore }
	cases := []struct {
		name    string
		change  func(*platforms.Definition)
		field   string
		problem platforms.Problem
	}{
		{"unknown method", func(d *platforms.Definition) { r(d).Method = "paste_lines" }, "restore.method", platforms.UnknownRestoreMethod},
		{"no method", func(d *platforms.Definition) { r(d).Method = " " }, "restore.method", platforms.Required},
		{"no apply error", func(d *platforms.Definition) { r(d).ApplyError = "" }, "restore.apply_error", platforms.Required},
		{"bad apply error", func(d *platforms.Definition) { r(d).ApplyError = "(%" }, "restore.apply_error", platforms.BadPattern},
		{"apply error matches empty", func(d *platforms.Definition) { r(d).ApplyError = `^\s*$|x` }, "restore.apply_error", platforms.MatchesEmpty},
		{"apply error too long", func(d *platforms.Definition) { r(d).ApplyError = strings.Repeat("a", platforms.MaxPattern+1) }, "restore.apply_error", platforms.TooLong},
		{"too many enter commands", func(d *platforms.Definition) { r(d).ConfigEnter = cmds }, "restore.config_enter", platforms.TooMany},
		{"exit command with control", func(d *platforms.Definition) { r(d).ConfigExit = []string{"end\x04"} }, "restore.config_exit[0]", platforms.NotPrintable},
		{"save command too long", func(d *platforms.Definition) { r(d).Save = []string{"", strings.Repeat("w", platforms.MaxCommand+1)} }, "restore.save[1]", platforms.TooLong},
		{"bad drop rule", func(d *platforms.Definition) { r(d).Drop = []string{"^ok$", "a{2,1}"} }, "restore.drop[1]", platforms.BadPattern},
		{"drop rule matches empty", func(d *platforms.Definition) { r(d).Drop = []string{".*"} }, "restore.drop[0]", platforms.MatchesEmpty},
		{"too many drop rules", func(d *platforms.Definition) { r(d).Drop = many }, "restore.drop", platforms.TooMany},
		{"timer method without minutes", func(d *platforms.Definition) { r(d).ConfirmMinutes = nil }, "restore.confirm_minutes", platforms.Required},
		{"minutes for a method without a timer", func(d *platforms.Definition) {
			d.Restore = &platforms.Restore{Method: "frr_vtysh", ApplyError: `\S`, ConfirmMinutes: &platforms.ConfirmMinutes{Default: 1, Min: 1, Max: 1}}
		}, "restore.confirm_minutes", platforms.NotForMethod},
		{"minimum zero", func(d *platforms.Definition) { r(d).ConfirmMinutes.Min = 0 }, "restore.confirm_minutes.min", platforms.OutOfRange},
		{"maximum too large", func(d *platforms.Definition) { r(d).ConfirmMinutes.Max = platforms.MaxConfirmMinutes + 1 }, "restore.confirm_minutes.max", platforms.OutOfRange},
		{"maximum negative", func(d *platforms.Definition) { r(d).ConfirmMinutes.Max = -5 }, "restore.confirm_minutes.max", platforms.OutOfRange},
		{"default above maximum", func(d *platforms.Definition) { r(d).ConfirmMinutes.Default = 121 }, "restore.confirm_minutes.default", platforms.OutOfRange},
		{"default below minimum", func(d *platforms.Definition) {
			*r(d).ConfirmMinutes = platforms.ConfirmMinutes{Default: 2, Min: 3, Max: 9}
		}, "restore.confirm_minutes.default", platforms.OutOfRange},
		{"file method without a file", func(d *platforms.Definition) { r(d).File = " " }, "restore.file", platforms.Required},
		{"file for a method without one", func(d *platforms.Definition) {
			d.Restore = &platforms.Restore{Method: "junos_commit_confirmed", ApplyError: `error:`, File: "/var/tmp/r.conf",
				ConfirmMinutes: &platforms.ConfirmMinutes{Default: 5, Min: 1, Max: 10}}
		}, "restore.file", platforms.NotForMethod},
		{"merge without configuration mode", func(d *platforms.Definition) {
			d.Restore = &platforms.Restore{Method: "merge_lines", ApplyError: `^% Invalid`, Save: []string{"write memory"}}
		}, "restore.config_enter", platforms.Required},
		{"timer for a merge", func(d *platforms.Definition) {
			d.Restore = &platforms.Restore{Method: "merge_lines", ApplyError: `^% Invalid`, ConfigEnter: []string{"configure terminal"},
				ConfirmMinutes: &platforms.ConfirmMinutes{Default: 5, Min: 1, Max: 10}}
		}, "restore.confirm_minutes", platforms.NotForMethod},
		{"file with a space", func(d *platforms.Definition) { r(d).File = "flash:my restore.cfg" }, "restore.file", platforms.BadFile},
		{"file with a control character", func(d *platforms.Definition) { r(d).File = "flash:r\x00.cfg" }, "restore.file", platforms.BadFile},
		{"file too long", func(d *platforms.Definition) { r(d).File = "flash:" + strings.Repeat("f", platforms.MaxCommand) }, "restore.file", platforms.TooLong},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := replacing()
			c.change(&d)
			_, err := d.Platform()
			var errs platforms.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want Errors", err)
			}
			for _, e := range errs {
				if e.Field == c.field && e.Problem == c.problem {
					if e.Message == "" {
						t.Fatal("no message")
					}
					if c.problem == platforms.UnknownRestoreMethod && !strings.Contains(e.Arg, "frr_vtysh") {
						t.Errorf("the error does not list the methods: %q", e.Arg)
					}
					return
				}
			}
			t.Fatalf("errors %v, want %s %s", errs, c.field, c.problem)
		})
	}
	// A misspelt field of the restore object is refused too.
	doc := strings.Replace(string(platforms.Marshal(replacing())), `"apply_error"`, `"apply_errors"`, 1)
	if _, err := platforms.Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), "apply_errors") {
		t.Errorf("a misspelt restore field parsed: %v", err)
	}
}

// Every built-in platform that restores exports a declaration with which
// its custom copy restores the same way: same method, commands, patterns,
// timer and file.
func TestBuiltinRestoreRoundTrip(t *testing.T) {
	n := 0
	for _, b := range driver.Builtins() {
		d, err := platforms.Parse(platforms.Marshal(platforms.FromPlatform(b)))
		if err != nil {
			t.Fatalf("%s: %v", b.ID, err)
		}
		p, err := d.Platform()
		if err != nil {
			t.Errorf("%s: export does not import: %v", b.ID, err)
			continue
		}
		if !b.CanRestore() {
			if p.CanRestore() || d.Restore != nil {
				t.Errorf("%s cannot restore, its copy can: %+v", b.ID, d.Restore)
			}
			continue
		}
		n++
		if got, want := restoreKey(p.Restore), restoreKey(b.Restore); got != want {
			t.Errorf("%s: the copy restores differently:\n got %s\nwant %s", b.ID, got, want)
		}
	}
	if n < 4 {
		t.Fatalf("only %d built-in platforms restore", n)
	}
}

// restoreKey is everything a restore method reads from a declaration.
func restoreKey(r driver.Restore) string {
	re := ""
	if r.ApplyError != nil {
		re = r.ApplyError.String()
	}
	return strings.Join([]string{r.Method, strings.Join(r.ConfigEnter, "|"), strings.Join(r.ConfigExit, "|"),
		strings.Join(r.Save, "|"), re, r.Timer.Default.String(), r.Timer.Min.String(), r.Timer.Max.String(),
		r.File, strings.Join(r.Drop, "|")}, " ¶ ")
}
