// Package platforms turns the platforms an administrator defines (a JSON
// document, stored in the database and exchanged as a file) into driver
// platforms, and checks them first: every field is bounded, every pattern
// is a Go (RE2) regular expression, so a definition can never make a
// collection backtrack for ever or a prompt match nothing at all.
package platforms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"backupd/app/collect/driver"
)

// Schema is the format name every definition carries.
const Schema = "backupd.platform/v1"

// Bounds on a definition.
const (
	MaxDocument = 16 << 10 // bytes of the JSON document
	MaxPattern  = 512      // characters of one regular expression
	MaxRules    = 50       // strip, noise and pre-login rules, each
	MaxCommands = 20       // default and paging-off commands, each
	MaxCommand  = 256      // characters of one command
	MaxSend     = 64       // characters of one pre-login answer
	MaxName     = 128      // characters of the name and the vendor
	MaxNotes    = 2000     // characters of the notes
)

// IDPattern is what a custom platform ID looks like: the prefix keeps it
// apart from every built-in ID, present or future.
var IDPattern = regexp.MustCompile(`^custom_[a-z0-9_]{1,40}$`)

// IDPatternText is IDPattern's expression, for documents that describe it.
const IDPatternText = `^custom_[a-z0-9_]{1,40}$`

// Definition is a platform as the administrator writes it.
type Definition struct {
	Schema          string   `json:"schema"`
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	Vendor          string   `json:"vendor,omitempty"`
	Notes           string   `json:"notes,omitempty"`
	Transports      []string `json:"transports,omitempty"`
	Prompt          string   `json:"prompt"`
	PromptLines     string   `json:"prompt_lines,omitempty"`
	Pager           string   `json:"pager,omitempty"`
	PagerAnswer     string   `json:"pager_answer,omitempty"`
	PagingOff       []string `json:"paging_off,omitempty"`
	Enable          *Enable  `json:"enable,omitempty"`
	PreLogin        []Answer `json:"pre_login,omitempty"`
	CommandError    string   `json:"command_error,omitempty"`
	Exec            bool     `json:"exec,omitempty"`
	DefaultCommands []string `json:"default_commands"`
	Strip           []string `json:"strip,omitempty"`
	Noise           []string `json:"noise,omitempty"`
	Secrets         []Secret `json:"secrets,omitempty"`
	// Restore is how a stored configuration is put back (absent: the
	// platform cannot restore).
	Restore *Restore `json:"restore,omitempty"`
}

// Secret is a secret rule (driver.SecretRule): Match, an expression
// whose groups named "secret" are masked, or Begin and End, the lines
// around a block masked whole.
type Secret struct {
	Name  string `json:"name"`
	Match string `json:"match,omitempty"`
	Begin string `json:"begin,omitempty"`
	End   string `json:"end,omitempty"`
}

// Enable is how the platform raises privilege.
type Enable struct {
	Command        string `json:"command"`
	PasswordPrompt string `json:"password_prompt,omitempty"`
	Privileged     string `json:"privileged,omitempty"`
	Failed         string `json:"failed,omitempty"`
}

// Answer is a question the device may ask before its first prompt, with
// the reply that gets past it ("\n" is the line end).
type Answer struct {
	Match string `json:"match"`
	Send  string `json:"send"`
}

// Problem says what is wrong with a field, stably, for interfaces that
// translate the message themselves.
type Problem string

// Problems a definition can have.
const (
	BadDocument      Problem = "bad_document"
	TooLarge         Problem = "too_large"
	BadSchema        Problem = "bad_schema"
	Required         Problem = "required"
	BadID            Problem = "bad_id"
	BuiltinID        Problem = "builtin_id"
	TooLong          Problem = "too_long"
	TooMany          Problem = "too_many"
	BadPattern       Problem = "bad_pattern"
	MatchesEmpty     Problem = "matches_empty"
	NotPrintable     Problem = "not_printable"
	UnknownTransport Problem = "unknown_transport"
	ExecNeedsSSH     Problem = "exec_needs_ssh"
	NoSecretGroup    Problem = "no_secret_group"
	SecretForm       Problem = "secret_form"
	// UnknownRestoreMethod: Arg lists the methods there are.
	UnknownRestoreMethod Problem = "unknown_restore_method"
	// NotForMethod is a restore field the method never reads (a confirm
	// timer for FRR): Arg is the method.
	NotForMethod Problem = "not_for_method"
	// OutOfRange is a number outside its bounds: Arg says them.
	OutOfRange Problem = "out_of_range"
	// BadFile is a file name a device command could not take.
	BadFile Problem = "bad_file"
)

