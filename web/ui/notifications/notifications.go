// Package notifications is the room of who hears about what: the channels events are sent to (webhook, chat tools,
// e-mail), the rules that say which events of which devices go to which
// channels, a "Send test" that really delivers, and each channel's
// delivery log. Reading needs settings.view; every change and the test
// need settings.update (notifications are settings of the appliance; the
// public API has no notification endpoints, so no new permission is
// needed). Channel secrets (webhook signing key, chat incoming-webhook
// URL, SMTP password) are sealed with the app's sealer (notify.Sealer)
// and never shown again: a blank field keeps the stored one, a box
// clears it. A webhook's custom header values are sealed with its
// signing key and never shown either: the form lists the header names,
// each with a blank value field that keeps the stored value and a box
// that removes the header.
package notifications

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"backupd/app/notify"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/web/ui/core"
)

// handlers are the notification pages.
type handlers struct{ *core.UI }

// Mount registers the channels and rules pages on mux.
func Mount(mux *http.ServeMux, c *core.UI) {
	u := &handlers{c}
	u.MountPage(mux, "GET "+core.PathNotifications, "settings.view", u.notifications)
	mux.Handle("GET /notifications/channels/new", u.Page("settings.update", u.newChannelForm))
	mux.Handle("POST /notifications/channels", u.Page("settings.update", u.createChannel))
	mux.Handle("GET /notifications/channels/{id}", u.Page("settings.view", u.channelDetail))
	mux.Handle("POST /notifications/channels/{id}", u.Page("settings.update", u.updateChannel))
	mux.Handle("POST /notifications/channels/{id}/delete", u.Page("settings.update", u.deleteChannel))
	mux.Handle("POST /notifications/channels/{id}/test", u.Page("settings.update", u.testChannel))
	mux.Handle("GET /notifications/rules/new", u.Page("settings.update", u.newNotifRuleForm))
	mux.Handle("POST /notifications/rules", u.Page("settings.update", u.createNotifRule))
	mux.Handle("GET /notifications/rules/{id}", u.Page("settings.view", u.notifRuleDetail))
	mux.Handle("POST /notifications/rules/{id}", u.Page("settings.update", u.updateNotifRule))
	mux.Handle("POST /notifications/rules/{id}/delete", u.Page("settings.update", u.deleteNotifRule))
}

// Bounds of the pages and the channel form.
const (
	// notifLogSize is how many deliveries a channel's log shows.
	notifLogSize = 50
	// notifGroupNames is how many group names a rule's row spells out.
	notifGroupNames = 3
	// notifTestTimeout bounds a "Send test" delivery.
	notifTestTimeout = notify.TestTimeout
	// Bounds of the channel form's fields.
	notifMaxURL     = 2048
	notifMaxHeaders = 4096
	notifMaxField   = 256
	notifMaxTo      = 4096
	notifMaxSecret  = 2048
)

var notifNotices = map[string]string{
	"channel_created": keyNotifChannelCreated,
	"channel_updated": keyNotifChannelUpdated,
	"channel_deleted": keyNotifChannelDeleted,
	"rule_created":    keyNotifRuleCreated,
	"rule_updated":    keyNotifRuleUpdated,
	"rule_deleted":    keyNotifRuleDeleted,
}

// notifOverview is the data of notifications.html.
type notifOverview struct {
	Channels []notifChannelRow
	Rules    []notifRuleRow
	Notice   string
}

type notifChannelRow struct {
	ID        int64
	Name      string
	TypeLabel string
	// Target is where it sends, as a page may show it: a webhook's
	// masked URL, an e-mail channel's server ("" for chat tools, whose
	// URL is the secret).
	Target    string
	Enabled   bool
	HasSecret bool
	Rules     int
	Health    notifHealth
}

// notifHealth is how a channel's last real deliveries went: State is
// "ok" (LastOK), "failing" (since Since, with the last error summarised)
// or "" when nothing was tried yet; NextRetry is the earliest retry of
// its failed deliveries.
type notifHealth struct {
	State     string
	LastOK    time.Time
	Since     time.Time
	Error     string
	NextRetry *time.Time
}

// notifHealthError bounds the error a list row quotes.
const notifHealthError = 160

