package platforms

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"backupd/app/collect/driver"
)

// MaxConfirmMinutes bounds a confirm timer: Junos, whose timer is the
// longest, takes up to 65535 minutes.
const MaxConfirmMinutes = 65535

// Restore is how a custom platform puts a stored configuration back: one
// of the methods backupd implements (driver.RestoreMethods), with the
// commands and patterns that method needs on this platform. The fields
// mean what driver.Restore's mean.
type Restore struct {
	Method      string   `json:"method"`
	ConfigEnter []string `json:"config_enter,omitempty"`
	ConfigExit  []string `json:"config_exit,omitempty"`
	Save        []string `json:"save,omitempty"`
	// ApplyError matches a line by which the device refuses a line of
	// configuration; required.
	ApplyError string `json:"apply_error"`
	// ConfirmMinutes is the device's undo timer, for the methods that arm
	// one (and only for them).
	ConfirmMinutes *ConfirmMinutes `json:"confirm_minutes,omitempty"`
	// File is where a method that applies from a file copies the version,
	// for those methods only.
	File string `json:"file,omitempty"`
	// Drop are lines of a stored configuration the device would refuse.
	Drop []string `json:"drop,omitempty"`
}

// ConfirmMinutes bounds the confirm timer, in minutes: the default a
// restore uses, and the least and most the device takes.
type ConfirmMinutes struct {
	Default int `json:"default"`
	Min     int `json:"min"`
	Max     int `json:"max"`
}

// restoreMethodIDs lists the methods a definition may name.
func restoreMethodIDs() []string {
	ids := make([]string, len(driver.RestoreMethods))
	for i, m := range driver.RestoreMethods {
		ids[i] = m.ID
	}
	return ids
}

// restore checks a restore declaration; nil, or an object without a
// valid method, is a platform that cannot restore.
func (v *validator) restore(r *Restore) driver.Restore {
	if r == nil {
		return driver.Restore{}
	}
	out := driver.Restore{Method: strings.TrimSpace(r.Method)}
	m, known := driver.LookupRestoreMethod(out.Method)
	switch {
	case out.Method == "":
		v.add("restore.method", Required, "", "required; leave out restore for a platform that cannot restore")
	case !known:
		ids := strings.Join(restoreMethodIDs(), ", ")
		v.add("restore.method", UnknownRestoreMethod, ids, "not a restore method; use one of "+ids)
	}
	out.ConfigEnter = v.commands("restore.config_enter", r.ConfigEnter, false)
	out.ConfigExit = v.commands("restore.config_exit", r.ConfigExit, false)
	out.Save = v.commands("restore.save", r.Save, false)
	out.ApplyError = v.pattern("restore.apply_error", r.ApplyError, true)
	if out.ApplyError != nil && out.ApplyError.MatchString("") {
		// Every blank line of an answer would be a refusal.
		v.add("restore.apply_error", MatchesEmpty, "", "matches an empty line, so every line sent would be refused")
	}
	out.Drop = v.patterns("restore.drop", r.Drop)
	for i, d := range r.Drop {
		// A rule that drops blank lines may drop far more than meant.
		if strings.TrimSpace(d) != "" && v.matchesEmpty(d) {
			v.add(fmt.Sprintf("restore.drop[%d]", i), MatchesEmpty, "", "matches an empty line")
		}
	}
	if !known {
		return out
	}
	if m.ConfigMode && len(r.ConfigEnter) == 0 {
		v.add("restore.config_enter", Required, "", fmt.Sprintf("required: %s types lines in configuration mode", m.ID))
	}

	switch c := r.ConfirmMinutes; {
	case m.Timer && c == nil:
		v.add("restore.confirm_minutes", Required, "", fmt.Sprintf("required: %s arms the device's undo timer", m.ID))
	case !m.Timer && c != nil:
		v.add("restore.confirm_minutes", NotForMethod, m.ID, fmt.Sprintf("%s has no confirm timer; leave it out", m.ID))
	case c != nil:
		if v.confirmMinutes(*c) {
			out.Timer = driver.ConfirmTimer{Default: time.Duration(c.Default) * time.Minute,
				Min: time.Duration(c.Min) * time.Minute, Max: time.Duration(c.Max) * time.Minute}
		}
	}

	file := strings.TrimSpace(r.File)
	switch {
	case m.File && file == "":
		v.add("restore.file", Required, "", fmt.Sprintf("required: %s copies the version to a file on the device first", m.ID))
	case !m.File && file != "":
		v.add("restore.file", NotForMethod, m.ID, fmt.Sprintf("%s copies no file; leave it out", m.ID))
	case file != "":
		out.File = v.file("restore.file", file)
	}
	return out
}

// confirmMinutes checks 1 ≤ min ≤ default ≤ max ≤ MaxConfirmMinutes,
// naming the field that breaks it.
func (v *validator) confirmMinutes(c ConfirmMinutes) bool {
	ok := true
	if c.Min < 1 || c.Min > MaxConfirmMinutes {
		v.add("restore.confirm_minutes.min", OutOfRange, "1 ≤ min ≤ default", "must be at least 1 and at most the default")
		ok = false
	}
	if c.Max < 1 || c.Max > MaxConfirmMinutes {
		limit := fmt.Sprintf("default ≤ max ≤ %d", MaxConfirmMinutes)
		v.add("restore.confirm_minutes.max", OutOfRange, limit, "must be at least the default and at most "+fmt.Sprint(MaxConfirmMinutes))
		ok = false
	}
	if ok && (c.Default < c.Min || c.Default > c.Max) {
		v.add("restore.confirm_minutes.default", OutOfRange, "min ≤ default ≤ max", "must be between the minimum and the maximum")
		ok = false
	}
	return ok
}

// file checks a file on the device: one word, as the device's command
// takes it after "configure replace".
func (v *validator) file(field, s string) string {
	switch {
	case utf8.RuneCountInString(s) > MaxCommand:
		v.add(field, TooLong, fmt.Sprint(MaxCommand), fmt.Sprintf("longer than %d characters", MaxCommand))
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0:
		v.add(field, BadFile, "", "must be one path without spaces or control characters, e.g. flash:backupd-restore.cfg")
	default:
		return s
	}
	return ""
}

// matchesEmpty reports whether a pattern that compiles matches an empty
// line (one that does not compile is reported by pattern).
func (v *validator) matchesEmpty(s string) bool {
	re, err := regexp.Compile(s)
	return err == nil && re.MatchString("")
}

// restoreOf describes a driver platform's restore declaration in the
// definition format; nil when it cannot restore. Timers are whole
// minutes on every platform that has one.
func restoreOf(r driver.Restore) *Restore {
	if r.Method == "" {
		return nil
	}
	d := &Restore{Method: r.Method, ConfigEnter: slices.Clone(r.ConfigEnter), ConfigExit: slices.Clone(r.ConfigExit),
		Save: slices.Clone(r.Save), File: r.File, Drop: slices.Clone(r.Drop)}
	if r.ApplyError != nil {
		d.ApplyError = r.ApplyError.String()
	}
	if t := r.Timer; t != (driver.ConfirmTimer{}) {
		d.ConfirmMinutes = &ConfirmMinutes{Default: int(t.Default / time.Minute), Min: int(t.Min / time.Minute), Max: int(t.Max / time.Minute)}
	}
	return d
}
