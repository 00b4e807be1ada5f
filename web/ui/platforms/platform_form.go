package platforms

import (
	"net/http"
	"strconv"
	"strings"

	"backupd/app/collect/driver"
	custom "backupd/app/platforms"
	"backupd/db"
	"backupd/web/ui/core"
)

// The platform form: the definition's fields as typed, and the device a
// test runs against.

// platformFields are the form's values as typed.
type platformFields struct {
	ID, Name, Vendor, Notes                  string
	SSH, Telnet, Exec                        bool
	Prompt, PromptLines, Pager, PagerAnswer  string
	PagingOff, DefaultCommands, Strip, Noise string
	// Secrets are the secret rules, a line each: "name: expression", or
	// "name: begin ... end" for a block.
	Secrets                                         string
	EnableCommand, EnablePrompt, Privileged, Failed string
	CommandError                                    string
	PreLogin                                        []custom.Answer
	// Restore is the restore section: the method ("" = not supported)
	// and its fields as typed.
	Restore restoreFields
}

// restoreFields are the restore section's values as typed; commands and
// drop rules a line each, the confirm minutes as digits.
type restoreFields struct {
	Method, ConfigEnter, ConfigExit, Save, ApplyError string
	ConfirmDefault, ConfirmMin, ConfirmMax            string
	File, Drop                                        string
}

// restoreChoice is a method the form offers; Timer and File tell the
// page's script which fields the method reads.
type restoreChoice struct {
	ID, Key     string
	Timer, File bool
}

// platformTarget is the device a test runs against, as typed (never a
// password).
type platformTarget struct {
	DeviceID                       int64
	Host, Port, Method, Username   string
	typedPassword, typedEnablePass string
}

// platformDevice is a device the test can run against.
type platformDevice struct {
	ID       int64
	Name     string
	Selected bool
}

type platformForm struct {
	// Stored is the ID of the stored platform ("" for a new one).
	Stored             string
	Heading            string
	Editable           bool
	F                  platformFields
	Errors             []platformMsg
	Notice             string
	Devices            int
	Templates          int
	Target             platformTarget
	DeviceChoices      []platformDevice
	CanTestDevice      bool
	Test               *platformTestResult
	Methods            []string
	RestoreMethods     []restoreChoice
	MaxRules, MaxCmds  int
	MaxPattern, MaxDoc int
}

func fieldsOfDefinition(d custom.Definition) platformFields {
	f := platformFields{ID: d.ID, Name: d.Name, Vendor: d.Vendor, Notes: d.Notes, Exec: d.Exec,
		Prompt: d.Prompt, PromptLines: d.PromptLines, Pager: d.Pager, PagerAnswer: d.PagerAnswer,
		PagingOff: strings.Join(d.PagingOff, "\n"), DefaultCommands: strings.Join(d.DefaultCommands, "\n"),
		Strip: strings.Join(d.Strip, "\n"), Noise: strings.Join(d.Noise, "\n"), CommandError: d.CommandError,
		PreLogin: d.PreLogin, Secrets: secretsText(d.Secrets)}
	f.SSH, f.Telnet = len(d.Transports) == 0, len(d.Transports) == 0
	for _, t := range d.Transports {
		switch strings.ToLower(t) {
		case "ssh":
			f.SSH = true
		case "telnet":
			f.Telnet = true
		}
	}
	if e := d.Enable; e != nil {
		f.EnableCommand, f.EnablePrompt, f.Privileged, f.Failed = e.Command, e.PasswordPrompt, e.Privileged, e.Failed
	}
	if r := d.Restore; r != nil {
		f.Restore = restoreFields{Method: r.Method, ConfigEnter: strings.Join(r.ConfigEnter, "\n"),
			ConfigExit: strings.Join(r.ConfigExit, "\n"), Save: strings.Join(r.Save, "\n"), ApplyError: r.ApplyError,
			File: r.File, Drop: strings.Join(r.Drop, "\n")}
		if c := r.ConfirmMinutes; c != nil {
			f.Restore.ConfirmDefault, f.Restore.ConfirmMin, f.Restore.ConfirmMax = strconv.Itoa(c.Default), strconv.Itoa(c.Min), strconv.Itoa(c.Max)
		}
	}
	return f
}

