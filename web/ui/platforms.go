package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/collect/driver"
	"backupd/app/netguard"
	"backupd/app/platforms"
	"backupd/db"
	"backupd/web/ui/core"
)

// Platforms: the built-in platforms (read only) and the ones an
// administrator defines (app/platforms), with import and export of the
// JSON definition and a "Test against a device" that runs a real session
// with the unsaved form and shows the captured text and the transcript,
// passwords masked. Reading needs settings.view, every change and the test
// settings.update (a platform is a setting of the appliance, as the
// notification channels are); testing against a stored device also needs
// backups.create and the device in the user's scope, since it logs in with
// the device's credential.

const (
	// platformFieldMax bounds one form field; the definition's own bounds
	// (app/platforms) apply after.
	platformFieldMax = platforms.MaxDocument
	// platformPreLoginRows is how many blank pre-login rows the form adds.
	platformPreLoginRows = 2
	// platformDeviceChoices bounds the devices the test offers by name.
	platformDeviceChoices = 500
	// Bounds of a test session: it must answer while the page waits.
	platformTestJob       = 90 * time.Second
	platformTestMaxOutput = 4 << 20
	platformTestShown     = 256 << 10 // bytes of captured text shown
	platformTestLog       = 128 << 10 // bytes of transcript kept
	// platformTests bounds the tests running at once.
	platformTests = 2
)

// platformTestSlots bounds concurrent tests (each holds a connection and
// up to platformTestMaxOutput of output).
var platformTestSlots = make(chan struct{}, platformTests)

func (u *UI) mountPlatforms(mux *http.ServeMux) {
	u.MountPage(mux, "GET "+core.PathPlatforms, "settings.view", u.platformsList)
	mux.Handle("GET /platforms/new", u.Page("settings.update", u.platformNewForm))
	mux.Handle("POST /platforms", u.Page("settings.update", u.platformCreate))
	mux.Handle("POST /platforms/import", u.Page("settings.update", u.platformImport))
	mux.Handle("GET /platforms/{id}", u.Page("settings.view", u.platformDetail))
	mux.Handle("GET /platforms/{id}/export", u.Page("settings.view", u.platformExport))
	mux.Handle("POST /platforms/{id}", u.Page("settings.update", u.platformUpdate))
	mux.Handle("POST /platforms/{id}/delete", u.Page("settings.update", u.platformDelete))
}

var platformNotices = map[string]string{
	"created":  keyPlatCreated,
	"updated":  keyPlatUpdated,
	"deleted":  keyPlatDeleted,
	"imported": keyPlatImported,
}

// platformProblemKeys are the messages of a definition's problems; each
// takes the field's name, and those in platformProblemArg a detail too.
var platformProblemKeys = map[platforms.Problem]string{
	platforms.BadDocument:      keyPlatErrBadDocument,
	platforms.TooLarge:         keyPlatErrTooLarge,
	platforms.BadSchema:        keyPlatErrBadSchema,
	platforms.Required:         keyPlatErrRequired,
	platforms.BadID:            keyPlatErrBadID,
	platforms.BuiltinID:        keyPlatErrBuiltinID,
	platforms.TooLong:          keyPlatErrTooLong,
	platforms.TooMany:          keyPlatErrTooManyRules,
	platforms.BadPattern:       keyPlatErrBadPattern,
	platforms.MatchesEmpty:     keyPlatErrMatchesEmpty,
	platforms.NotPrintable:     keyPlatErrNotPrintable,
	platforms.UnknownTransport: keyPlatErrUnknownTransport,
	platforms.ExecNeedsSSH:     keyPlatErrExecNeedsSSH,
}

var platformProblemArg = map[platforms.Problem]bool{
	platforms.BadDocument: true, platforms.TooLarge: true, platforms.BadSchema: true,
	platforms.TooLong: true, platforms.TooMany: true, platforms.BadPattern: true,
	platforms.UnknownTransport: true,
}

// platformMsg is a message key with its arguments.
type platformMsg struct {
	Key  string
	Args []any
}

// platformRow is one platform of the list; Aliases are the names imports
// map to it, comma-separated.
type platformRow struct {
	ID, Name, Vendor, Transports, Defaults, Notes, Aliases string
	Devices, Templates                                     int
	Broken                                                 *platformMsg
}

type platformsPage struct {
	Builtins []platformRow
	Custom   []platformRow
	Notice   string
	Errors   []platformMsg
	Max      int
}

func platformRowOf(p driver.Platform) platformRow {
	return platformRow{ID: p.ID, Name: p.Name, Vendor: p.Vendor, Transports: strings.Join(p.TransportList(), ", "),
		Defaults: p.DefaultCommands, Notes: p.Notes, Aliases: strings.Join(p.Aliases, ", ")}
}

