package admin

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"backupd/app/backup"
	"backupd/app/syslog"
	"backupd/db"
)

// syslogErrorKeys name the message of each kind of refused pattern; each
// takes the line number, then the argument listed in syslogErrorArg.
var syslogErrorKeys = map[string]string{
	backup.SyslogPatternNameRequired: keySyslogErrNameRequired,
	backup.SyslogPatternNameTooLong:  keySyslogErrNameTooLong,
	backup.SyslogPatternNameTaken:    keySyslogErrNameTaken,
	backup.SyslogPatternEmpty:        keySyslogErrEmpty,
	backup.SyslogPatternTooLong:      keySyslogErrTooLong,
	backup.SyslogPatternInvalid:      keySyslogErrInvalid,
	backup.SyslogPatternMatchesEmpty: keySyslogErrMatchesEmpty,
}

// settingsSyslog is the syslog section of the settings page: whether
// the listener runs, its counters, and the user patterns as edited.
type settingsSyslog struct {
	On       bool
	Addr     string
	Stats    settingsSyslogStats
	Patterns string
	Builtin  string
	Max      int
	// Error (with Args) refuses the patterns as typed.
	Error string
	Args  []any
}

type settingsSyslogStats struct {
	Received, Matched, UnknownSender, Queued, Disabled, Pending int
	// DroppedChanges are change messages dropped (a device over its
	// budget, too many devices waiting); Dropped every other message
	// dropped; Evicted TCP connections closed to make room.
	DroppedChanges, Dropped, Evicted int
	// QuietSeconds is the debounce: seconds after a device's last change
	// message before its backup is queued.
	QuietSeconds int
}

// fillSyslog sets what the page shows of the listener; p.Syslog.Patterns
// is left as typed when set by a refused form.
func (u *handlers) fillSyslog(r *http.Request, s *settingsSyslog, typed bool) error {
	if !typed {
		stored, err := u.Store.SyslogPatterns(r.Context())
		if err != nil {
			return err
		}
		s.Patterns = formatSyslogPatterns(stored)
	}
	var names []string
	for _, p := range syslog.BuiltinPatterns() {
		names = append(names, p.Name)
	}
	s.Builtin, s.Max = strings.Join(names, ", "), syslog.MaxUserPattern
	if t := u.Syslog; t != nil {
		st := t.Stats()
		var changes, other uint64
		for d, n := range st.Dropped {
			if d.Class == syslog.ClassChange {
				changes += n
			} else {
				other += n
			}
		}
		s.On, s.Addr = true, t.Addr()
		s.Stats = settingsSyslogStats{
			Received: int(st.Received), Matched: int(st.Matched), UnknownSender: int(st.UnknownSender),
			Queued: int(st.Queued), Disabled: int(st.Skipped[backup.SyslogSkipDisabled]),
			DroppedChanges: int(changes), Dropped: int(other), Evicted: int(st.Evicted),
			Pending: st.PendingDevices, QuietSeconds: int(t.Debounce() / time.Second),
		}
	}
	return nil
}

// formatSyslogPatterns writes the patterns as the form shows them: one a
// line, "name: expression".
func formatSyslogPatterns(ps []db.SyslogPattern) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Name + ": " + p.Pattern + "\n")
	}
	return b.String()
}

// parseSyslogPatterns reads the form's text: one pattern a line, its name
// before the first colon, its expression after it (the spaces right after
// the colon left out); blank lines are skipped. lines maps each pattern to
// its line number.
func parseSyslogPatterns(text string) (ps []db.SyslogPattern, lines []int, badLine int) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, expr, ok := strings.Cut(line, ":")
		if !ok {
			return nil, nil, i + 1
		}
		ps = append(ps, db.SyslogPattern{Name: strings.TrimSpace(name), Pattern: strings.TrimLeft(expr, " \t")})
		lines = append(lines, i+1)
	}
	return ps, lines, 0
}

// saveSyslogPatterns stores the user patterns and applies them to the
// running listener at once.
func (u *handlers) saveSyslogPatterns(w http.ResponseWriter, r *http.Request) error {
	text := r.PostFormValue("patterns")
	refuse := func(key string, args ...any) error {
		p := settingsPage{Syslog: settingsSyslog{Patterns: text, Error: key, Args: args}}
		return u.renderSettingsTyped(w, r, http.StatusUnprocessableEntity, p, true)
	}
	ps, lines, bad := parseSyslogPatterns(text)
	if bad > 0 {
		return refuse(keySyslogErrFormat, bad)
	}
	if _, err := backup.CompileSyslogPatterns(ps); err != nil {
		var pe *backup.SyslogPatternError
		if !errors.As(err, &pe) {
			return err
		}
		if pe.Index < 0 {
			return refuse(keySyslogErrTooMany, syslog.MaxUserPattern)
		}
		line := lines[pe.Index]
		switch pe.Kind {
		case backup.SyslogPatternNameTooLong:
			return refuse(syslogErrorKeys[pe.Kind], line, syslog.MaxPatternName)
		case backup.SyslogPatternTooLong:
			return refuse(syslogErrorKeys[pe.Kind], line, syslog.MaxPatternExpr)
		case backup.SyslogPatternNameTaken:
			return refuse(syslogErrorKeys[pe.Kind], line, pe.Name)
		case backup.SyslogPatternInvalid:
			return refuse(syslogErrorKeys[pe.Kind], line, pe.Detail)
		}
		return refuse(syslogErrorKeys[pe.Kind], line)
	}
	if ps == nil {
		ps = []db.SyslogPattern{}
	}
	if err := u.Store.PutSetting(r.Context(), db.SettingSyslogPatterns, ps); err != nil {
		return err
	}
	done := "syslog_saved"
	if t := u.Syslog; t != nil {
		if err := t.ReloadPatterns(r.Context()); err != nil {
			return err
		}
		done = "syslog_applied"
	}
	u.AuditAs(r, "settings.update", "settings", db.SettingSyslogPatterns, map[string]any{"patterns": len(ps)})
	http.Redirect(w, r, "/settings?done="+done+"#syslog", http.StatusSeeOther)
	return nil
}
