package notifications

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"backupd/app/netguard"
	"backupd/app/notify"
	"backupd/db"
	"backupd/web/ui/core"
)

// Creating, changing and deleting a channel. Secrets and header values
// are sealed (notify.ChannelToStore) and never shown again.

// channelDestinationProblem adds the form's error when the channel's
// receiver is written as a link-local or cloud metadata address the
// outbound allow list does not hold (notify.Channel.CheckDestination),
// and reports whether it did.
func (u *handlers) channelDestinationProblem(ctx context.Context, ch notify.Channel, errs *core.FormErrors) (bool, error) {
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

func (u *handlers) createChannel(w http.ResponseWriter, r *http.Request) error {
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

func (u *handlers) updateChannel(w http.ResponseWriter, r *http.Request) error {
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

func (u *handlers) deleteChannel(w http.ResponseWriter, r *http.Request) error {
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

// compactJSON is raw without insignificant spaces, for comparing.
func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}