func (u *UI) platformsList(w http.ResponseWriter, r *http.Request) error {
	// What the command line imported since this process started is
	// loaded here too (a definition that does not load shows as such in
	// the list).
	_ = platforms.LoadStore(r.Context(), u.Store)
	return u.renderPlatforms(w, r, http.StatusOK, nil)
}

func (u *UI) renderPlatforms(w http.ResponseWriter, r *http.Request, status int, errs []platformMsg) error {
	ctx := r.Context()
	p := platformsPage{Notice: core.Notice(r, platformNotices), Errors: errs, Max: db.MaxCustomPlatforms}
	for _, b := range driver.Builtins() {
		p.Builtins = append(p.Builtins, platformRowOf(b))
	}
	stored, err := platforms.ListStored(ctx, u.Store)
	if err != nil {
		return err
	}
	for _, s := range stored {
		row := platformRow{ID: s.PlatformID, Name: s.Def.Name, Vendor: s.Def.Vendor, Notes: s.Def.Notes}
		if pl, err := s.Def.Platform(); err == nil {
			row = platformRowOf(pl)
		} else {
			row.Broken = &platformMsg{Key: keyPlatBroken}
		}
		if row.Devices, row.Templates, err = u.Store.PlatformUse(ctx, s.PlatformID); err != nil {
			return err
		}
		p.Custom = append(p.Custom, row)
	}
	return u.Render(w, r, status, "platforms.html", keyPlatTitle, p)
}

// platformFields are the form's values as typed.
type platformFields struct {
	ID, Name, Vendor, Notes                         string
	SSH, Telnet, Exec                               bool
	Prompt, PromptLines, Pager, PagerAnswer         string
	PagingOff, DefaultCommands, Strip, Noise        string
	EnableCommand, EnablePrompt, Privileged, Failed string
	CommandError                                    string
	PreLogin                                        []platforms.Answer
}

// platformTarget is the device a test runs against, as typed (never a
// password).
type platformTarget struct {
	DeviceID                       int64
	Host, Port, Method, Username   string
	typedPassword, typedEnablePass string
}

// platformTestResult is how a test went.
type platformTestResult struct {
	OK        bool
	Error     string
	Text      string
	TextCut   bool
	Segments  []collect.Segment
	Truncated bool
	Elapsed   string
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
	MaxRules, MaxCmds  int
	MaxPattern, MaxDoc int
}

func fieldsOfDefinition(d platforms.Definition) platformFields {
	f := platformFields{ID: d.ID, Name: d.Name, Vendor: d.Vendor, Notes: d.Notes, Exec: d.Exec,
		Prompt: d.Prompt, PromptLines: d.PromptLines, Pager: d.Pager, PagerAnswer: d.PagerAnswer,
		PagingOff: strings.Join(d.PagingOff, "\n"), DefaultCommands: strings.Join(d.DefaultCommands, "\n"),
		Strip: strings.Join(d.Strip, "\n"), Noise: strings.Join(d.Noise, "\n"), CommandError: d.CommandError,
		PreLogin: d.PreLogin}
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
	return f
}

func (f platformFields) definition() platforms.Definition {
	d := platforms.Definition{Schema: platforms.Schema, ID: strings.TrimSpace(f.ID), Name: f.Name, Vendor: f.Vendor,
		Notes: f.Notes, Exec: f.Exec, Prompt: f.Prompt, PromptLines: f.PromptLines, Pager: f.Pager,
		PagerAnswer: f.PagerAnswer, PagingOff: formLines(f.PagingOff), DefaultCommands: formLines(f.DefaultCommands),
		Strip: formLines(f.Strip), Noise: formLines(f.Noise), CommandError: f.CommandError}
	if f.SSH != f.Telnet {
		if f.SSH {
			d.Transports = []string{"ssh"}
		} else {
			d.Transports = []string{"telnet"}
		}
	}
	if strings.TrimSpace(f.EnableCommand) != "" {
		d.Enable = &platforms.Enable{Command: f.EnableCommand, PasswordPrompt: f.EnablePrompt, Privileged: f.Privileged, Failed: f.Failed}
	}
	for _, a := range f.PreLogin {
		if a.Match != "" || a.Send != "" {
			d.PreLogin = append(d.PreLogin, a)
		}
	}
	return d
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
		Strip: field("strip"), Noise: field("noise"), EnableCommand: trimmed("enable_command"),
		EnablePrompt: field("enable_password_prompt"), Privileged: field("enable_privileged"),
		Failed: field("enable_failed"), CommandError: field("command_error"),
	}
	matches, sends := r.PostForm["pre_login_match"], r.PostForm["pre_login_send"]
	for i := 0; i < len(matches) && i < len(sends) && i <= platforms.MaxRules; i++ {
		f.PreLogin = append(f.PreLogin, platforms.Answer{Match: matches[i], Send: sends[i]})
	}
	return f, errs
}

