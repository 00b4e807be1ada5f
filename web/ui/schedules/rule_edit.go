package schedules

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"backupd/app/backup"
	"backupd/db"
)

// Adding, changing and deleting a user rule. Rules are addressed by
// position; every change names the version of the list it was made from
// (backup.ChangeNoiseRules).

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

// ruleRefusal turns a refused change into a status and a message; ok is
// false for an error that is no refusal.
func ruleRefusal(err error) (status int, msg ruleMessage, ok bool) {
	var bad *backup.NoiseRuleError
	switch {
	case errors.Is(err, backup.ErrNoiseRulesChanged):
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

func (u *handlers) auditRules(r *http.Request, change string, no int, rules []db.NoiseRule) {
	u.AuditAs(r, "settings.update", "settings", db.SettingNoiseRules, map[string]any{"change": change, "rule": no, "rules": len(rules)})
}

func (u *handlers) addRule(w http.ResponseWriter, r *http.Request) error {
	f := parseRuleFields(r)
	p := rulesPage{Form: f}
	if msg, ok := checkRuleFields(f); !ok {
		p.Error, p.Args = msg.Key, msg.Args
		return u.renderRules(w, r, http.StatusUnprocessableEntity, p)
	}
	rules, err := backup.ChangeNoiseRules(r.Context(), u.Store, r.PostFormValue("version"), func(rs []db.NoiseRule) ([]db.NoiseRule, error) {
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

func (u *handlers) ruleForm(w http.ResponseWriter, r *http.Request) error {
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
		Version: backup.NoiseRulesVersion(rules), Platforms: rulePlatforms(),
	}
	return u.Render(w, r, http.StatusOK, "rules_edit.html", keyRulesTitleEdit, p)
}

func (u *handlers) updateRule(w http.ResponseWriter, r *http.Request) error {
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
	rules, err := backup.ChangeNoiseRules(r.Context(), u.Store, version, func(rs []db.NoiseRule) ([]db.NoiseRule, error) {
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

func (u *handlers) deleteRule(w http.ResponseWriter, r *http.Request) error {
	n, err := ruleNumber(r)
	if err != nil {
		return err
	}
	rules, err := backup.ChangeNoiseRules(r.Context(), u.Store, r.PostFormValue("version"), func(rs []db.NoiseRule) ([]db.NoiseRule, error) {
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
