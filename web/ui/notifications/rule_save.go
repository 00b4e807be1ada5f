package notifications

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"

	"backupd/db"
	"backupd/db/outbox"
	"backupd/web/ui/core"
)

// Checking and saving a rule: its events, its scope within the user's
// groups, its channels and its failure threshold.

// ruleFromFields checks the form and turns it into a rule. Asking for
// devices beyond the user's groups is refused outright (forbidden): the
// form never offers it.
func (u *handlers) ruleFromFields(ctx context.Context, s *core.Session, f notifRuleFields) (db.NotificationRule, core.FormErrors, error) {
	var errs core.FormErrors
	rl := db.NotificationRule{Name: f.Name, Enabled: f.Enabled, Scope: f.Scope, IncludeDiff: f.IncludeDiff}
	switch {
	case f.Name == "":
		errs.Add("name", keyNotifErrNameMissing)
	case len([]rune(f.Name)) > db.MaxNotificationNameLen:
		errs.Add("name", keyNotifErrNameTooLong, db.MaxNotificationNameLen)
	}
	for _, k := range outbox.EventKinds {
		if f.Events[k] {
			rl.Events = append(rl.Events, k)
		}
	}
	if len(rl.Events) == 0 {
		errs.Add("events", keyNotifErrNoEvents)
	}
	scope := s.Scope()
	switch f.Scope {
	case db.RuleScopeAll:
		if !scope.All {
			return rl, errs, core.Forbidden()
		}
	case db.RuleScopeGroups:
		for id := range f.GroupIDs {
			rl.GroupIDs = append(rl.GroupIDs, id)
		}
		slices.Sort(rl.GroupIDs)
		if len(rl.GroupIDs) == 0 {
			errs.Add("scope", keyNotifErrNoGroups)
			break
		}
		ok, err := u.Store.ScheduleTargetInScope(ctx, scope, db.ScheduleTargetGroups, rl.GroupIDs)
		if err != nil {
			return rl, errs, err
		}
		if !ok {
			return rl, errs, core.Forbidden()
		}
	case db.RuleScopeDevices:
		ids, err := u.TargetDevices(ctx, scope, f.Devices, &errs)
		if err != nil {
			return rl, errs, err
		}
		rl.DeviceIDs = ids
	default:
		errs.Add("scope", keyNotifErrScope)
	}
	for id := range f.ChannelIDs {
		rl.ChannelIDs = append(rl.ChannelIDs, id)
	}
	slices.Sort(rl.ChannelIDs)
	if len(rl.ChannelIDs) == 0 {
		errs.Add("channels", keyNotifErrNoChannels)
	}
	n, err := strconv.Atoi(f.Threshold)
	if f.Threshold == "" {
		n, err = 1, nil
	}
	if err != nil || n < 1 || n > db.MaxRuleThreshold {
		errs.Add("failure_threshold", keyNotifErrThreshold, db.MaxRuleThreshold)
	}
	rl.FailureThreshold = n
	return rl, errs, nil
}

// notifRuleStoreError turns what the store refuses into the form's
// message; other errors are returned.
func notifRuleStoreError(err error, f notifRuleFields, errs *core.FormErrors) error {
	var invalid *db.ErrInvalidField
	var ref *db.ErrReference
	switch {
	case errors.Is(err, db.ErrNameExists):
		errs.Add("name", keyNotifErrRuleNameExists, f.Name)
	case errors.As(err, &invalid):
		errs.Add(invalid.Field, keyNotifErrSettings, invalid.Error())
	case errors.As(err, &ref):
		errs.Add(ref.Field, keyNotifErrSettings, ref.Field+": "+ref.Message)
	default:
		return err
	}
	return nil
}

func (u *handlers) createNotifRule(w http.ResponseWriter, r *http.Request) error {
	s := core.SessionOf(r)
	f := parseNotifRuleFields(r)
	rl, errs, err := u.ruleFromFields(r.Context(), s, f)
	if err != nil {
		return err
	}
	if errs.Empty() {
		rl, err = u.Store.CreateNotificationRule(r.Context(), rl)
		if err == nil {
			u.Audit(r, "notification_rule.create", "notification_rule", rl.ID, notifRuleAudit(rl))
			core.RedirectNotice(w, r, core.PathNotifications, "rule_created")
			return nil
		}
		if err := notifRuleStoreError(err, f, &errs); err != nil {
			return err
		}
	}
	return u.renderNotifRule(w, r, http.StatusUnprocessableEntity, 0, "", f, true, errs)
}

func (u *handlers) updateNotifRule(w http.ResponseWriter, r *http.Request) error {
	stored, err := u.pathNotifRule(r)
	if err != nil {
		return err
	}
	s := core.SessionOf(r)
	if ok, err := u.ruleInScope(r.Context(), s, stored); err != nil {
		return err
	} else if !ok {
		return core.Forbidden()
	}
	f := parseNotifRuleFields(r)
	rl, errs, err := u.ruleFromFields(r.Context(), s, f)
	if err != nil {
		return err
	}
	if errs.Empty() {
		rl, err = u.Store.UpdateNotificationRule(r.Context(), stored.ID, func(x *db.NotificationRule) error {
			x.Name, x.Enabled, x.Events, x.Scope = rl.Name, rl.Enabled, rl.Events, rl.Scope
			x.GroupIDs, x.DeviceIDs, x.ChannelIDs = rl.GroupIDs, rl.DeviceIDs, rl.ChannelIDs
			x.IncludeDiff, x.FailureThreshold = rl.IncludeDiff, rl.FailureThreshold
			return nil
		})
		if err == nil {
			u.Audit(r, "notification_rule.update", "notification_rule", rl.ID, notifRuleAudit(rl))
			core.RedirectNotice(w, r, core.PathNotifications, "rule_updated")
			return nil
		}
		if err := notifRuleStoreError(err, f, &errs); err != nil {
			return err
		}
	}
	return u.renderNotifRule(w, r, http.StatusUnprocessableEntity, stored.ID, stored.Name, f, true, errs)
}

func (u *handlers) deleteNotifRule(w http.ResponseWriter, r *http.Request) error {
	rl, err := u.pathNotifRule(r)
	if err != nil {
		return err
	}
	if ok, err := u.ruleInScope(r.Context(), core.SessionOf(r), rl); err != nil {
		return err
	} else if !ok {
		return core.Forbidden()
	}
	if err := u.Store.DeleteNotificationRule(r.Context(), rl.ID); err != nil {
		return err
	}
	u.Audit(r, "notification_rule.delete", "notification_rule", rl.ID, map[string]any{"name": rl.Name})
	core.RedirectNotice(w, r, core.PathNotifications, "rule_deleted")
	return nil
}

// notifRuleAudit is what the audit log keeps of a rule.
func notifRuleAudit(rl db.NotificationRule) map[string]any {
	events := make([]string, len(rl.Events))
	for i, k := range rl.Events {
		events[i] = string(k)
	}
	return map[string]any{"name": rl.Name, "enabled": rl.Enabled, "events": events, "scope": rl.Scope,
		"groups": len(rl.GroupIDs), "devices": len(rl.DeviceIDs), "channel_ids": rl.ChannelIDs,
		"include_diff": rl.IncludeDiff, "failure_threshold": rl.FailureThreshold}
}
