package driver

import (
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Restore is how a platform puts a stored configuration back on a
// device: the method (the Go code that drives it lives in app/restore)
// and the commands, patterns and limits that method needs on this
// platform. The zero value means the platform cannot restore: backupd
// then says so, and never half-restores.
type Restore struct {
	// Method is one of RestoreMethods' IDs; "" means not supported.
	Method string
	// ConfigEnter enters configuration mode, ConfigExit leaves it, in
	// order ("configure terminal"; "end").
	ConfigEnter, ConfigExit []string
	// Save makes the running configuration the one the device starts
	// with ("write memory"); none when applying already saves it.
	Save []string
	// ApplyError matches a line by which the device refuses a line of
	// configuration. Unlike Dialogue.CommandError it is looked for in
	// every answer, however long: while writing, one refusal is enough.
	ApplyError *regexp.Regexp
	// Timer is the device's own undo timer: a change applied with it is
	// undone by the device unless confirmed in time. Zero where the
	// platform has none.
	Timer ConfirmTimer
	// File is where a method that applies from a file writes the
	// version first, over SCP ("flash:backupd-restore.cfg").
	File string
	// Drop are lines of a stored configuration that are about the
	// command that showed it, not configuration ("Building
	// configuration..."): the device would refuse them. Anchored.
	Drop []string
	// Notes says what an operator should know: privileges the account
	// needs, features the device must have on.
	Notes string
}

// ConfirmTimer bounds a platform's confirm-or-undo timer.
type ConfirmTimer struct {
	Default, Min, Max time.Duration
}

// RestoreMethod describes one way of putting a configuration back.
type RestoreMethod struct {
	ID string
	// Replaces is true when the device ends on exactly the stored
	// configuration (lines it lacks are removed); false for a merge,
	// which only sends lines.
	Replaces bool
	// Timer is true when the method arms the device's own undo timer:
	// a platform restoring with it must declare Restore.Timer.
	Timer bool
	// File is true when the method first copies the version to a file
	// on the device: a platform restoring with it must declare
	// Restore.File.
	File bool
	// ConfigMode is true when the method types lines in the device's
	// configuration mode: a platform restoring with it must declare
	// Restore.ConfigEnter.
	ConfigMode bool
	// Summary is one line for the method table of the manual.
	Summary string
}

// RestoreMethods are the methods the restore engine implements; a
// platform may only name one of these.
var RestoreMethods = []RestoreMethod{
	{ID: "vyos_commit_confirm", Replaces: true, Timer: true,
		Summary: "save; configure; delete every top-level node and set every command of the version; commit-confirm N " +
			"(the device reboots into the saved configuration unless confirmed); confirm and save once a backup shows the version"},
	{ID: "ios_configure_replace", Replaces: true, Timer: true, File: true,
		Summary: "the version is copied to flash over SCP; configure replace FILE force time N (the device reverts unless confirmed); " +
			"configure confirm and write memory once a backup shows the version, else configure revert now"},
	{ID: "junos_commit_confirmed", Replaces: true, Timer: true,
		Summary: "configure exclusive; load override terminal; commit check; commit confirmed N (the device undoes it unless confirmed); " +
			"commit once a backup shows the version, else the configuration before is loaded and committed"},
	{ID: "eos_session", Replaces: true, Timer: true,
		Summary: "configure session NAME; rollback clean-config; the version's lines; commit timer hh:mm:ss " +
			"(EOS rolls back unless confirmed); configure session NAME commit and write memory once a backup shows the version, " +
			"else configure session NAME abort"},
	{ID: "routeros_reset_import", Replaces: true, File: true,
		Summary: "REBOOTS THE DEVICE: the version is copied over SCP as an .rsc script and checked with /import verbose=yes dry-run; " +
			"/system reset-configuration no-defaults=yes skip-backup=yes keep-users=yes run-after-reset=FILE clears the router and runs it at boot; " +
			"backupd logs in again once the router is back; if a backup then differs, the export from before goes back the same way (a second reboot)"},
	{ID: "frr_vtysh", Replaces: true,
		Summary: "vtysh: the lines that differ are removed (\"no …\") and added in configuration mode, " +
			"again until the running configuration equals the version (at most 3 passes), then saved with \"write memory\""},
	{ID: "merge_lines", ConfigMode: true,
		Summary: "NOT A FULL REPLACE: only the lines a person selected from the version are typed in configuration mode, " +
			"each after its parent lines (by indentation); it stops at the first line the device refuses, and saves only when every line went in. " +
			"Lines not selected, and lines the device has that the version lacks, stay as they are; nothing is undone on a failure"},
}

// LookupRestoreMethod returns the method with id.
func LookupRestoreMethod(id string) (RestoreMethod, bool) {
	i := slices.IndexFunc(RestoreMethods, func(m RestoreMethod) bool { return m.ID == id })
	if i < 0 {
		return RestoreMethod{}, false
	}
	return RestoreMethods[i], true
}

// check validates a platform's restore declaration.
func (r Restore) check() error {
	if r.Method == "" {
		if len(r.ConfigEnter)+len(r.ConfigExit)+len(r.Save)+len(r.Drop) > 0 || r.ApplyError != nil || r.Timer != (ConfirmTimer{}) || r.File != "" {
			return fmt.Errorf("restore: commands or patterns given without a method")
		}
		return nil
	}
	m, ok := LookupRestoreMethod(r.Method)
	if !ok {
		return fmt.Errorf("restore: unknown method %q", r.Method)
	}
	if r.ApplyError == nil {
		return fmt.Errorf("restore: method %s needs the pattern of the device's refusals", r.Method)
	}
	if r.ApplyError.MatchString("") {
		// Every empty line of an answer would be a refusal.
		return fmt.Errorf("restore: the pattern of the device's refusals matches an empty line")
	}
	if m.Timer && r.Timer == (ConfirmTimer{}) {
		return fmt.Errorf("restore: method %s needs the device's confirm timer", r.Method)
	}
	if m.File && r.File == "" {
		return fmt.Errorf("restore: method %s needs the file the version is copied to", r.Method)
	}
	if m.ConfigMode && len(r.ConfigEnter) == 0 {
		return fmt.Errorf("restore: method %s needs the command that enters configuration mode", r.Method)
	}
	if t := r.Timer; t != (ConfirmTimer{}) && (t.Min <= 0 || t.Min > t.Default || t.Default > t.Max) {
		return fmt.Errorf("restore: the confirm timer needs 0 < minimum ≤ default ≤ maximum")
	}
	for _, d := range r.Drop {
		if _, err := regexp.Compile(d); err != nil {
			return fmt.Errorf("restore: line to drop %q: %w", d, err)
		}
	}
	return nil
}

// CanRestore reports whether the platform can put a configuration back.
func (p Platform) CanRestore() bool { return p.Restore.Method != "" }