func healthOf(h outbox.ChannelHealth) notifHealth {
	out := notifHealth{NextRetry: h.NextRetry}
	switch {
	case h.FailingSince != nil:
		out.State, out.Since = "failing", *h.FailingSince
		// Secret-free by notify's contract (the URL by scheme and host,
		// a receiver's answer with the URL's parts masked).
		out.Error = h.LastError
		if h.LastStatus != "" && out.Error == "" {
			out.Error = h.LastStatus
		}
		if r := []rune(out.Error); len(r) > notifHealthError {
			out.Error = string(r[:notifHealthError]) + "…"
		}
	case h.LastOKAt != nil:
		out.State, out.LastOK = "ok", *h.LastOKAt
	}
	return out
}

type notifRuleRow struct {
	ID         int64
	Name       string
	Enabled    bool
	Events     []string // message keys
	ScopeLabel string   // message key
	ScopeArgs  []any
	// GroupNames name the groups of a rule of scope groups (at most
	// notifGroupNames, MoreGroups counts the rest), for a user who sees
	// them all; otherwise ScopeLabel counts them.
	GroupNames  string
	MoreGroups  int
	Channels    []string
	IncludeDiff bool
	Threshold   int
}

func (u *handlers) notifications(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	channels, err := u.Store.NotificationChannels(ctx)
	if err != nil {
		return err
	}
	rules, err := u.Store.NotificationRules(ctx)
	if err != nil {
		return err
	}
	health, err := u.Store.ChannelHealths(ctx)
	if err != nil {
		return err
	}
	var groupNames map[int64]string
	scope := core.SessionOf(r).Scope()
	lang := core.LangOf(r)
	names := map[int64]string{}
	used := map[int64]int{}
	for _, c := range channels {
		names[c.ID] = c.Name
	}
	p := notifOverview{Notice: core.Notice(r, notifNotices)}
	for _, rl := range rules {
		row := notifRuleRow{ID: rl.ID, Name: rl.Name, Enabled: rl.Enabled, IncludeDiff: rl.IncludeDiff,
			Threshold: max(rl.FailureThreshold, 1), ScopeLabel: notifScopeKeys[rl.Scope]}
		for _, k := range outbox.EventKinds { // in the order the form lists them
			if slices.Contains(rl.Events, k) {
				row.Events = append(row.Events, notifEventKeys[k])
			}
		}
		switch rl.Scope {
		case db.RuleScopeGroups:
			row.ScopeArgs = []any{len(rl.GroupIDs)}
			// Names only to a user who sees every group of the rule.
			inScope, err := u.Store.ScheduleTargetInScope(ctx, scope, db.ScheduleTargetGroups, rl.GroupIDs)
			if err != nil {
				return err
			}
			if inScope && groupNames == nil {
				if groupNames, err = u.GroupNames(ctx); err != nil {
					return err
				}
			}
			if inScope {
				var list []string
				for _, id := range rl.GroupIDs {
					if n, ok := groupNames[id]; ok {
						list = append(list, n)
					}
				}
				slices.Sort(list)
				if len(list) > notifGroupNames {
					row.MoreGroups = len(list) - notifGroupNames
					list = list[:notifGroupNames]
				}
				row.GroupNames = strings.Join(list, u.Text(lang, core.KeyListSep))
			}
		case db.RuleScopeDevices:
			row.ScopeArgs = []any{len(rl.DeviceIDs)}
		}
		for _, id := range rl.ChannelIDs {
			used[id]++
			row.Channels = append(row.Channels, names[id])
		}
		p.Rules = append(p.Rules, row)
	}
	for _, c := range channels {
		settings, info, _ := notify.ChannelSettings(c)
		row := notifChannelRow{ID: c.ID, Name: c.Name, TypeLabel: notifTypeKeys[c.Type],
			Enabled: c.Enabled, HasSecret: info.HasSecret, Rules: used[c.ID], Health: healthOf(health[c.ID])}
		switch {
		case settings.Webhook != nil:
			row.Target = settings.Webhook.URL
		case settings.Email != nil:
			row.Target = settings.Email.Host
		}
		p.Channels = append(p.Channels, row)
	}
	return u.Render(w, r, http.StatusOK, "notifications.html", keyNotifTitle, p)
}