func (f platformFields) definition() custom.Definition {
	d := custom.Definition{Schema: custom.Schema, ID: strings.TrimSpace(f.ID), Name: f.Name, Vendor: f.Vendor,
		Notes: f.Notes, Exec: f.Exec, Prompt: f.Prompt, PromptLines: f.PromptLines, Pager: f.Pager,
		PagerAnswer: f.PagerAnswer, PagingOff: formLines(f.PagingOff), DefaultCommands: formLines(f.DefaultCommands),
		Strip: formLines(f.Strip), Noise: formLines(f.Noise), CommandError: f.CommandError}
	d.Secrets, _ = secretsOfText(f.Secrets)
	if f.SSH != f.Telnet {
		if f.SSH {
			d.Transports = []string{"ssh"}
		} else {
			d.Transports = []string{"telnet"}
		}
	}
	if strings.TrimSpace(f.EnableCommand) != "" {
		d.Enable = &custom.Enable{Command: f.EnableCommand, PasswordPrompt: f.EnablePrompt, Privileged: f.Privileged, Failed: f.Failed}
	}
	for _, a := range f.PreLogin {
		if a.Match != "" || a.Send != "" {
			d.PreLogin = append(d.PreLogin, a)
		}
	}
	d.Restore = f.Restore.definition()
	return d
}

// definition is the restore object of the form: nil for "not
// supported". As the page's script hides them, the confirm minutes and
// the file are read only for a method that uses them (a method the
// registry does not know keeps them, for the checks to explain).
func (f restoreFields) definition() *custom.Restore {
	method := strings.TrimSpace(f.Method)
	if method == "" {
		return nil
	}
	r := &custom.Restore{Method: method, ConfigEnter: formLines(f.ConfigEnter), ConfigExit: formLines(f.ConfigExit),
		Save: formLines(f.Save), ApplyError: f.ApplyError, Drop: formLines(f.Drop)}
	m, known := driver.LookupRestoreMethod(method)
	if !known || m.File {
		r.File = strings.TrimSpace(f.File)
	}
	if (!known || m.Timer) && strings.TrimSpace(f.ConfirmDefault+f.ConfirmMin+f.ConfirmMax) != "" {
		// Digits were checked by readPlatformFields; blanks are 0, which
		// the checks refuse by name.
		num := func(s string) int { n, _ := strconv.Atoi(strings.TrimSpace(s)); return n }
		r.ConfirmMinutes = &custom.ConfirmMinutes{Default: num(f.ConfirmDefault), Min: num(f.ConfirmMin), Max: num(f.ConfirmMax)}
	}
	return r
}

// restoreMethodKeys name the restore methods in the form's list; a
// method without one shows as its ID.
var restoreMethodKeys = map[string]string{
	"frr_vtysh":              keyPlatRestoreFRR,
	"junos_commit_confirmed": keyPlatRestoreJunos,
	"ios_configure_replace":  keyPlatRestoreIOS,
	"vyos_commit_confirm":    keyPlatRestoreVyOS,
	"eos_session":            keyPlatRestoreEOS,
	"routeros_reset_import":  keyPlatRestoreROS,
}

// restoreChoices are the methods the form offers: every one the
// registry has, and the definition's own if the registry does not know
// it, so that saving the form never loses it silently.
func restoreChoices(current string) []restoreChoice {
	var out []restoreChoice
	for _, m := range driver.RestoreMethods {
		out = append(out, restoreChoice{ID: m.ID, Key: restoreMethodKeys[m.ID], Timer: m.Timer, File: m.File})
	}
	if current = strings.TrimSpace(current); current != "" {
		if _, ok := driver.LookupRestoreMethod(current); !ok {
			out = append(out, restoreChoice{ID: current, Timer: true, File: true})
		}
	}
	return out
}

