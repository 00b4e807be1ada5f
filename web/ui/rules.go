package ui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"backupd/app/backup"
	"backupd/app/collect/driver"
	"backupd/db"
)

// Change-detection rule page bounds.
const (
	maxRuleDescription = 500
	// maxRuleSample bounds the "try it" text; the whole request is capped
	// at 1 MiB anyway (maxFormBytes).
	maxRuleSample = 1_000_000
	// maxRuleTryShown bounds the noise lines the "try it" result lists;
	// the counts cover them all.
	maxRuleTryShown = 500
	// ruleNoiseMark is what backup.NoiseFilter.Strip puts where it masked
	// part of a line.
	ruleNoiseMark = "\x00"
)

// errRulesChanged refuses a change made on a page that shows an older list
// of rules: rules are addressed by position, and the position may now
// name another rule.
var errRulesChanged = errors.New("noise rules changed since the page was shown")

// ruleBuiltin is one platform's built-in rules.
type ruleBuiltin struct {
	ID       string
	Name     string
	Patterns []string
}

// ruleRow is one user rule; No is its position from 1.
type ruleRow struct {
	No           int
	Pattern      string
	Platform     string
	PlatformName string
	Description  string
}

type rulePlatform struct {
	ID   string
	Name string
}

// ruleFields are a rule form's values as typed.
type ruleFields struct {
	Pattern     string
	Platform    string
	Description string
}

// ruleTryFields are the "try it" form's values.
type ruleTryFields struct {
	Sample   string
	Platform string
	Pattern  string
}

// ruleTryResult is what the rules make of a sample: how many lines it has,
// how many are ignored whole or in part, and those lines (the first
// maxRuleTryShown; More counts the rest).
type ruleTryResult struct {
	Lines   int
	Dropped int
	Masked  int
	Shown   []ruleTryLine
	More    int
}

// ruleTryLine is one noise line: dropped whole, or compared with its
// masked parts replaced (Parts).
type ruleTryLine struct {
	No      int
	Text    string
	Dropped bool
	Parts   []ruleMaskPart
	By      []ruleMessage
}

type ruleMaskPart struct {
	Text   string
	Masked bool
}

// ruleMessage is a message key with its arguments.
type ruleMessage struct {
	Key  string
	Args []any
}

// rulesPage is the data of rules.html.
type rulesPage struct {
	Builtin   []ruleBuiltin
	NoBuiltin string
	Rules     []ruleRow
	MaxRules  int
	Version   string
	Platforms []rulePlatform
	// Form is the add form; Error (with Args) a refusal of a change.
	Form   ruleFields
	Error  string
	Args   []any
	Notice string
	Try    ruleTryFields
	// TryResult is set once a sample was tried; TryError (with TryArgs)
	// when it could not be.
	TryResult *ruleTryResult
	TryError  string
	TryArgs   []any
	MaxSample int
}

// ruleEditPage is the data of rules_edit.html.
type ruleEditPage struct {
	No        int
	Form      ruleFields
	Version   string
	Platforms []rulePlatform
	Error     string
	Args      []any
}

var ruleNotices = map[string]string{
	"added":   keyRulesNoticeAdded,
	"updated": keyRulesNoticeUpdated,
	"deleted": keyRulesNoticeDeleted,
}