// FieldError is one bad field. Field is the JSON name, with an index for
// list items ("noise[3]", "enable.failed"); Message is English; Arg is a
// detail the message quotes (a limit, the regexp error).
type FieldError struct {
	Field   string
	Problem Problem
	Arg     string
	Message string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Message }

// Errors are all the problems of one definition.
type Errors []FieldError

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return "invalid platform definition: " + strings.Join(msgs, "; ")
}

// Parse reads a JSON definition, bounded by MaxDocument; unknown fields
// are refused so a misspelt one is not silently ignored.
func Parse(doc []byte) (Definition, error) {
	var d Definition
	if len(doc) > MaxDocument {
		return d, Errors{{Field: "document", Problem: TooLarge, Arg: fmt.Sprint(MaxDocument),
			Message: fmt.Sprintf("the document is larger than %d bytes", MaxDocument)}}
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return d, Errors{{Field: "document", Problem: BadDocument, Arg: err.Error(),
			Message: "not a platform definition (JSON): " + err.Error()}}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return d, Errors{{Field: "document", Problem: BadDocument, Arg: "trailing data",
			Message: "not a platform definition (JSON): data after the object"}}
	}
	return d, nil
}

// Marshal writes a definition as indented JSON, the export format.
func Marshal(d Definition) []byte {
	d.Schema = Schema
	b, _ := json.MarshalIndent(d, "", "  ")
	return append(b, '\n')
}

// Platform checks d and converts it; the error is Errors.
func (d Definition) Platform() (driver.Platform, error) {
	v := &validator{}
	p := v.convert(d)
	if len(v.errs) > 0 {
		return driver.Platform{}, v.errs
	}
	if len(Marshal(d)) > MaxDocument {
		return driver.Platform{}, Errors{{Field: "document", Problem: TooLarge, Arg: fmt.Sprint(MaxDocument),
			Message: fmt.Sprintf("the definition is larger than %d bytes", MaxDocument)}}
	}
	if err := driver.Compile(p); err != nil {
		// The checks above cover what Compile checks; this is a guard.
		return driver.Platform{}, Errors{{Field: "document", Problem: BadDocument, Arg: err.Error(), Message: err.Error()}}
	}
	p.Custom = true
	return p, nil
}

// Load parses and converts a stored document.
func Load(doc []byte) (driver.Platform, Definition, error) {
	d, err := Parse(doc)
	if err != nil {
		return driver.Platform{}, d, err
	}
	p, err := d.Platform()
	return p, d, err
}

type validator struct{ errs Errors }

func (v *validator) add(field string, p Problem, arg, msg string) {
	v.errs = append(v.errs, FieldError{Field: field, Problem: p, Arg: arg, Message: msg})
}

// text checks a free-text field: length and printable characters.
func (v *validator) text(field, s string, max int, required bool) string {
	s = strings.TrimSpace(s)
	switch {
	case s == "" && required:
		v.add(field, Required, "", "required")
	case utf8.RuneCountInString(s) > max:
		v.add(field, TooLong, fmt.Sprint(max), fmt.Sprintf("longer than %d characters", max))
	case !printable(s, field == "notes"):
		v.add(field, NotPrintable, "", "holds control characters")
	}
	return s
}

