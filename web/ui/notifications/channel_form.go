package notifications

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"backupd/app/notify"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/web/ui/core"
)

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

func (u *handlers) newChannelForm(w http.ResponseWriter, r *http.Request) error {
	typ := r.URL.Query().Get("type")
	if notifTypeKeys[typ] == "" {
		typ = notify.TypeWebhook
	}
	p := notifChannelForm{Editable: true, Fields: notifChannelFields{Type: typ, Enabled: true, Language: "en",
		Security: notify.SecuritySTARTTLS}}
	return u.renderChannelForm(w, r, http.StatusOK, p)
}

func (u *handlers) renderChannelForm(w http.ResponseWriter, r *http.Request, status int, p notifChannelForm) error {
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
		if d.State == outbox.DeliveryFailed {
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

func (u *handlers) pathChannel(r *http.Request) (db.NotificationChannel, error) {
	id, err := core.PathID(r)
	if err != nil {
		return db.NotificationChannel{}, err
	}
	return u.Store.GetNotificationChannel(r.Context(), id)
}

func (u *handlers) channelDetail(w http.ResponseWriter, r *http.Request) error {
	c, err := u.pathChannel(r)
	if err != nil {
		return err
	}
	f, hasSecret := fieldsOf(c)
	p := notifChannelForm{ID: c.ID, Heading: c.Name, Editable: core.SessionOf(r).Can("settings.update"),
		Fields: f, HasSecret: hasSecret, Notice: core.Notice(r, notifNotices)}
	return u.renderChannelForm(w, r, http.StatusOK, p)
}