// rulesVersion identifies a list of rules, so that a form made from it
// can tell whether the list changed since.
func rulesVersion(rules []db.NoiseRule) string {
	if rules == nil {
		rules = []db.NoiseRule{}
	}
	raw, _ := json.Marshal(rules)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

func rulePlatforms() []rulePlatform {
	var out []rulePlatform
	for _, id := range driver.IDs() {
		info, _ := driver.Lookup(id)
		out = append(out, rulePlatform{ID: id, Name: info.Name})
	}
	return out
}

func rulePlatformName(id string) string {
	if info, ok := driver.Lookup(id); ok {
		return info.Name
	}
	return id
}

func (u *UI) rules(w http.ResponseWriter, r *http.Request) error {
	p := rulesPage{Notice: ruleNotices[r.URL.Query().Get("done")]}
	return u.renderRules(w, r, http.StatusOK, p)
}

// renderRules shows the rules page: p's form, notice and "try it" parts
// with the rules as stored now.
func (u *UI) renderRules(w http.ResponseWriter, r *http.Request, status int, p rulesPage) error {
	rules, err := u.Store.NoiseRules(r.Context())
	if err != nil {
		return err
	}
	p.Version = rulesVersion(rules)
	p.MaxRules = backup.MaxNoiseRules
	p.MaxSample = maxRuleSample
	p.Platforms = rulePlatforms()
	for i, rule := range rules {
		row := ruleRow{No: i + 1, Pattern: rule.Pattern, Platform: rule.Platform, Description: rule.Description}
		if rule.Platform != "" {
			row.PlatformName = rulePlatformName(rule.Platform)
		}
		p.Rules = append(p.Rules, row)
	}
	var none []string
	for _, pl := range p.Platforms {
		res := driver.NoiseRules(pl.ID)
		if len(res) == 0 {
			none = append(none, pl.Name)
			continue
		}
		b := ruleBuiltin{ID: pl.ID, Name: pl.Name}
		for _, re := range res {
			b.Patterns = append(b.Patterns, re.String())
		}
		p.Builtin = append(p.Builtin, b)
	}
	p.NoBuiltin = strings.Join(none, ", ")
	return u.Render(w, r, status, "rules.html", keyRulesTitle, p)
}

func parseRuleFields(r *http.Request) ruleFields {
	// The pattern is kept exactly as typed: in a regular expression a
	// space is a character like any other.
	return ruleFields{
		Pattern:     r.PostFormValue("pattern"),
		Platform:    r.PostFormValue("platform"),
		Description: strings.TrimSpace(r.PostFormValue("description")),
	}
}

func (f ruleFields) rule() db.NoiseRule {
	return db.NoiseRule{Pattern: f.Pattern, Platform: f.Platform, Description: f.Description}
}

// changeRules applies edit to the stored rules in one transaction, if they
// still are the version the form was made from, and stores the result once
// backup.ValidateNoiseRules accepts it (as backup.SaveNoiseRules would).
func (u *UI) changeRules(ctx context.Context, version string, edit func([]db.NoiseRule) ([]db.NoiseRule, error)) ([]db.NoiseRule, error) {
	var rules []db.NoiseRule
	err := u.Store.UpdateSetting(ctx, db.SettingNoiseRules, &rules, func(bool) error {
		if rulesVersion(rules) != version {
			return errRulesChanged
		}
		next, err := edit(slices.Clone(rules))
		if err != nil {
			return err
		}
		if err := backup.ValidateNoiseRules(next); err != nil {
			return err
		}
		if next == nil {
			next = []db.NoiseRule{}
		}
		rules = next
		return nil
	})
	return rules, err
}

// ruleRefusal turns a refused change into a status and a message; ok is
// false for an error that is no refusal.
func ruleRefusal(err error) (status int, msg ruleMessage, ok bool) {
	var bad *backup.NoiseRuleError
	switch {
	case errors.Is(err, errRulesChanged):
		return http.StatusConflict, ruleMessage{Key: keyRulesChanged}, true
	case errors.As(err, &bad) && bad.Index < 0:
		return http.StatusUnprocessableEntity, ruleMessage{Key: keyRulesTooMany, Args: []any{backup.MaxNoiseRules}}, true
	case errors.As(err, &bad):
		return http.StatusUnprocessableEntity, ruleMessage{Key: keyRuleInvalid, Args: []any{bad.Index + 1, bad.Field, bad.Message}}, true
	}
	return 0, ruleMessage{}, false
}

// checkRuleFields refuses what ValidateNoiseRules does not look at.
func checkRuleFields(f ruleFields) (ruleMessage, bool) {
	if utf8.RuneCountInString(f.Description) > maxRuleDescription {
		return ruleMessage{Key: keyRuleDescTooLong, Args: []any{maxRuleDescription}}, false
	}
	return ruleMessage{}, true
}

func (u *UI) auditRules(r *http.Request, change string, no int, rules []db.NoiseRule) {
	u.AuditAs(r, "settings.update", "settings", db.SettingNoiseRules, map[string]any{"change": change, "rule": no, "rules": len(rules)})
}

func (u *UI) addRule(w http.ResponseWriter, r *http.Request) error {
	f := parseRuleFields(r)
	p := rulesPage{Form: f}
	if msg, ok := checkRuleFields(f); !ok {
		p.Error, p.Args = msg.Key, msg.Args
		return u.renderRules(w, r, http.StatusUnprocessableEntity, p)
	}
	rules, err := u.changeRules(r.Context(), r.PostFormValue("version"), func(rs []db.NoiseRule) ([]db.NoiseRule, error) {
		return append(rs, f.rule()), nil
	})
	if status, msg, ok := ruleRefusal(err); ok {
		p.Error, p.Args = msg.Key, msg.Args
		return u.renderRules(w, r, status, p)
	}
	if err != nil {
		return err
	}
	u.auditRules(r, "add", len(rules), rules)
	http.Redirect(w, r, "/rules?done=added", http.StatusSeeOther)
	return nil
}

// ruleNumber reads {n}, a rule's position from 1.
func ruleNumber(r *http.Request) (int, error) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 || n > backup.MaxNoiseRules {
		return 0, db.ErrNotFound
	}
	return n, nil
}