// secretBlock separates a block rule's begin and end on its line.
const secretBlock = " ... "

// secretsText writes secret rules as the form's lines.
func secretsText(rules []custom.Secret) string {
	lines := make([]string, 0, len(rules))
	for _, r := range rules {
		if r.Match != "" {
			lines = append(lines, r.Name+": "+r.Match)
		} else {
			lines = append(lines, r.Name+": "+r.Begin+secretBlock+r.End)
		}
	}
	return strings.Join(lines, "\n")
}

// secretsOfText reads the form's secret rules; bad are the lines (from
// 1) without a name.
func secretsOfText(text string) (rules []custom.Secret, bad []int) {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n++
		name, expr, ok := strings.Cut(strings.TrimRight(l, " \t\r"), ": ")
		if !ok || strings.TrimSpace(name) == "" {
			bad = append(bad, n)
			continue
		}
		r := custom.Secret{Name: strings.TrimSpace(name)}
		if begin, end, block := strings.Cut(expr, secretBlock); block {
			r.Begin, r.End = begin, end
		} else {
			r.Match = expr
		}
		rules = append(rules, r)
	}
	return rules, bad
}

// formLines splits a textarea into its non-blank lines.
func formLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, " \t"))
		}
	}
	return out
}

// readPlatformFields reads the posted form. Patterns keep their spaces
// (a space can matter in one); other fields are trimmed.
func readPlatformFields(r *http.Request) (platformFields, []platformMsg) {
	var errs []platformMsg
	field := func(name string) string {
		v, fits := core.Field(r, name, platformFieldMax)
		if !fits {
			errs = append(errs, platformMsg{Key: keyPlatErrFieldTooLong, Args: []any{name, platformFieldMax}})
			return ""
		}
		return v
	}
	trimmed := func(name string) string { return strings.TrimSpace(field(name)) }
	f := platformFields{
		ID: trimmed("id"), Name: trimmed("name"), Vendor: trimmed("vendor"), Notes: trimmed("notes"),
		SSH: core.Checked(r, "ssh"), Telnet: core.Checked(r, "telnet"), Exec: core.Checked(r, "exec"),
		Prompt: field("prompt"), PromptLines: field("prompt_lines"), Pager: field("pager"),
		PagerAnswer: field("pager_answer"), PagingOff: field("paging_off"), DefaultCommands: field("default_commands"),
		Strip: field("strip"), Noise: field("noise"), Secrets: field("secrets"), EnableCommand: trimmed("enable_command"),
		EnablePrompt: field("enable_password_prompt"), Privileged: field("enable_privileged"),
		Failed: field("enable_failed"), CommandError: field("command_error"),
	}
	f.Restore = restoreFields{Method: trimmed("restore_method"), ConfigEnter: field("restore_config_enter"),
		ConfigExit: field("restore_config_exit"), Save: field("restore_save"), ApplyError: field("restore_apply_error"),
		ConfirmDefault: trimmed("restore_confirm_default"), ConfirmMin: trimmed("restore_confirm_min"),
		ConfirmMax: trimmed("restore_confirm_max"), File: trimmed("restore_file"), Drop: field("restore_drop")}
	if f.Restore.Method != "" {
		for _, n := range []struct{ name, v string }{{"default", f.Restore.ConfirmDefault}, {"min", f.Restore.ConfirmMin}, {"max", f.Restore.ConfirmMax}} {
			if _, err := strconv.Atoi(n.v); n.v != "" && err != nil {
				errs = append(errs, platformMsg{Key: keyPlatErrNotANumber, Args: []any{"restore.confirm_minutes." + n.name}})
			}
		}
	}
	if _, bad := secretsOfText(f.Secrets); len(bad) > 0 {
		errs = append(errs, platformMsg{Key: keyPlatErrSecretLine, Args: []any{bad[0]}})
	}
	matches, sends := r.PostForm["pre_login_match"], r.PostForm["pre_login_send"]
	for i := 0; i < len(matches) && i < len(sends) && i <= custom.MaxRules; i++ {
		f.PreLogin = append(f.PreLogin, custom.Answer{Match: matches[i], Send: sends[i]})
	}
	return f, errs
}

