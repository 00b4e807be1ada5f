package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"backupd/app/netguard"
	"backupd/app/notify"
	"backupd/db"
	"backupd/web/ui/core"
)

// Notifications: the channels events are sent to (webhook, chat tools,
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

const (
	// notifLogSize is how many deliveries a channel's log shows.
	notifLogSize = 50
	// notifGroupNames is how many group names a rule's row spells out.
	notifGroupNames = 3
	// notifTestTimeout bounds a "Send test" delivery.
	notifTestTimeout = 15 * time.Second
	// Bounds of the channel form's fields.
	notifMaxURL     = 2048
	notifMaxHeaders = 4096
	notifMaxField   = 256
	notifMaxTo      = 4096
	notifMaxSecret  = 2048
)

func (u *UI) mountNotifications(mux *http.ServeMux) {
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

func healthOf(h db.ChannelHealth) notifHealth {
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

func (u *UI) notifications(w http.ResponseWriter, r *http.Request) error {
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
		for _, k := range db.EventKinds { // in the order the form lists them
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

// notifOption is a choice of a select or a box: Label is a message key.
type notifOption struct {
	Value   string
	Label   string
	Checked bool
}

// notifChannelForm is the data of notifications_channel.html: a new
// channel (ID 0) or a stored one, its delivery log and the last test.
// It never holds a secret, only whether one is stored.
type notifChannelForm struct {
	ID       int64
	Heading  string
	Editable bool
	Fields   notifChannelFields
	Types    []notifOption
	// TypeLabel names the stored type (fixed once created).
	TypeLabel  string
	Securities []notifOption
	HasSecret  bool
	RulesUsing []string
	Errors     core.FormErrors
	Notice     string
	Retype     bool
	// URLMasked: the URL field shows a stored URL with hidden parts.
	URLMasked   bool
	Log         []notifLogRow
	Test        *notifTestResult
	LogSize     int
	TestTimeout int
}

// notifChannelFields are the form's values as typed (no secret, no
// header value).
type notifChannelFields struct {
	Name, Type, Language string
	Enabled, SkipVerify  bool
	// URL is the webhook URL as the field shows it: a stored one masked
	// (notify.MaskURL), one typed as typed until it is rendered, when it
	// is masked too. url is the URL to save: what was typed, or the
	// stored one when the field came back as it was shown (keepURL).
	URL     string
	url     string
	keepURL bool
	// StoredHeaders are the stored channel's custom headers (names; the
	// values stay sealed); NewHeaders the "Name: value" lines to add or
	// replace, rendered back with their names only.
	StoredHeaders                  []notifHeader
	NewHeaders                     string
	newHeaders                     map[string]string // parsed, with values
	typedHeader                    bool              // a header value was typed
	Host, Port, Security           string
	Username, From, To             string
	ClearSecret                    bool
	secret                         string // typed, never rendered
	webhookSecret, chatURL, smtpPw string
}

// notifHeader is a stored custom header as the form shows it: its name;
// value is what was typed to replace the stored one (never rendered).
type notifHeader struct {
	Name   string
	Remove bool
	value  string
}

type notifLogRow struct {
	At         time.Time
	Kind       string // message key
	Device     string
	State      string // message key
	StateClass string
	// NextRetry is when a failed delivery is tried again.
	NextRetry *time.Time
	Attempts  int
	Status    string
	Error     string
}

// notifTestResult is how "Send test" went.
type notifTestResult struct {
	OK     bool
	Status string
	Error  string
}

func notifTypes(chosen string) []notifOption {
	out := make([]notifOption, 0, len(notify.Types))
	for _, t := range notify.Types {
		out = append(out, notifOption{Value: t, Label: notifTypeKeys[t], Checked: t == chosen})
	}
	return out
}

func notifSecurities(chosen string) []notifOption {
	if chosen == "" {
		chosen = notify.SecuritySTARTTLS
	}
	var out []notifOption
	for _, s := range []string{notify.SecuritySTARTTLS, notify.SecurityTLS, notify.SecurityNone} {
		out = append(out, notifOption{Value: s, Label: notifSecurityKeys[s], Checked: s == chosen})
	}
	return out
}

func (u *UI) newChannelForm(w http.ResponseWriter, r *http.Request) error {
	typ := r.URL.Query().Get("type")
	if notifTypeKeys[typ] == "" {
		typ = notify.TypeWebhook
	}
	p := notifChannelForm{Editable: true, Fields: notifChannelFields{Type: typ, Enabled: true, Language: "en",
		Security: notify.SecuritySTARTTLS}}
	return u.renderChannelForm(w, r, http.StatusOK, p)
}

func (u *UI) renderChannelForm(w http.ResponseWriter, r *http.Request, status int, p notifChannelForm) error {
	// A URL is never rendered with what may be its credential: a typed
	// one that had such parts is masked (and must be typed again).
	if shown := notify.MaskURL(p.Fields.URL); shown != p.Fields.URL && !strings.HasPrefix(shown, "(") {
		p.Fields.URL = shown
		p.Retype = p.Retype || !p.Fields.keepURL
	}
	p.URLMasked = strings.Contains(p.Fields.URL, notify.Masked)
	p.Types, p.Securities = notifTypes(p.Fields.Type), notifSecurities(p.Fields.Security)
	p.TypeLabel = notifTypeKeys[p.Fields.Type]
	p.LogSize, p.TestTimeout = notifLogSize, int(notifTestTimeout/time.Second)
	if p.ID == 0 {
		return u.Render(w, r, status, "notifications_channel.html", keyNotifTitleNewChannel, p)
	}
	ctx := r.Context()
	rules, err := u.Store.NotificationRules(ctx)
	if err != nil {
		return err
	}
	for _, rl := range rules {
		for _, id := range rl.ChannelIDs {
			if id == p.ID {
				p.RulesUsing = append(p.RulesUsing, rl.Name)
			}
		}
	}
	log, err := u.Store.DeliveryLogIn(ctx, p.ID, core.SessionOf(r).Scope(), notifLogSize)
	if err != nil {
		return err
	}
	for _, d := range log {
		row := notifLogRow{At: d.UpdatedAt, Kind: notifEventKeys[d.Event.Kind], Device: d.Event.Payload.DeviceName,
			State: notifStateKeys[d.State], StateClass: d.State, Attempts: d.Attempts}
		if d.SentAt != nil {
			row.At = *d.SentAt
		}
		if d.State == db.DeliveryFailed {
			next := d.NextAttemptAt
			row.NextRetry = &next
		}
		if row.Kind == "" {
			row.Kind = keyNotifEventOther
		}
		if row.State == "" {
			row.State = keyNotifStatePending
		}
		if d.LastStatus != nil {
			row.Status = *d.LastStatus
		}
		if d.LastError != nil {
			row.Error = *d.LastError
		}
		p.Log = append(p.Log, row)
	}
	return u.Render(w, r, status, "notifications_channel.html", keyNotifTitleChannel, p)
}

// fieldsOf is a stored channel as the form shows it, and whether it
// keeps a secret of its own.
func fieldsOf(c db.NotificationChannel) (notifChannelFields, bool) {
	f := notifChannelFields{Name: c.Name, Type: c.Type, Language: c.Language, Enabled: c.Enabled}
	// The settings only: the secret and header values are never opened
	// for a page.
	ch, info, err := notify.ChannelSettings(c)
	if err != nil {
		return f, len(c.Secret) > 0 // settings that do not decode: the form starts blank
	}
	for _, name := range info.HeaderNames {
		f.StoredHeaders = append(f.StoredHeaders, notifHeader{Name: name})
	}
	switch {
	case ch.Webhook != nil:
		f.URL, f.SkipVerify = ch.Webhook.URL, ch.Webhook.SkipVerify
	case ch.Email != nil:
		e := ch.Email
		f.Host, f.Security, f.Username, f.From, f.SkipVerify = e.Host, e.Security, e.Username, e.From, e.SkipVerify
		if e.Port != 0 {
			f.Port = strconv.Itoa(e.Port)
		}
		f.To = strings.Join(e.To, "\n")
	case ch.Chat != nil:
		f.SkipVerify = ch.Chat.SkipVerify
	}
	return f, info.HasSecret
}

func (u *UI) pathChannel(r *http.Request) (db.NotificationChannel, error) {
	id, err := core.PathID(r)
	if err != nil {
		return db.NotificationChannel{}, err
	}
	return u.Store.GetNotificationChannel(r.Context(), id)
}

func (u *UI) channelDetail(w http.ResponseWriter, r *http.Request) error {
	c, err := u.pathChannel(r)
	if err != nil {
		return err
	}
	f, hasSecret := fieldsOf(c)
	p := notifChannelForm{ID: c.ID, Heading: c.Name, Editable: core.SessionOf(r).Can("settings.update"),
		Fields: f, HasSecret: hasSecret, Notice: core.Notice(r, notifNotices)}
	return u.renderChannelForm(w, r, http.StatusOK, p)
}

// readChannelFields reads the posted form; typ is the stored type of an
// existing channel ("" for a new one, which takes the posted type) and
// stored its custom header names.
func readChannelFields(r *http.Request, typ string, stored []string) (notifChannelFields, core.FormErrors) {
	var errs core.FormErrors
	field := func(name string, max int, key string) string {
		v, fits := core.Field(r, name, max)
		if !fits {
			errs.Add(name, key, max)
		}
		return strings.TrimSpace(v)
	}
	f := notifChannelFields{
		Name:       field("name", db.MaxNotificationNameLen, keyNotifErrNameTooLong),
		Type:       typ,
		Language:   r.PostFormValue("language"),
		Enabled:    core.Checked(r, "enabled"),
		SkipVerify: core.Checked(r, "skip_verify"),
		URL:        field("url", notifMaxURL, keyNotifErrTooLong),
		NewHeaders: field("headers", notifMaxHeaders, keyNotifErrTooLong),
		Host:       field("host", notifMaxField, keyNotifErrTooLong),
		Port:       field("port", 5, keyNotifErrPort),
		Security:   r.PostFormValue("security"),
		Username:   field("username", notifMaxField, keyNotifErrTooLong),
		From:       field("from", notifMaxField, keyNotifErrTooLong),
		To:         field("to", notifMaxTo, keyNotifErrTooLong),
	}
	f.url = f.URL
	if f.Type == "" {
		f.Type = r.PostFormValue("type")
	}
	if notifTypeKeys[f.Type] == "" {
		errs.Add("type", keyNotifErrType)
		f.Type = notify.TypeWebhook
	}
	if f.Language != "zh" {
		f.Language = "en"
	}
	if notifSecurityKeys[f.Security] == "" {
		f.Security = notify.SecuritySTARTTLS
	}
	// The secret of the channel's type: each type has its own field, so
	// that switching the type in the form never sends one as another.
	secretField := map[string]string{notify.TypeWebhook: "webhook_secret", notify.TypeEmail: "smtp_password"}[f.Type]
	if secretField == "" {
		secretField = "chat_url"
	}
	f.secret, _ = core.Field(r, secretField, notifMaxSecret+1)
	if f.Type != notify.TypeEmail {
		f.secret = strings.TrimSpace(f.secret)
	}
	if len(f.secret) > notifMaxSecret {
		errs.Add(secretField, keyNotifErrTooLong, notifMaxSecret)
	}
	f.ClearSecret = core.Checked(r, "clear_"+secretField)
	if f.Name == "" {
		errs.Add("name", keyNotifErrNameMissing)
	}
	if f.secret != "" && f.ClearSecret {
		errs.Add(secretField, keyNotifErrSetAndClear)
	}
	if f.Type == notify.TypeWebhook {
		readHeaderFields(r, &f, stored, &errs)
	} else {
		f.NewHeaders = "" // another type's panel: its values are never echoed
	}
	return f, errs
}

// readHeaderFields reads the custom headers: per stored header a value
// (blank keeps the stored one) and a "remove" box, then the "Name:
// value" lines to add (a stored name there replaces its value). The
// lines are kept with their names only, to be rendered back.
func readHeaderFields(r *http.Request, f *notifChannelFields, stored []string, errs *core.FormErrors) {
	names, values := r.PostForm["header_name"], r.PostForm["header_value"]
	remove := r.PostForm["header_remove"]
	typed := map[string]string{}
	for i := 0; i < len(names) && i < len(values) && i < len(stored); i++ {
		if v := strings.TrimSpace(values[i]); v != "" {
			typed[http.CanonicalHeaderKey(strings.TrimSpace(names[i]))] = v
		}
	}
	for _, name := range stored {
		h := notifHeader{Name: name, Remove: slices.Contains(remove, name)}
		h.value = typed[http.CanonicalHeaderKey(name)]
		if h.value != "" {
			f.typedHeader = true
			if h.Remove {
				errs.Add("header_value", keyNotifErrHeaderSetAndRemove, name)
			}
		}
		f.StoredHeaders = append(f.StoredHeaders, h)
	}
	var lines []string
	for i, line := range strings.Split(f.NewHeaders, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if ok && name != "" { // a line without ":" may be a bare value: not echoed
			lines = append(lines, name+": ")
		}
		if !ok || name == "" || value == "" {
			errs.Add("headers", keyNotifErrHeaderLine, i+1)
			continue
		}
		f.typedHeader = true
		if f.newHeaders == nil {
			f.newHeaders = map[string]string{}
		}
		f.newHeaders[http.CanonicalHeaderKey(name)] = value
	}
	f.NewHeaders = strings.Join(lines, "\n")
}

// headersOf merges the custom headers: the stored ones (old, opened)
// kept, replaced or removed as the form says, and the new lines.
func headersOf(f notifChannelFields, old map[string]string) map[string]string {
	out := map[string]string{}
	oldCanon := map[string]string{}
	for name, v := range old {
		oldCanon[http.CanonicalHeaderKey(name)] = v
	}
	for _, h := range f.StoredHeaders {
		canon := http.CanonicalHeaderKey(h.Name)
		switch {
		case h.Remove:
		case h.value != "":
			out[canon] = h.value
		default:
			if v, ok := oldCanon[canon]; ok {
				out[canon] = v
			}
		}
	}
	for name, v := range f.newHeaders {
		out[name] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// needsStored says whether saving f needs the stored channel's sealed
// secret opened: to keep the secret, or a header value not retyped.
func (f notifChannelFields) needsStored(hasSecret bool) bool {
	if f.keepURL || (hasSecret && f.secret == "" && !f.ClearSecret) {
		return true
	}
	for _, h := range f.StoredHeaders {
		if !h.Remove && h.value == "" {
			if _, replaced := f.newHeaders[http.CanonicalHeaderKey(h.Name)]; !replaced {
				return true
			}
		}
	}
	return false
}

// channelOf builds the channel the form describes; secret is the plain
// secret to keep (typed, or the stored one opened), nil for none, and
// headers a webhook's custom headers with their values.
func channelOf(f notifChannelFields, secret []byte, headers map[string]string, errs *core.FormErrors) notify.Channel {
	ch := notify.Channel{Type: f.Type, Name: f.Name, Language: f.Language, Secret: secret}
	switch f.Type {
	case notify.TypeWebhook:
		wh := &notify.WebhookConfig{URL: f.url, SkipVerify: f.SkipVerify}
		switch u, err := url.Parse(f.url); {
		case f.url == "":
			errs.Add("url", keyNotifErrURLMissing)
		case !f.keepURL && strings.Contains(f.url, notify.Masked):
			errs.Add("url", keyNotifErrURLMasked)
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			errs.Add("url", keyNotifErrURLInvalid)
		}
		wh.Headers = headers
		ch.Webhook = wh
	case notify.TypeEmail:
		e := &notify.EmailConfig{Host: f.Host, Security: f.Security, Username: f.Username, From: f.From, SkipVerify: f.SkipVerify}
		if f.Host == "" {
			errs.Add("host", keyNotifErrHostMissing)
		}
		if f.Port != "" {
			n, err := strconv.Atoi(f.Port)
			if err != nil || n < 1 || n > 65535 {
				errs.Add("port", keyNotifErrPort, 65535)
			}
			e.Port = n
		}
		if f.From == "" {
			errs.Add("from", keyNotifErrFromMissing)
		}
		for _, a := range strings.FieldsFunc(f.To, func(r rune) bool { return r == '\n' || r == ',' || r == ';' }) {
			if a = strings.TrimSpace(a); a != "" {
				e.To = append(e.To, a)
			}
		}
		if len(e.To) == 0 {
			errs.Add("to", keyNotifErrToMissing)
		}
		if f.Username != "" && len(secret) == 0 {
			errs.Add("smtp_password", keyNotifErrPasswordMissing)
		}
		ch.Email = e
	default:
		ch.Chat = &notify.ChatConfig{SkipVerify: f.SkipVerify}
		if len(secret) == 0 {
			errs.Add("chat_url", keyNotifErrChatURLMissing)
		}
	}
	return ch
}

// channelDestinationProblem adds the form's error when the channel's
// receiver is written as a link-local or cloud metadata address the
// outbound allow list does not hold (notify.Channel.CheckDestination),
// and reports whether it did.
func (u *UI) channelDestinationProblem(ctx context.Context, ch notify.Channel, errs *core.FormErrors) (bool, error) {
	outbound, err := netguard.Load(ctx, u.Store)
	if err != nil {
		return false, err
	}
	if err := ch.CheckDestination(outbound); err != nil {
		notifChannelProblem(err, errs)
		return true, nil
	}
	return false, nil
}

// notifChannelProblem turns what notify refuses of a channel into the
// form's message: the English detail names the setting, never its value.
func notifChannelProblem(err error, errs *core.FormErrors) {
	errs.Add("settings", keyNotifErrSettings, err.Error())
}

func (u *UI) createChannel(w http.ResponseWriter, r *http.Request) error {
	f, errs := readChannelFields(r, "", nil)
	fail := func(status int) error {
		p := notifChannelForm{Editable: true, Fields: f, Errors: errs, Retype: f.secret != "" || f.typedHeader}
		return u.renderChannelForm(w, r, status, p)
	}
	var plain []byte
	if f.secret != "" {
		plain = []byte(f.secret)
	}
	ch := channelOf(f, plain, headersOf(f, nil), &errs)
	if !errs.Empty() {
		return fail(http.StatusUnprocessableEntity)
	}
	if bad, err := u.channelDestinationProblem(r.Context(), ch, &errs); err != nil {
		return err
	} else if bad {
		return fail(http.StatusUnprocessableEntity)
	}
	config, sealed, err := notify.ChannelToStore(ch, notify.Sealer(u.Sealer))
	if err != nil {
		notifChannelProblem(err, &errs)
		return fail(http.StatusUnprocessableEntity)
	}
	c, err := u.Store.CreateNotificationChannel(r.Context(), db.NotificationChannel{Name: f.Name, Type: f.Type,
		Enabled: f.Enabled, Config: config, Secret: sealed, Language: f.Language})
	switch {
	case errors.Is(err, db.ErrNameExists):
		errs.Add("name", keyNotifErrNameExists, f.Name)
		return fail(http.StatusConflict)
	case err != nil:
		var invalid *db.ErrInvalidField
		if errors.As(err, &invalid) {
			errs.Add(invalid.Field, keyNotifErrSettings, invalid.Error())
			return fail(http.StatusUnprocessableEntity)
		}
		return err
	}
	u.Audit(r, "notification_channel.create", "notification_channel", c.ID, map[string]any{"name": c.Name,
		"type": c.Type, "secret": len(plain) > 0, "headers": len(f.newHeaders)})
	core.RedirectNotice(w, r, "/notifications/channels/"+strconv.FormatInt(c.ID, 10), "channel_created")
	return nil
}

func (u *UI) updateChannel(w http.ResponseWriter, r *http.Request) error {
	stored, err := u.pathChannel(r)
	if err != nil {
		return err
	}
	shown, info, _ := notify.ChannelSettings(stored)
	f, errs := readChannelFields(r, stored.Type, info.HeaderNames)
	// The URL field back as it was shown keeps the stored URL.
	f.keepURL = shown.Webhook != nil && f.URL != "" && f.URL == shown.Webhook.URL
	fail := func(status int) error {
		p := notifChannelForm{ID: stored.ID, Heading: stored.Name, Editable: true, Fields: f, Errors: errs,
			HasSecret: info.HasSecret, Retype: f.secret != "" || f.typedHeader}
		return u.renderChannelForm(w, r, status, p)
	}
	var old notify.Channel
	if f.needsStored(info.HasSecret) {
		old, err = notify.ChannelFromStore(stored, notify.Opener(u.Sealer))
		if err != nil {
			errs.Add("secret", keyNotifErrSecretLost)
			return fail(http.StatusUnprocessableEntity)
		}
	}
	var plain []byte
	switch {
	case f.secret != "":
		plain = []byte(f.secret)
	case f.ClearSecret:
	case info.HasSecret:
		plain = old.Secret
	}
	// Whether the URL changed, for the audit: a typed URL that looks like
	// the stored one when masked may still be another.
	urlChanged := false
	if shown.Webhook != nil && !f.keepURL {
		urlChanged = notify.MaskURL(f.url) != shown.Webhook.URL
		if !urlChanged && strings.Contains(shown.Webhook.URL, notify.Masked) {
			prev := old
			if prev.Webhook == nil {
				prev, _ = notify.ChannelFromStore(stored, notify.Opener(u.Sealer))
			}
			urlChanged = prev.Webhook == nil || prev.Webhook.URL != f.url
		}
	}
	var oldHeaders map[string]string
	if old.Webhook != nil {
		oldHeaders = old.Webhook.Headers
		if f.keepURL {
			f.url = old.Webhook.URL
		}
	}
	headersChanged := f.newHeaders != nil
	for _, h := range f.StoredHeaders {
		headersChanged = headersChanged || h.Remove || h.value != ""
	}
	ch := channelOf(f, plain, headersOf(f, oldHeaders), &errs)
	if !errs.Empty() {
		return fail(http.StatusUnprocessableEntity)
	}
	if bad, err := u.channelDestinationProblem(r.Context(), ch, &errs); err != nil {
		return err
	} else if bad {
		return fail(http.StatusUnprocessableEntity)
	}
	config, sealed, err := notify.ChannelToStore(ch, notify.Sealer(u.Sealer))
	if err != nil {
		notifChannelProblem(err, &errs)
		return fail(http.StatusUnprocessableEntity)
	}
	var fields []string
	c, err := u.Store.UpdateNotificationChannel(r.Context(), stored.ID, func(c *db.NotificationChannel) error {
		fields = nil // the store may run this again (a transaction retried)
		for _, x := range []struct {
			name    string
			changed bool
		}{
			{"name", c.Name != f.Name}, {"enabled", c.Enabled != f.Enabled}, {"language", c.Language != f.Language},
			{"settings", !bytes.Equal(compactJSON(c.Config), compactJSON(config))},
			{"url", urlChanged},
			{"secret", f.secret != "" || (f.ClearSecret && info.HasSecret)},
			{"headers", headersChanged},
		} {
			if x.changed {
				fields = append(fields, x.name)
			}
		}
		c.Name, c.Enabled, c.Language, c.Config, c.Secret = f.Name, f.Enabled, f.Language, config, sealed
		return nil
	})
	switch {
	case errors.Is(err, db.ErrNameExists):
		errs.Add("name", keyNotifErrNameExists, f.Name)
		return fail(http.StatusConflict)
	case err != nil:
		var invalid *db.ErrInvalidField
		if errors.As(err, &invalid) {
			errs.Add(invalid.Field, keyNotifErrSettings, invalid.Error())
			return fail(http.StatusUnprocessableEntity)
		}
		return err
	}
	if fields == nil {
		fields = []string{}
	}
	u.Audit(r, "notification_channel.update", "notification_channel", c.ID, map[string]any{"name": c.Name, "fields": fields})
	core.RedirectNotice(w, r, "/notifications/channels/"+strconv.FormatInt(c.ID, 10), "channel_updated")
	return nil
}

func (u *UI) deleteChannel(w http.ResponseWriter, r *http.Request) error {
	c, err := u.pathChannel(r)
	if err != nil {
		return err
	}
	err = u.Store.DeleteNotificationChannel(r.Context(), c.ID)
	switch {
	case errors.Is(err, db.ErrChannelInUse):
		f, hasSecret := fieldsOf(c)
		p := notifChannelForm{ID: c.ID, Heading: c.Name, Editable: true, Fields: f, HasSecret: hasSecret}
		p.Errors.Add("delete", keyNotifErrChannelInUse, c.Name)
		return u.renderChannelForm(w, r, http.StatusConflict, p)
	case err != nil:
		return err
	}
	u.Audit(r, "notification_channel.delete", "notification_channel", c.ID, map[string]any{"name": c.Name, "type": c.Type})
	core.RedirectNotice(w, r, core.PathNotifications, "channel_deleted")
	return nil
}

// notifTestEvent is what "Send test" delivers: a made-up change of a
// made-up device, kind "notification.test", so that a receiver can tell
// it from a real event.
func notifTestEvent(now time.Time) notify.Event {
	return notify.Event{
		Schema: notify.Schema, ID: "test-" + strconv.FormatInt(now.UnixNano(), 10), Kind: NotifTestKind,
		At: now.UTC().Truncate(time.Second), Trigger: "manual",
		Device: &notify.Device{ID: 0, Name: "backupd-test", Host: "192.0.2.1", Platform: "test", GroupPath: []string{}},
	}
}

// NotifTestKind is the event kind of a "Send test" delivery.
const NotifTestKind = "notification.test"

func (u *UI) testChannel(w http.ResponseWriter, r *http.Request) error {
	c, err := u.pathChannel(r)
	if err != nil {
		return err
	}
	f, hasSecret := fieldsOf(c)
	p := notifChannelForm{ID: c.ID, Heading: c.Name, Editable: true, Fields: f, HasSecret: hasSecret}
	res := u.sendTest(r.Context(), c)
	p.Test = &res
	u.Audit(r, "notification_channel.test", "notification_channel", c.ID, map[string]any{"name": c.Name,
		"ok": res.OK, "status": res.Status})
	return u.renderChannelForm(w, r, http.StatusOK, p)
}

// sendTest delivers the test event to c now and says how it went; its
// error names what failed, never a secret (notify's errors do not hold
// one).
func (u *UI) sendTest(ctx context.Context, c db.NotificationChannel) notifTestResult {
	ch, err := notify.ChannelFromStore(c, notify.Opener(u.Sealer))
	if err != nil {
		return notifTestResult{Error: err.Error()}
	}
	outbound, err := netguard.Load(ctx, u.Store)
	if err != nil {
		return notifTestResult{Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, notifTestTimeout)
	defer cancel()
	now := u.Now()
	res := notify.Send(ctx, ch, []notify.Event{notifTestEvent(now)}, notify.Options{
		DeliveryID: "test-" + strconv.FormatInt(c.ID, 10) + "-" + strconv.FormatInt(now.UnixNano(), 10),
		UserAgent:  "backupd/" + u.Version, Timeout: notifTestTimeout, Now: u.Now, Outbound: outbound,
	})
	out := notifTestResult{OK: res.OK(), Status: res.Status}
	if res.Err != nil {
		out.Error = res.Err.Error()
	}
	return out
}

// compactJSON is raw without insignificant spaces, for comparing.
func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// notifTypeKeys name each channel type.
var notifTypeKeys = map[string]string{
	db.ChannelWebhook:    keyNotifTypeWebhook,
	db.ChannelSlack:      keyNotifTypeSlack,
	db.ChannelMattermost: keyNotifTypeMattermost,
	db.ChannelTeams:      keyNotifTypeTeams,
	db.ChannelChat:       keyNotifTypeChat,
	db.ChannelEmail:      keyNotifTypeEmail,
}

// notifSecurityKeys name each SMTP connection security.
var notifSecurityKeys = map[string]string{
	notify.SecuritySTARTTLS: keyNotifSecuritySTARTTLS,
	notify.SecurityTLS:      keyNotifSecurityTLS,
	notify.SecurityNone:     keyNotifSecurityNone,
}

// notifEventKeys name each event kind.
var notifEventKeys = map[db.EventKind]string{
	db.EventConfigChanged:     keyNotifEventConfigChanged,
	db.EventFirstBackup:       keyNotifEventFirstBackup,
	db.EventBackupFailed:      keyNotifEventBackupFailed,
	db.EventBackupRecovered:   keyNotifEventBackupRecovered,
	db.EventDeviceUnreachable: keyNotifEventDeviceUnreachable,
	db.EventDeviceReachable:   keyNotifEventDeviceReachable,
	db.EventHostKeyChanged:    keyNotifEventHostkeyChanged,
	db.EventBackupStale:       keyNotifEventBackupStale,
	db.EventGitPushFailed:     keyNotifEventGitPushFailed,
	db.EventGitPushRecovered:  keyNotifEventGitPushRecovered,
}

// notifScopeKeys name each rule scope in the list.
var notifScopeKeys = map[string]string{
	db.RuleScopeAll:     keyNotifScopeAll,
	db.RuleScopeGroups:  keyNotifScopeGroupsCount,
	db.RuleScopeDevices: keyNotifScopeDevicesCount,
}

// notifStateKeys name each delivery state.
var notifStateKeys = map[string]string{
	db.DeliveryPending: keyNotifStatePending,
	db.DeliverySending: keyNotifStateSending,
	db.DeliveryFailed:  keyNotifStateFailed,
	db.DeliverySent:    keyNotifStateSent,
	db.DeliveryGaveUp:  keyNotifStateGaveUp,
}