// pattern compiles one regular expression; "" is nil unless required.
func (v *validator) pattern(field, s string, required bool) *regexp.Regexp {
	if s == "" {
		if required {
			v.add(field, Required, "", "required")
		}
		return nil
	}
	if utf8.RuneCountInString(s) > MaxPattern {
		v.add(field, TooLong, fmt.Sprint(MaxPattern), fmt.Sprintf("longer than %d characters", MaxPattern))
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		v.add(field, BadPattern, msg, "not a valid regular expression (Go RE2 syntax): "+msg)
		return nil
	}
	return re
}

// patterns compiles a list of rules.
func (v *validator) patterns(field string, list []string) []string {
	if len(list) > MaxRules {
		v.add(field, TooMany, fmt.Sprint(MaxRules), fmt.Sprintf("more than %d rules", MaxRules))
		return nil
	}
	var out []string
	for i, s := range list {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if v.pattern(fmt.Sprintf("%s[%d]", field, i), s, false) != nil {
			out = append(out, s)
		}
	}
	return out
}

// commands checks a list of commands.
func (v *validator) commands(field string, list []string, required bool) []string {
	var out []string
	for i, c := range list {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case utf8.RuneCountInString(c) > MaxCommand:
			v.add(f, TooLong, fmt.Sprint(MaxCommand), fmt.Sprintf("longer than %d characters", MaxCommand))
		case !printable(c, false):
			v.add(f, NotPrintable, "", "holds control characters")
		default:
			out = append(out, c)
		}
	}
	switch {
	case len(out) > MaxCommands:
		v.add(field, TooMany, fmt.Sprint(MaxCommands), fmt.Sprintf("more than %d commands", MaxCommands))
	case len(out) == 0 && required:
		v.add(field, Required, "", "at least one command is required")
	}
	return out
}