// definitionMessages turns a definition's errors into the page's
// messages.
func definitionMessages(err error) []platformMsg {
	var errs platforms.Errors
	if !errors.As(err, &errs) {
		return nil
	}
	out := make([]platformMsg, 0, len(errs))
	for _, e := range errs {
		key, ok := platformProblemKeys[e.Problem]
		if !ok {
			key = keyPlatErrOther
		}
		args := []any{e.Field}
		if platformProblemArg[e.Problem] {
			args = append(args, e.Arg)
		}
		out = append(out, platformMsg{Key: key, Args: args})
	}
	return out
}

// storeMessages explains a store refusal, or returns nil for an error
// the page cannot explain.
func storeMessages(err error, id string) []platformMsg {
	var inUse *db.PlatformInUseError
	switch {
	case errors.As(err, &inUse):
		return []platformMsg{{Key: keyPlatErrInUse, Args: []any{id, inUse.Devices, inUse.Templates}}}
	case errors.Is(err, db.ErrNameExists):
		return []platformMsg{{Key: keyPlatErrExists, Args: []any{id}}}
	case errors.Is(err, db.ErrTooManyPlatforms):
		return []platformMsg{{Key: keyPlatErrTooMany, Args: []any{db.MaxCustomPlatforms}}}
	}
	return definitionMessages(err)
}

func (u *UI) platformNewForm(w http.ResponseWriter, r *http.Request) error {
	d := platforms.Definition{Schema: platforms.Schema, PagerAnswer: " "}
	if from, ok := driver.Lookup(r.URL.Query().Get("from")); ok {
		d = platforms.FromPlatform(from)
	}
	p := platformForm{Editable: true, F: fieldsOfDefinition(d)}
	if len(d.Transports) == 0 {
		p.F.SSH, p.F.Telnet = true, true
	}
	return u.renderPlatformForm(w, r, http.StatusOK, p)
}

