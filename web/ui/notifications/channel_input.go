package notifications

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"backupd/app/notify"
	"backupd/db"
	"backupd/web/ui/core"
)

// Reading the channel form: each type's fields, the secret of the
// channel's own type, and a webhook's custom headers (stored values kept,
// replaced or removed).

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