func (v *validator) convert(d Definition) driver.Platform {
	if d.Schema != Schema {
		v.add("schema", BadSchema, Schema, fmt.Sprintf("must be %q", Schema))
	}
	id := strings.TrimSpace(d.ID)
	switch {
	case id == "":
		v.add("id", Required, "", "required")
	case slices.Contains(driver.BuiltinIDs(), id):
		v.add("id", BuiltinID, id, "a built-in platform has this ID")
	case !IDPattern.MatchString(id):
		v.add("id", BadID, IDPatternText, "must be custom_ followed by 1 to 40 lower-case letters, digits or underscores")
	}
	p := driver.Platform{
		ID:     id,
		Name:   v.text("name", d.Name, MaxName, true),
		Vendor: v.text("vendor", d.Vendor, MaxName, false),
		Notes:  v.text("notes", d.Notes, MaxNotes, false),
		Custom: true,
	}
	seen := map[string]bool{}
	for i, t := range d.Transports {
		t = strings.ToLower(strings.TrimSpace(t))
		if _, ok := driver.LoginMethods[t]; !ok {
			v.add(fmt.Sprintf("transports[%d]", i), UnknownTransport, t, "must be ssh or telnet")
			continue
		}
		if !seen[t] {
			seen[t] = true
			p.Transports = append(p.Transports, t)
		}
	}
	if len(p.Transports) == len(driver.LoginMethods) {
		p.Transports = nil // both: the driver's default
	}

	dl := &p.Dialogue
	dl.Prompt = v.pattern("prompt", d.Prompt, true)
	if dl.Prompt != nil && dl.Prompt.MatchString("") {
		// A prompt that matches nothing at all would end every command
		// at its first empty line.
		v.add("prompt", MatchesEmpty, "", "matches an empty line; anchor it to what the prompt ends with, e.g. [>#]$")
	}
	dl.PromptLines = v.pattern("prompt_lines", d.PromptLines, false)
	if dl.PromptLines != nil && dl.PromptLines.MatchString("") {
		v.add("prompt_lines", MatchesEmpty, "", "matches an empty line")
	}
	dl.Pager = v.pattern("pager", d.Pager, false)
	if dl.Pager != nil && dl.Pager.MatchString("") {
		v.add("pager", MatchesEmpty, "", "matches an empty line")
	}
	if d.PagerAnswer != "" {
		dl.PagerAnswer = v.send("pager_answer", d.PagerAnswer)
	}
	if len(d.PagingOff) > 0 {
		dl.PagingOff = v.commands("paging_off", d.PagingOff, false)
	}
	if e := d.Enable; e != nil && strings.TrimSpace(e.Command) != "" {
		cmd := v.commands("enable.command", []string{e.Command}, true)
		if len(cmd) == 1 {
			dl.Enable = cmd[0]
		}
		dl.PasswordPrompt = v.pattern("enable.password_prompt", e.PasswordPrompt, false)
		if dl.PasswordPrompt == nil && e.PasswordPrompt == "" {
			dl.PasswordPrompt = regexp.MustCompile(`(?i)password ?:$`)
		}
		dl.Privileged = v.pattern("enable.privileged", e.Privileged, false)
		dl.EnableFailed = v.pattern("enable.failed", e.Failed, false)
		for _, r := range []struct {
			f  string
			re *regexp.Regexp
		}{{"enable.password_prompt", dl.PasswordPrompt}, {"enable.privileged", dl.Privileged}, {"enable.failed", dl.EnableFailed}} {
			if r.re != nil && r.re.MatchString("") {
				v.add(r.f, MatchesEmpty, "", "matches an empty line")
			}
		}
	}
	if len(d.PreLogin) > MaxRules {
		v.add("pre_login", TooMany, fmt.Sprint(MaxRules), fmt.Sprintf("more than %d answers", MaxRules))
	} else {
		for i, a := range d.PreLogin {
			f := fmt.Sprintf("pre_login[%d]", i)
			re := v.pattern(f+".match", a.Match, true)
			if re != nil && re.MatchString("") {
				v.add(f+".match", MatchesEmpty, "", "matches an empty line")
				continue
			}
			send := v.send(f+".send", a.Send)
			if re != nil {
				dl.PreLogin = append(dl.PreLogin, driver.Answer{Match: re, Send: send})
			}
		}
	}
	dl.CommandError = v.pattern("command_error", d.CommandError, false)
	if dl.CommandError != nil && dl.CommandError.MatchString("") {
		v.add("command_error", MatchesEmpty, "", "matches an empty line, so every command would fail")
	}
	dl.Exec = d.Exec
	if d.Exec && len(p.Transports) == 1 && p.Transports[0] == "telnet" {
		// Telnet always uses the shell; exec would be silently unused.
		v.add("exec", ExecNeedsSSH, "", "exec needs the ssh transport")
	}
	p.DefaultCommands = strings.Join(v.commands("default_commands", d.DefaultCommands, true), "\n")
	p.Strip = v.patterns("strip", d.Strip)
	p.Noise = v.patterns("noise", d.Noise)
	p.Secrets = v.secrets(d.Secrets)
	p.Restore = v.restore(d.Restore)
	return p
}

// secrets checks the secret rules: a name, and either an expression
// with a group named "secret" or a begin and an end that never match an
// empty line.
func (v *validator) secrets(list []Secret) []driver.SecretRule {
	if len(list) > MaxRules {
		v.add("secrets", TooMany, fmt.Sprint(MaxRules), fmt.Sprintf("more than %d rules", MaxRules))
		return nil
	}
	var out []driver.SecretRule
	for i, s := range list {
		f := fmt.Sprintf("secrets[%d]", i)
		name := v.text(f+".name", s.Name, MaxName, true)
		switch {
		case s.Match != "" && (s.Begin != "" || s.End != ""), s.Match == "" && (s.Begin == "" || s.End == ""):
			v.add(f, SecretForm, "", "set either match, or begin and end")
			continue
		case s.Match != "":
			re := v.pattern(f+".match", s.Match, true)
			if re == nil {
				continue
			}
			if !slices.Contains(re.SubexpNames(), driver.SecretGroup) {
				v.add(f+".match", NoSecretGroup, driver.SecretGroup,
					"names no group \"secret\": put the secret in (?P<secret>…), e.g. ^snmp community (?P<secret>\\S+)")
				continue
			}
			if name != "" {
				out = append(out, driver.SecretRule{Name: name, Match: s.Match})
			}
		default:
			begin, end := v.pattern(f+".begin", s.Begin, true), v.pattern(f+".end", s.End, true)
			ok := begin != nil && end != nil
			for _, x := range []struct {
				f  string
				re *regexp.Regexp
			}{{f + ".begin", begin}, {f + ".end", end}} {
				if x.re != nil && x.re.MatchString("") {
					v.add(x.f, MatchesEmpty, "", "matches an empty line")
					ok = false
				}
			}
			if ok && name != "" {
				out = append(out, driver.SecretRule{Name: name, Begin: s.Begin, End: s.End})
			}
		}
	}
	return out
}

