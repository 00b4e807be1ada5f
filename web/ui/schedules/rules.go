package schedules

import (
	"net/http"
	"strings"

	"backupd/app/backup"
	"backupd/app/collect/driver"
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

func (u *handlers) rules(w http.ResponseWriter, r *http.Request) error {
	p := rulesPage{Notice: ruleNotices[r.URL.Query().Get("done")]}
	return u.renderRules(w, r, http.StatusOK, p)
}

// renderRules shows the rules page: p's form, notice and "try it" parts
// with the rules as stored now.
func (u *handlers) renderRules(w http.ResponseWriter, r *http.Request, status int, p rulesPage) error {
	rules, err := u.Store.NoiseRules(r.Context())
	if err != nil {
		return err
	}
	p.Version = backup.NoiseRulesVersion(rules)
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
