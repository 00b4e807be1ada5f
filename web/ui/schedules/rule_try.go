package schedules

import (
	"errors"
	"net/http"
	"regexp"
	"strings"

	"backupd/app/backup"
	"backupd/app/collect/driver"
	"backupd/db"
)

// "Try it": which lines of a sample the rules would ignore.

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

// tryRules runs the stored rules — and, if given, a pattern not saved yet
// — over a sample configuration for a platform, and shows which lines
// change detection would ignore. Nothing is stored.
func (u *handlers) tryRules(w http.ResponseWriter, r *http.Request) error {
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