// send checks an answer sent to the device: short, printable, with "\n"
// (the two characters, or a real newline) for the line end.
func (v *validator) send(field, s string) string {
	s = strings.ReplaceAll(s, `\n`, "\n")
	switch {
	case utf8.RuneCountInString(s) > MaxSend:
		v.add(field, TooLong, fmt.Sprint(MaxSend), fmt.Sprintf("longer than %d characters", MaxSend))
	case !printable(strings.ReplaceAll(s, "\n", ""), false):
		v.add(field, NotPrintable, "", "holds control characters other than the line end \\n")
	}
	return s
}

func printable(s string, newlines bool) bool {
	for _, r := range s {
		if r == '\n' && newlines || r == '\t' {
			continue
		}
		if !unicode.IsPrint(r) && r != ' ' || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// FromPlatform describes a driver platform in the definition format: the
// export of a custom platform, and of a built-in one as a starting point
// (its ID then gets the custom_ prefix, so the file imports as it is).
// The restore declaration comes along, so that an exported built-in
// imported as custom restores the same way. Driver settings the format
// does not carry (volatile prompt parts, the ProCurve enable username,
// telnet username suffixes, syslog patterns, restore notes) are left out.
func FromPlatform(p driver.Platform) Definition {
	str := func(re *regexp.Regexp) string {
		if re == nil {
			return ""
		}
		return re.String()
	}
	d := Definition{
		Schema: Schema, ID: p.ID, Name: p.Name, Vendor: p.Vendor, Notes: p.Notes,
		Transports: slices.Clone(p.Transports),
		Prompt:     str(p.Dialogue.Prompt), PromptLines: str(p.Dialogue.PromptLines),
		Pager: str(p.Dialogue.Pager), PagerAnswer: p.Dialogue.PagerAnswer,
		PagingOff:    slices.Clone(p.Dialogue.PagingOff),
		CommandError: str(p.Dialogue.CommandError),
		Exec:         p.Dialogue.Exec,
		Strip:        slices.Clone(p.Strip),
		Noise:        slices.Clone(p.Noise),
	}
	for _, r := range p.Secrets {
		d.Secrets = append(d.Secrets, Secret{Name: r.Name, Match: r.Match, Begin: r.Begin, End: r.End})
	}
	if !p.Custom {
		d.ID = BuiltinCopyID(p.ID)
		d.Name = p.Name + " (custom)"
	}
	if p.DefaultCommands != "" {
		d.DefaultCommands = strings.Split(p.DefaultCommands, "\n")
	}
	if p.Dialogue.Enable != "" {
		d.Enable = &Enable{Command: p.Dialogue.Enable, PasswordPrompt: str(p.Dialogue.PasswordPrompt),
			Privileged: str(p.Dialogue.Privileged), Failed: str(p.Dialogue.EnableFailed)}
	}
	for _, a := range p.Dialogue.PreLogin {
		d.PreLogin = append(d.PreLogin, Answer{Match: str(a.Match), Send: strings.ReplaceAll(a.Send, "\n", `\n`)})
	}
	d.Restore = restoreOf(p.Restore)
	return d
}

// BuiltinCopyID is the ID a built-in platform's export is given.
func BuiltinCopyID(id string) string {
	s := "custom_" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, strings.ToLower(id))
	if len(s) > len("custom_")+40 {
		s = s[:len("custom_")+40]
	}
	return s
}
