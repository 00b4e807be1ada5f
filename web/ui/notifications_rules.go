package ui

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"backupd/app/inventory"
	"backupd/db"
	"backupd/web/ui/core"
)

// Notification rules: events × scope (all devices, groups with their
// subgroups, devices) × channels. A user whose groups are limited works
// only on rules within its groups; "all devices" is for users who see
// every group, as for schedules.

// notifRuleForm is the data of notifications_rule.html.
type notifRuleForm struct {
	ID       int64
	Heading  string
	Editable bool
	Fields   notifRuleFields
	Events   []notifOption
	Groups   []core.GroupCheck
	Channels []notifChannelChoice
	// CanTargetAll: only a user who sees every group may choose all
	// devices.
	CanTargetAll bool
	MaxThreshold int
	MaxDevices   int
	Errors       core.FormErrors
}

type notifChannelChoice struct {
	ID        int64
	Name      string
	TypeLabel string
	Enabled   bool
	Checked   bool
}

// notifRuleFields are the rule form's values as typed.
type notifRuleFields struct {
	Name        string
	Enabled     bool
	Events      map[db.EventKind]bool
	Scope       string
	GroupIDs    map[int64]bool
	Devices     string
	ChannelIDs  map[int64]bool
	IncludeDiff bool
	Threshold   string
}

func parseNotifRuleFields(r *http.Request) notifRuleFields {
	name, _ := core.Field(r, "name", db.MaxNotificationNameLen*4)
	f := notifRuleFields{
		Name: strings.TrimSpace(name), Enabled: core.Checked(r, "enabled"), Events: map[db.EventKind]bool{},
		Scope: r.PostFormValue("scope"), GroupIDs: map[int64]bool{}, ChannelIDs: map[int64]bool{},
		IncludeDiff: core.Checked(r, "include_diff"), Threshold: strings.TrimSpace(r.PostFormValue("failure_threshold")),
	}
	f.Devices, _ = core.Field(r, "devices", 200_000)
	for _, v := range r.PostForm["events"] {
		if k := db.EventKind(v); k.Valid() {
			f.Events[k] = true
		}
	}
	ids := func(field string, into map[int64]bool) {
		for _, v := range r.PostForm[field] {
			if id, err := strconv.ParseInt(v, 10, 64); err == nil && id > 0 {
				into[id] = true
			}
		}
	}
	ids("group_ids", f.GroupIDs)
	ids("channel_ids", f.ChannelIDs)
	return f
}

func (u *UI) notifRuleFormFor(r *http.Request, id int64, f notifRuleFields, editable bool) (notifRuleForm, error) {
	ctx := r.Context()
	s := core.SessionOf(r)
	p := notifRuleForm{ID: id, Fields: f, Editable: editable, CanTargetAll: s.Scope().All,
		MaxThreshold: db.MaxRuleThreshold, MaxDevices: inventory.MaxTargetDevices}
	for _, k := range db.EventKinds {
		p.Events = append(p.Events, notifOption{Value: string(k), Label: notifEventKeys[k], Checked: f.Events[k]})
	}
	groups, err := u.Store.ScheduleGroups(ctx, s.Scope())
	if err != nil {
		return p, err
	}
	p.Groups = core.GroupChecklist(groups, f.GroupIDs)
	channels, err := u.Store.NotificationChannels(ctx)
	if err != nil {
		return p, err
	}
	for _, c := range channels {
		p.Channels = append(p.Channels, notifChannelChoice{ID: c.ID, Name: c.Name, TypeLabel: notifTypeKeys[c.Type],
			Enabled: c.Enabled, Checked: f.ChannelIDs[c.ID]})
	}
	return p, nil
}

func (u *UI) renderNotifRule(w http.ResponseWriter, r *http.Request, status int, id int64, heading string, f notifRuleFields, editable bool, errs core.FormErrors) error {
	p, err := u.notifRuleFormFor(r, id, f, editable)
	if err != nil {
		return err
	}
	p.Heading, p.Errors = heading, errs
	title := keyNotifTitleNewRule
	if id != 0 {
		title = keyNotifTitleRule
	}
	return u.Render(w, r, status, "notifications_rule.html", title, p)
}