func (u *UI) ruleForm(w http.ResponseWriter, r *http.Request) error {
	n, err := ruleNumber(r)
	if err != nil {
		return err
	}
	rules, err := u.Store.NoiseRules(r.Context())
	if err != nil {
		return err
	}
	if n > len(rules) {
		return db.ErrNotFound
	}
	rule := rules[n-1]
	p := ruleEditPage{
		No: n, Form: ruleFields{Pattern: rule.Pattern, Platform: rule.Platform, Description: rule.Description},
		Version: rulesVersion(rules), Platforms: rulePlatforms(),
	}
	return u.Render(w, r, http.StatusOK, "rules_edit.html", keyRulesTitleEdit, p)
}

func (u *UI) updateRule(w http.ResponseWriter, r *http.Request) error {
	n, err := ruleNumber(r)
	if err != nil {
		return err
	}
	f := parseRuleFields(r)
	version := r.PostFormValue("version")
	p := ruleEditPage{No: n, Form: f, Version: version, Platforms: rulePlatforms()}
	if msg, ok := checkRuleFields(f); !ok {
		p.Error, p.Args = msg.Key, msg.Args
		return u.Render(w, r, http.StatusUnprocessableEntity, "rules_edit.html", keyRulesTitleEdit, p)
	}
	rules, err := u.changeRules(r.Context(), version, func(rs []db.NoiseRule) ([]db.NoiseRule, error) {
		if n > len(rs) {
			return nil, db.ErrNotFound
		}
		rs[n-1] = f.rule()
		return rs, nil
	})
	if status, msg, ok := ruleRefusal(err); ok {
		p.Error, p.Args = msg.Key, msg.Args
		return u.Render(w, r, status, "rules_edit.html", keyRulesTitleEdit, p)
	}
	if err != nil {
		return err
	}
	u.auditRules(r, "update", n, rules)
	http.Redirect(w, r, "/rules?done=updated", http.StatusSeeOther)
	return nil
}

func (u *UI) deleteRule(w http.ResponseWriter, r *http.Request) error {
	n, err := ruleNumber(r)
	if err != nil {
		return err
	}
	rules, err := u.changeRules(r.Context(), r.PostFormValue("version"), func(rs []db.NoiseRule) ([]db.NoiseRule, error) {
		if n > len(rs) {
			return nil, db.ErrNotFound
		}
		return slices.Delete(rs, n-1, n), nil
	})
	if status, msg, ok := ruleRefusal(err); ok {
		return u.renderRules(w, r, status, rulesPage{Error: msg.Key, Args: msg.Args})
	}
	if err != nil {
		return err
	}
	u.auditRules(r, "delete", n, rules)
	http.Redirect(w, r, "/rules?done=deleted", http.StatusSeeOther)
	return nil
}

