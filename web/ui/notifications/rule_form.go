package notifications

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"backupd/app/inventory"
	"backupd/db"
	"backupd/db/outbox"
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
	Events      map[outbox.EventKind]bool
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
		Name: strings.TrimSpace(name), Enabled: core.Checked(r, "enabled"), Events: map[outbox.EventKind]bool{},
		Scope: r.PostFormValue("scope"), GroupIDs: map[int64]bool{}, ChannelIDs: map[int64]bool{},
		IncludeDiff: core.Checked(r, "include_diff"), Threshold: strings.TrimSpace(r.PostFormValue("failure_threshold")),
	}
	f.Devices, _ = core.Field(r, "devices", 200_000)
	for _, v := range r.PostForm["events"] {
		if k := outbox.EventKind(v); k.Valid() {
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

func (u *handlers) notifRuleFormFor(r *http.Request, id int64, f notifRuleFields, editable bool) (notifRuleForm, error) {
	ctx := r.Context()
	s := core.SessionOf(r)
	p := notifRuleForm{ID: id, Fields: f, Editable: editable, CanTargetAll: s.Scope().All,
		MaxThreshold: db.MaxRuleThreshold, MaxDevices: inventory.MaxTargetDevices}
	for _, k := range outbox.EventKinds {
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

func (u *handlers) renderNotifRule(w http.ResponseWriter, r *http.Request, status int, id int64, heading string, f notifRuleFields, editable bool, errs core.FormErrors) error {
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

func (u *handlers) newNotifRuleForm(w http.ResponseWriter, r *http.Request) error {
	f := notifRuleFields{Enabled: true, Events: map[outbox.EventKind]bool{outbox.EventConfigChanged: true, outbox.EventBackupFailed: true,
		outbox.EventBackupRecovered: true}, Scope: db.RuleScopeAll, GroupIDs: map[int64]bool{}, ChannelIDs: map[int64]bool{},
		IncludeDiff: true, Threshold: "1"}
	if !core.SessionOf(r).Scope().All {
		f.Scope = db.RuleScopeGroups
	}
	return u.renderNotifRule(w, r, http.StatusOK, 0, "", f, true, core.FormErrors{})
}

func (u *handlers) pathNotifRule(r *http.Request) (db.NotificationRule, error) {
	id, err := core.PathID(r)
	if err != nil {
		return db.NotificationRule{}, err
	}
	return u.Store.GetNotificationRule(r.Context(), id)
}

// ruleInScope reports whether the rule's devices lie in the user's groups.
func (u *handlers) ruleInScope(ctx context.Context, s *core.Session, rl db.NotificationRule) (bool, error) {
	scope := s.Scope()
	switch rl.Scope {
	case db.RuleScopeGroups:
		return u.Store.ScheduleTargetInScope(ctx, scope, db.ScheduleTargetGroups, rl.GroupIDs)
	case db.RuleScopeDevices:
		return u.Store.ScheduleTargetInScope(ctx, scope, db.ScheduleTargetDevices, rl.DeviceIDs)
	}
	return scope.All, nil
}

func (u *handlers) notifRuleDetail(w http.ResponseWriter, r *http.Request) error {
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
func (u *handlers) ruleFields(ctx context.Context, rl db.NotificationRule, inScope bool) (notifRuleFields, error) {
	f := notifRuleFields{Name: rl.Name, Enabled: rl.Enabled, Events: map[outbox.EventKind]bool{}, Scope: rl.Scope,
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