func (u *handlers) platformNewForm(w http.ResponseWriter, r *http.Request) error {
	d := custom.Definition{Schema: custom.Schema, PagerAnswer: " "}
	if from, ok := driver.Lookup(r.URL.Query().Get("from")); ok {
		d = custom.FromPlatform(from)
	}
	p := platformForm{Editable: true, F: fieldsOfDefinition(d)}
	if len(d.Transports) == 0 {
		p.F.SSH, p.F.Telnet = true, true
	}
	return u.renderPlatformForm(w, r, http.StatusOK, p)
}

func (u *handlers) renderPlatformForm(w http.ResponseWriter, r *http.Request, status int, p platformForm) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	p.Methods = inventoryMethods()
	p.RestoreMethods = restoreChoices(p.F.Restore.Method)
	p.MaxRules, p.MaxCmds, p.MaxPattern, p.MaxDoc = custom.MaxRules, custom.MaxCommands, custom.MaxPattern, custom.MaxDocument
	// Blank pre-login rows to add answers to.
	for i := 0; i < platformPreLoginRows && len(p.F.PreLogin) < custom.MaxRules; i++ {
		p.F.PreLogin = append(p.F.PreLogin, custom.Answer{})
	}
	if p.Target.Method == "" {
		p.Target.Method = "ssh"
	}
	p.CanTestDevice = p.Editable && s.Can("backups.create")
	if p.CanTestDevice {
		devices, _, err := u.Store.ListDevices(ctx, s.Scope(), db.DeviceFilter{}, platformDeviceChoices, 0)
		if err != nil {
			return err
		}
		for _, d := range devices {
			p.DeviceChoices = append(p.DeviceChoices, platformDevice{ID: d.ID, Name: d.Name, Selected: d.ID == p.Target.DeviceID})
		}
	}
	title := keyPlatTitleNew
	if p.Stored != "" {
		title = keyPlatTitleEdit
	}
	return u.Render(w, r, status, "platforms_form.html", title, p)
}

func inventoryMethods() []string { return []string{"ssh", "telnet"} }

// storedPlatform loads the custom platform of the path.
func (u *handlers) storedPlatform(r *http.Request) (db.CustomPlatform, custom.Definition, error) {
	id := r.PathValue("id")
	if !custom.IDPattern.MatchString(id) {
		return db.CustomPlatform{}, custom.Definition{}, db.ErrNotFound
	}
	row, err := u.Store.GetCustomPlatform(r.Context(), id)
	if err != nil {
		return row, custom.Definition{}, err
	}
	d, _ := custom.Parse([]byte(row.Definition))
	d.ID = row.PlatformID
	return row, d, nil
}

func (u *handlers) platformDetail(w http.ResponseWriter, r *http.Request) error {
	row, d, err := u.storedPlatform(r)
	if err != nil {
		return err
	}
	p := platformForm{Stored: row.PlatformID, Heading: d.Name, Editable: core.SessionOf(r).Can("settings.update"),
		F: fieldsOfDefinition(d), Notice: core.Notice(r, platformNotices)}
	if p.Heading == "" {
		p.Heading = row.PlatformID
	}
	if _, err := d.Platform(); err != nil {
		p.Errors = definitionMessages(err)
	}
	if p.Devices, p.Templates, err = u.Store.PlatformUse(r.Context(), row.PlatformID); err != nil {
		return err
	}
	return u.renderPlatformForm(w, r, http.StatusOK, p)
}