// tryRules runs the stored rules — and, if given, a pattern not saved yet
// — over a sample configuration for a platform, and shows which lines
// change detection would ignore. Nothing is stored.
func (u *UI) tryRules(w http.ResponseWriter, r *http.Request) error {
	f := ruleTryFields{Sample: r.PostFormValue("sample"), Platform: r.PostFormValue("platform"), Pattern: r.PostFormValue("pattern")}
	p := rulesPage{Try: f}
	fail := func(status int, key string, args ...any) error {
		p.TryError, p.TryArgs = key, args
		return u.renderRules(w, r, status, p)
	}
	if len(f.Sample) > maxRuleSample {
		p.Try.Sample = ""
		return fail(http.StatusRequestEntityTooLarge, keyRulesTryTooLarge, maxRuleSample)
	}
	if f.Platform != "" {
		if _, ok := driver.Lookup(f.Platform); !ok {
			return fail(http.StatusUnprocessableEntity, keyRulesTryPlatform)
		}
	}
	user, err := u.Store.NoiseRules(r.Context())
	if err != nil {
		return err
	}
	candidate := -1
	if f.Pattern != "" {
		rule := db.NoiseRule{Pattern: f.Pattern}
		var bad *backup.NoiseRuleError
		if err := backup.ValidateNoiseRules([]db.NoiseRule{rule}); errors.As(err, &bad) {
			return fail(http.StatusUnprocessableEntity, keyRulesTryPattern, bad.Message)
		} else if err != nil {
			return err
		}
		user = append(user, rule)
		candidate = len(user) - 1
	}
	filter, err := backup.NewNoiseFilter(f.Platform, user)
	if status, msg, ok := ruleRefusal(err); ok {
		return fail(status, msg.Key, msg.Args...)
	}
	if err != nil {
		return err
	}
	res := tryNoiseRules(filter, ruleLabels(f.Platform, user, candidate), f.Sample)
	p.TryResult = &res
	return u.renderRules(w, r, http.StatusOK, p)
}

// ruleLabel names a rule in the "try it" result.
type ruleLabel struct {
	re *regexp.Regexp
	by ruleMessage
}

// ruleLabels lists the rules that apply to platform, to say which of them
// matched a noise line.
func ruleLabels(platform string, user []db.NoiseRule, candidate int) []ruleLabel {
	var out []ruleLabel
	for _, re := range driver.NoiseRules(platform) {
		out = append(out, ruleLabel{re, ruleMessage{Key: keyRulesByBuiltin, Args: []any{re.String()}}})
	}
	for i, rule := range user {
		if rule.Platform != "" && rule.Platform != platform {
			continue
		}
		re, err := regexp.Compile(rule.Pattern)
		if err != nil {
			continue // NewNoiseFilter refused it already
		}
		by := ruleMessage{Key: keyRulesByUser, Args: []any{i + 1}}
		if i == candidate {
			by = ruleMessage{Key: keyRulesByCandidate}
		}
		out = append(out, ruleLabel{re, by})
	}
	return out
}

// tryNoiseRules applies filter to the sample line by line, as change
// detection compares a configuration (after backup.Normalise).
func tryNoiseRules(filter *backup.NoiseFilter, labels []ruleLabel, sample string) ruleTryResult {
	var res ruleTryResult
	text := strings.TrimSuffix(backup.Normalise(sample), "\n")
	if text == "" {
		return res
	}
	for i, line := range strings.Split(text, "\n") {
		res.Lines++
		if !filter.IsNoise(line) {
			continue
		}
		stripped := filter.Strip(line)
		l := ruleTryLine{No: i + 1, Text: line, Dropped: stripped == ""}
		if l.Dropped {
			res.Dropped++
		} else {
			res.Masked++
			l.Parts = ruleMaskParts(strings.TrimSuffix(stripped, "\n"))
		}
		if len(res.Shown) >= maxRuleTryShown {
			res.More++
			continue
		}
		for _, lb := range labels {
			if lb.re.MatchString(line) {
				l.By = append(l.By, lb.by)
			}
		}
		res.Shown = append(res.Shown, l)
	}
	return res
}

// ruleMaskParts splits a line as compared into its kept text and its
// masked stretches.
func ruleMaskParts(compared string) []ruleMaskPart {
	var out []ruleMaskPart
	for i, piece := range strings.Split(compared, ruleNoiseMark) {
		if i > 0 {
			out = append(out, ruleMaskPart{Masked: true})
		}
		if piece != "" {
			out = append(out, ruleMaskPart{Text: piece})
		}
	}
	return out
}