func (u *UI) newNotifRuleForm(w http.ResponseWriter, r *http.Request) error {
	f := notifRuleFields{Enabled: true, Events: map[db.EventKind]bool{db.EventConfigChanged: true, db.EventBackupFailed: true,
		db.EventBackupRecovered: true}, Scope: db.RuleScopeAll, GroupIDs: map[int64]bool{}, ChannelIDs: map[int64]bool{},
		IncludeDiff: true, Threshold: "1"}
	if !core.SessionOf(r).Scope().All {
		f.Scope = db.RuleScopeGroups
	}
	return u.renderNotifRule(w, r, http.StatusOK, 0, "", f, true, core.FormErrors{})
}

func (u *UI) pathNotifRule(r *http.Request) (db.NotificationRule, error) {
	id, err := core.PathID(r)
	if err != nil {
		return db.NotificationRule{}, err
	}
	return u.Store.GetNotificationRule(r.Context(), id)
}

// ruleInScope reports whether the rule's devices lie in the user's groups.
func (u *UI) ruleInScope(ctx context.Context, s *core.Session, rl db.NotificationRule) (bool, error) {
	scope := s.Scope()
	switch rl.Scope {
	case db.RuleScopeGroups:
		return u.Store.ScheduleTargetInScope(ctx, scope, db.ScheduleTargetGroups, rl.GroupIDs)
	case db.RuleScopeDevices:
		return u.Store.ScheduleTargetInScope(ctx, scope, db.ScheduleTargetDevices, rl.DeviceIDs)
	}
	return scope.All, nil
}

func (u *UI) notifRuleDetail(w http.ResponseWriter, r *http.Request) error {
	rl, err := u.pathNotifRule(r)
	if err != nil {
		return err
	}
	s := core.SessionOf(r)
	inScope, err := u.ruleInScope(r.Context(), s, rl)
	if err != nil {
		return err
	}
	f, err := u.ruleFields(r.Context(), rl, inScope)
	if err != nil {
		return err
	}
	return u.renderNotifRule(w, r, http.StatusOK, rl.ID, rl.Name, f, inScope && s.Can("settings.update"), core.FormErrors{})
}

// ruleFields is a stored rule as the form shows it; device names only to
// users who see those devices.
func (u *UI) ruleFields(ctx context.Context, rl db.NotificationRule, inScope bool) (notifRuleFields, error) {
	f := notifRuleFields{Name: rl.Name, Enabled: rl.Enabled, Events: map[db.EventKind]bool{}, Scope: rl.Scope,
		GroupIDs: map[int64]bool{}, ChannelIDs: map[int64]bool{}, IncludeDiff: rl.IncludeDiff,
		Threshold: strconv.Itoa(max(rl.FailureThreshold, 1))}
	for _, k := range rl.Events {
		f.Events[k] = true
	}
	for _, id := range rl.GroupIDs {
		f.GroupIDs[id] = true
	}
	for _, id := range rl.ChannelIDs {
		f.ChannelIDs[id] = true
	}
	if rl.Scope == db.RuleScopeDevices && inScope {
		refs, err := u.Store.ScheduleDeviceNames(ctx, rl.DeviceIDs)
		if err != nil {
			return f, err
		}
		names := make([]string, len(refs))
		for i, d := range refs {
			names[i] = d.Name
		}
		f.Devices = strings.Join(names, "\n")
	}
	return f, nil
}

// ruleFromFields checks the form and turns it into a rule. Asking for
// devices beyond the user's groups is refused outright (forbidden): the
// form never offers it.
func (u *UI) ruleFromFields(ctx context.Context, s *core.Session, f notifRuleFields) (db.NotificationRule, core.FormErrors, error) {
	var errs core.FormErrors
	rl := db.NotificationRule{Name: f.Name, Enabled: f.Enabled, Scope: f.Scope, IncludeDiff: f.IncludeDiff}
	switch {
	case f.Name == "":
		errs.Add("name", keyNotifErrNameMissing)
	case len([]rune(f.Name)) > db.MaxNotificationNameLen:
		errs.Add("name", keyNotifErrNameTooLong, db.MaxNotificationNameLen)
	}
	for _, k := range db.EventKinds {
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

func (u *UI) createNotifRule(w http.ResponseWriter, r *http.Request) error {
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

func (u *UI) updateNotifRule(w http.ResponseWriter, r *http.Request) error {
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

func (u *UI) deleteNotifRule(w http.ResponseWriter, r *http.Request) error {
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
