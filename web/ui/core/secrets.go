package core

import (
	"net/http"
	"net/url"

	"backupd/app/auth"
	"backupd/app/collect/driver"
	"backupd/app/redact"
)

// How pages show the secrets inside configurations (passwords, keys,
// communities): masked as app/redact masks them, for everyone, when the
// setting masks views; a user with auth.PermRevealSecrets may ask a page
// for them (ParamReveal), and each such page is audited.

// ParamReveal is the query parameter ("reveal=1") by which a page shows
// the secrets it would mask.
const ParamReveal = "reveal"

// AuditReveal is the audit action of a page that showed secrets.
const AuditReveal = "config.reveal"

// Secrets is how one page shows the secrets of a device's configuration.
type Secrets struct {
	// Keys masks them; nil when the page shows them.
	Keys *redact.Keyring
	// Masked: the page masks them. Revealed: the user asked for them and
	// may see them. CanReveal: the user may ask.
	Masked, Revealed, CanReveal bool
	// RevealURL is the page with the secrets, HideURL without.
	RevealURL, HideURL string
}

// Mask masks text, the configuration of device deviceID of platform, as
// the page shows it.
func (s Secrets) Mask(deviceID int64, platform, text string) string {
	if s.Keys == nil {
		return text
	}
	return s.Keys.Device(deviceID, platform).Text(text)
}

// Keep adds the page's reveal to a link of the same page's parts (its
// raw text, its lines), so that they show what the page shows.
func (s Secrets) Keep(link string) string {
	if !s.Revealed || link == "" {
		return link
	}
	u, err := url.Parse(link)
	if err != nil {
		return link
	}
	q := u.Query()
	q.Set(ParamReveal, "1")
	u.RawQuery = q.Encode()
	return u.String()
}

// MaskerFor is the masker of what a device, of a platform being tried
// (its rules: secrets), printed for the request's user: nil when the
// setting does not mask views or the user may reveal secrets, who then
// sees them (the caller's audit entry says so).
func (u *UI) MaskerFor(r *http.Request, deviceID int64, secrets *driver.Secrets) (*redact.Masker, error) {
	set, err := u.Store.SecretMaskingSettings(r.Context())
	if err != nil {
		return nil, err
	}
	if !set.Views || SessionOf(r).Can(auth.PermRevealSecrets) {
		return nil, nil
	}
	return u.keys.DeviceWith(deviceID, secrets), nil
}

// SecretsFor decides how the request's page shows secrets. A request
// that asks to reveal them (ParamReveal) without the permission is
// refused (Forbidden); one that may is audited as AuditReveal on target
// (a device, "device" and its id) with details, which name what was
// shown, never a secret.
func (u *UI) SecretsFor(r *http.Request, targetType string, targetID int64, details map[string]any) (Secrets, error) {
	set, err := u.Store.SecretMaskingSettings(r.Context())
	if err != nil {
		return Secrets{}, err
	}
	if !set.Views {
		return Secrets{}, nil
	}
	s := Secrets{Masked: true, CanReveal: SessionOf(r).Can(auth.PermRevealSecrets)}
	q := r.URL.Query()
	asked := q.Get(ParamReveal) != ""
	if asked && !s.CanReveal {
		return Secrets{}, Forbidden()
	}
	q.Del(ParamReveal)
	hide := *r.URL
	hide.RawQuery = q.Encode()
	hide.Scheme, hide.Host = "", ""
	s.HideURL = hide.RequestURI()
	q.Set(ParamReveal, "1")
	reveal := hide
	reveal.RawQuery = q.Encode()
	s.RevealURL = reveal.RequestURI()
	if asked {
		s.Masked, s.Revealed = false, true
		u.Audit(r, AuditReveal, targetType, targetID, details)
		return s, nil
	}
	s.Keys = u.keys
	return s, nil
}