func (u *UI) renderPlatformForm(w http.ResponseWriter, r *http.Request, status int, p platformForm) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	p.Methods = inventoryMethods()
	p.MaxRules, p.MaxCmds, p.MaxPattern, p.MaxDoc = platforms.MaxRules, platforms.MaxCommands, platforms.MaxPattern, platforms.MaxDocument
	// Blank pre-login rows to add answers to.
	for i := 0; i < platformPreLoginRows && len(p.F.PreLogin) < platforms.MaxRules; i++ {
		p.F.PreLogin = append(p.F.PreLogin, platforms.Answer{})
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
func (u *UI) storedPlatform(r *http.Request) (db.CustomPlatform, platforms.Definition, error) {
	id := r.PathValue("id")
	if !platforms.IDPattern.MatchString(id) {
		return db.CustomPlatform{}, platforms.Definition{}, db.ErrNotFound
	}
	row, err := u.Store.GetCustomPlatform(r.Context(), id)
	if err != nil {
		return row, platforms.Definition{}, err
	}
	d, _ := platforms.Parse([]byte(row.Definition))
	d.ID = row.PlatformID
	return row, d, nil
}

func (u *UI) platformDetail(w http.ResponseWriter, r *http.Request) error {
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

func (u *UI) platformCreate(w http.ResponseWriter, r *http.Request) error {
	return u.platformSave(w, r, "")
}

func (u *UI) platformUpdate(w http.ResponseWriter, r *http.Request) error {
	row, _, err := u.storedPlatform(r)
	if err != nil {
		return err
	}
	return u.platformSave(w, r, row.PlatformID)
}

// platformSave saves the form (stored is the platform being edited, ""
// for a new one), or runs the test when the Test button sent it.
func (u *UI) platformSave(w http.ResponseWriter, r *http.Request, stored string) error {
	ctx := r.Context()
	f, errs := readPlatformFields(r)
	if stored != "" {
		f.ID = stored // the ID of a stored platform never changes: devices store it
	}
	p := platformForm{Stored: stored, Heading: f.Name, Editable: true, F: f, Errors: errs}
	if stored != "" {
		var err error
		if p.Devices, p.Templates, err = u.Store.PlatformUse(ctx, stored); err != nil {
			return err
		}
	}
	def := f.definition()
	if r.PostFormValue("action") == "test" {
		return u.platformTest(w, r, p, def)
	}
	if len(errs) > 0 {
		return u.renderPlatformForm(w, r, http.StatusUnprocessableEntity, p)
	}
	pl, err := platforms.Save(ctx, u.Store, def, stored == "")
	if err != nil {
		if p.Errors = storeMessages(err, def.ID); p.Errors == nil {
			return err
		}
		return u.renderPlatformForm(w, r, http.StatusUnprocessableEntity, p)
	}
	action, notice := "platform.create", "created"
	if stored != "" {
		action, notice = "platform.update", "updated"
	}
	u.platformAudit(r, action, pl.ID, map[string]any{"name": pl.Name})
	core.RedirectNotice(w, r, core.PathPlatforms+"/"+pl.ID, notice)
	return nil
}

// platformTest runs the unsaved definition against the chosen device
// and renders the form with what happened. Nothing is stored.
func (u *UI) platformTest(w http.ResponseWriter, r *http.Request, p platformForm, def platforms.Definition) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	fail := func(msgs ...platformMsg) error {
		p.Errors = append(p.Errors, msgs...)
		return u.renderPlatformForm(w, r, http.StatusUnprocessableEntity, p)
	}
	// The test may run before the platform has its final ID: any valid
	// ID will do for it.
	if strings.TrimSpace(def.ID) == "" {
		def.ID = "custom_test"
	}
	pl, err := def.Platform()
	if err != nil {
		var errs platforms.Errors
		if errors.As(err, &errs) && len(errs) == 1 && errs[0].Field == "id" && errs[0].Problem != platforms.TooLarge {
			// Only the ID is wrong: the session does not need it.
			def.ID = "custom_test"
			pl, err = def.Platform()
		}
		if err != nil {
			return fail(definitionMessages(err)...)
		}
		p.Errors = append(p.Errors, definitionMessages(platforms.Errors(errs))...)
	}

	t := platformTarget{Method: r.PostFormValue("target_method"), Host: strings.TrimSpace(r.PostFormValue("target_host")),
		Port: strings.TrimSpace(r.PostFormValue("target_port")), Username: strings.TrimSpace(r.PostFormValue("target_username")),
		typedPassword: r.PostFormValue("target_password"), typedEnablePass: r.PostFormValue("target_enable_password")}
	if v := r.PostFormValue("target_device"); v != "" {
		t.DeviceID, _ = strconv.ParseInt(v, 10, 64)
	}
	if t.Method != "telnet" {
		t.Method = "ssh"
	}
	p.Target = t

	var target collect.Target
	switch {
	case t.DeviceID > 0:
		if !s.Can("backups.create") {
			return fail(platformMsg{Key: keyPlatErrTestDevicePerm})
		}
		d, err := u.Store.GetDevice(ctx, t.DeviceID)
		if errors.Is(err, db.ErrNotFound) {
			return fail(platformMsg{Key: keyPlatErrTestNoDevice})
		} else if err != nil {
			return err
		}
		if ok, err := u.Store.DeviceInScope(ctx, s.Scope(), d); err != nil {
			return err
		} else if !ok {
			return fail(platformMsg{Key: keyPlatErrTestNoDevice})
		}
		if d.ZoneID != db.LocalZone {
			// Only the zone's collector reaches it; this test runs here.
			return fail(platformMsg{Key: keyPlatErrTestRemoteZone})
		}
		if target, err = backup.DeviceTarget(ctx, u.Store, u.Sealer, d.ID); err != nil {
			return fail(platformMsg{Key: keyPlatErrTestTarget, Args: []any{err.Error()}})
		}
		target.Commands = nil // the definition's commands, not the device's template
	case t.Host != "":
		if !driver.ValidHost(t.Host) {
			return fail(platformMsg{Key: keyPlatErrTestHost})
		}
		port := driver.LoginMethods[t.Method]
		if t.Port != "" {
			n, err := strconv.Atoi(t.Port)
			if err != nil || n < 1 || n > 65535 {
				return fail(platformMsg{Key: keyPlatErrTestPort})
			}
			port = n
		}
		target = collect.Target{Host: t.Host, Port: port, Method: t.Method, Username: t.Username,
			Password: t.typedPassword, EnablePassword: t.typedEnablePass}
		outbound, err := netguard.Load(ctx, u.Store)
		if err != nil {
			return err
		}
		target.Control = outbound.Control
	default:
		return fail(platformMsg{Key: keyPlatErrTestNoTarget})
	}
	if !pl.OffersTransport(target.Method) {
		return fail(platformMsg{Key: keyPlatErrTestTransport, Args: []any{target.Method}})
	}
	target.Platform, target.Definition = pl.ID, &pl
	target.MaxOutput = platformTestMaxOutput
	target.Timeouts = collect.Timeouts{Connect: 10 * time.Second, Login: 30 * time.Second, Command: 60 * time.Second, Job: platformTestJob}
	tr := &collect.Transcript{Max: platformTestLog}
	target.Transcript = tr

	select {
	case platformTestSlots <- struct{}{}:
		defer func() { <-platformTestSlots }()
	default:
		return fail(platformMsg{Key: keyPlatErrTestBusy})
	}
	tctx, cancel := context.WithTimeout(ctx, platformTestJob+5*time.Second)
	defer cancel()
	start := time.Now()
	res, cerr := collect.Collect(tctx, target)
	result := &platformTestResult{OK: cerr == nil, Elapsed: time.Since(start).Round(10 * time.Millisecond).String()}
	if cerr != nil {
		result.Error = cerr.Error()
	}
	text := tr.MaskSecrets(res.Text)
	if len(text) > platformTestShown {
		text, result.TextCut = strings.ToValidUTF8(text[:platformTestShown], ""), true
	}
	result.Text = text
	result.Segments, result.Truncated = tr.Segments()
	p.Test = result

	details := map[string]any{"ok": result.OK, "method": target.Method}
	if t.DeviceID > 0 {
		details["device_id"] = t.DeviceID
	} else {
		details["host"] = target.Host
	}
	u.platformAudit(r, "platform.test", pl.ID, details)
	return u.renderPlatformForm(w, r, http.StatusOK, p)
}

// platformAudit records a change of the platform with ID id.
func (u *UI) platformAudit(r *http.Request, action, id string, details map[string]any) {
	u.AuditAs(r, action, "platform", id, details)
}

func (u *UI) platformDelete(w http.ResponseWriter, r *http.Request) error {
	row, d, err := u.storedPlatform(r)
	if err != nil {
		return err
	}
	if err := platforms.Delete(r.Context(), u.Store, row.PlatformID); err != nil {
		msgs := storeMessages(err, row.PlatformID)
		if msgs == nil {
			return err
		}
		return u.renderPlatforms(w, r, http.StatusConflict, msgs)
	}
	u.platformAudit(r, "platform.delete", row.PlatformID, map[string]any{"name": d.Name})
	core.RedirectNotice(w, r, core.PathPlatforms, "deleted")
	return nil
}

// platformImport stores an uploaded definition: a new platform, or with
// "replace" ticked a new version of the stored one with its ID.
func (u *UI) platformImport(w http.ResponseWriter, r *http.Request) error {
	file, _, err := r.FormFile("file")
	if err != nil {
		return u.renderPlatforms(w, r, http.StatusUnprocessableEntity, []platformMsg{{Key: keyPlatErrImportNoFile}})
	}
	defer file.Close()
	doc, err := io.ReadAll(io.LimitReader(file, platforms.MaxDocument+1))
	if err != nil {
		return err
	}
	d, err := platforms.Parse(doc)
	if err != nil {
		return u.renderPlatforms(w, r, http.StatusUnprocessableEntity, definitionMessages(err))
	}
	replace := core.Checked(r, "replace")
	create := true
	if replace {
		if _, err := u.Store.GetCustomPlatform(r.Context(), strings.TrimSpace(d.ID)); err == nil {
			create = false
		}
	}
	pl, err := platforms.Save(r.Context(), u.Store, d, create)
	if err != nil {
		msgs := storeMessages(err, d.ID)
		if msgs == nil {
			return err
		}
		return u.renderPlatforms(w, r, http.StatusUnprocessableEntity, msgs)
	}
	u.platformAudit(r, "platform.import", pl.ID, map[string]any{"name": pl.Name, "replaced": !create})
	core.RedirectNotice(w, r, core.PathPlatforms+"/"+pl.ID, "imported")
	return nil
}

// platformExport downloads a platform's definition: a custom one as
// stored, a built-in one as a starting point (its ID prefixed custom_).
func (u *UI) platformExport(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var doc []byte
	if b, ok := driver.Lookup(id); ok && !b.Custom {
		doc = platforms.Marshal(platforms.FromPlatform(b))
		id = platforms.BuiltinCopyID(id)
	} else {
		row, d, err := u.storedPlatform(r)
		if err != nil {
			return err
		}
		if _, perr := platforms.Parse([]byte(row.Definition)); perr != nil {
			doc = []byte(row.Definition) // as stored, for the administrator to mend
		} else {
			doc = platforms.Marshal(d)
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.json"`, id))
	w.Header().Set("Cache-Control", "no-store")
	_, err := w.Write(doc)
	return err
}
