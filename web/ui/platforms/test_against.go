package platforms

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/collect/driver"
	custom "backupd/app/platforms"
	"backupd/web/ui/core"
)

// "Test against a device": the form's definition, unsaved, run against a
// stored device or a typed address (backup.RunPlatformTest), and what came
// back shown on the form.

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

// platformTest runs the unsaved definition against the chosen device
// and renders the form with what happened. Nothing is stored.
func (u *handlers) platformTest(w http.ResponseWriter, r *http.Request, p platformForm, def custom.Definition) error {
	s := core.SessionOf(r)
	fail := func(msgs ...platformMsg) error {
		p.Errors = append(p.Errors, msgs...)
		return u.renderPlatformForm(w, r, http.StatusUnprocessableEntity, p)
	}
	// The test only reads the device: it runs without the restore
	// section, so that section can neither make a restore happen nor
	// keep a session from being tried. The test may run before the
	// platform has its final ID: any valid ID will do for it.
	def.Restore = nil
	pl, warnings, err := custom.TestPlatform(def)
	if err != nil {
		return fail(definitionMessages(err)...)
	}
	p.Errors = append(p.Errors, definitionMessages(warnings)...)

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
	target := backup.PlatformTestTarget{DeviceID: t.DeviceID, Scope: s.Scope(), Host: t.Host, Method: t.Method,
		Username: t.Username, Password: t.typedPassword, EnablePassword: t.typedEnablePass}
	if t.DeviceID > 0 && !s.Can("backups.create") {
		// The test logs in with the device's credential, as a backup does.
		return fail(platformMsg{Key: keyPlatErrTestDevicePerm})
	}
	if t.Port != "" {
		n, err := strconv.Atoi(t.Port)
		if err != nil || n < 1 {
			n = -1 // refused as out of range
		}
		target.Port = n
	}

	res, err := backup.RunPlatformTest(r.Context(), u.Store, u.Sealer, pl, target)
	var login *backup.PlatformTestLoginError
	var transport *backup.PlatformTestTransportError
	switch {
	case errors.Is(err, backup.ErrPlatformTestNoDevice):
		return fail(platformMsg{Key: keyPlatErrTestNoDevice})
	case errors.Is(err, backup.ErrPlatformTestRemoteZone):
		// Only the zone's collector reaches it; this test runs here.
		return fail(platformMsg{Key: keyPlatErrTestRemoteZone})
	case errors.As(err, &login):
		return fail(platformMsg{Key: keyPlatErrTestTarget, Args: []any{login.Error()}})
	case errors.Is(err, backup.ErrPlatformTestHost):
		return fail(platformMsg{Key: keyPlatErrTestHost})
	case errors.Is(err, backup.ErrPlatformTestPort):
		return fail(platformMsg{Key: keyPlatErrTestPort})
	case errors.Is(err, backup.ErrPlatformTestNoTarget):
		return fail(platformMsg{Key: keyPlatErrTestNoTarget})
	case errors.As(err, &transport):
		return fail(platformMsg{Key: keyPlatErrTestTransport, Args: []any{transport.Method}})
	case errors.Is(err, backup.ErrPlatformTestBusy):
		return fail(platformMsg{Key: keyPlatErrTestBusy})
	case err != nil:
		return err
	}
	// The output is configuration: its secrets masked by the rules under
	// test, unless the user may see them.
	compiled, err := driver.Prepare(pl)
	if err != nil {
		return err
	}
	mask, err := u.MaskerFor(r, t.DeviceID, compiled.SecretSet())
	if err != nil {
		return err
	}
	if mask != nil {
		res.Text = mask.Text(res.Text)
		for i, sg := range res.Segments {
			if sg.Kind == collect.SegmentReceived {
				res.Segments[i].Text = mask.Text(sg.Text)
			}
		}
	}
	p.Test = &platformTestResult{OK: res.OK, Error: res.Error, Text: res.Text, TextCut: res.TextCut,
		Segments: res.Segments, Truncated: res.Truncated, Elapsed: res.Elapsed.Round(10 * time.Millisecond).String()}

	details := map[string]any{"ok": res.OK, "method": res.Method, "secrets_shown": mask == nil}
	if t.DeviceID > 0 {
		details["device_id"] = t.DeviceID
	} else {
		details["host"] = res.Host
	}
	u.platformAudit(r, "platform.test", pl.ID, details)
	return u.renderPlatformForm(w, r, http.StatusOK, p)
}
