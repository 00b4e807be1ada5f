package core

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"backupd/app/identity/oidc"
	"backupd/app/netguard"
	"backupd/db"
	"backupd/web"
)

// PathOIDCLogin starts an OpenID Connect sign-in (web/ui/sso).
const PathOIDCLogin = "/login/oidc"

// SignInOption is a way to sign in beside the password form: a button of
// the sign-in page.
type SignInOption struct {
	// ID names the button (id "sign-in-ID").
	ID string
	// Name is the provider as the button names it.
	Name string
	// URL starts the sign-in, coming back to the page asked for.
	URL string
}

// SignInOptions are the sign-in page's buttons: single sign-on when it
// is enabled. The password form stays whatever this says (local
// accounts are the way in when the provider is down), so a failure to
// read the settings is logged and shows no button.
func (u *UI) SignInOptions(ctx context.Context, next string) []SignInOption {
	s, err := u.Store.OIDCConfig(ctx)
	if err != nil {
		u.Log.Warn("reading the single sign-on settings failed", "err", err)
		return nil
	}
	if !s.Enabled {
		return nil
	}
	target := PathOIDCLogin
	if next = LocalPath(next, ""); next != "" {
		target += "?" + url.Values{"next": {next}}.Encode()
	}
	return []SignInOption{{ID: "oidc", Name: OIDCName(s), URL: target}}
}

// OIDCName is the provider as pages name it: the settings' name, else
// the issuer's host.
func OIDCName(s db.OIDCSettings) string {
	if n := strings.TrimSpace(s.Name); n != "" {
		return n
	}
	if iu, err := url.Parse(s.Issuer); err == nil && iu.Host != "" {
		return iu.Host
	}
	return "OpenID Connect"
}

// oidcProviders keeps the provider of each configuration, for the whole
// process: keyed by the settings themselves, so that a process serving
// several interfaces (tests) shares it without mix-up, and a change of
// the settings is a new key.
var oidcProviders oidc.Cache

// OIDCProvider is the OpenID Connect provider of settings s, its
// discovery read once per settings version. The error says what failed
// (oidc.ErrSettings, oidc.ErrDiscovery, or the client secret or the
// outbound allow list unreadable); it names no secret.
func (u *UI) OIDCProvider(ctx context.Context, s db.OIDCSettings) (*oidc.Provider, error) {
	secret := ""
	if len(s.ClientSecret) > 0 {
		if u.Sealer == nil {
			return nil, errors.New("the client secret cannot be unsealed: no data-directory key")
		}
		var err error
		if secret, err = u.Sealer.Open(s.ClientSecret, db.OIDCSecretPurpose); err != nil {
			return nil, errors.New("the client secret cannot be unsealed with this data-directory key")
		}
	}
	outbound, err := netguard.Load(ctx, u.Store)
	if err != nil {
		return nil, err
	}
	return oidcProviders.Get(ctx, s, secret, outbound)
}

// signOutPage is the data of signout.html.
type signOutPage struct {
	// Name is the provider's, URL its end-session endpoint's.
	Name string
	URL  string
}

// Leave ends the request's session and sends the browser on: for a
// session the OpenID Connect provider signed in, to the provider's
// end-session endpoint (which comes back to the sign-in page), so that
// the next "Sign in with …" asks again; otherwise to the sign-in page.
// Our session ends first, whatever the provider does.
//
// The way to the provider is a page that moves on by itself (a Refresh
// header, and a link), not a redirect: sign-out is a form, and the
// pages' Content-Security-Policy (form-action 'self') stops a form's
// redirect to another origin.
func (u *UI) Leave(w http.ResponseWriter, r *http.Request) error {
	var to, name string
	var atProvider bool
	if s := SessionOf(r); s != nil {
		to, name, atProvider = u.providerSignOut(r.Context(), s)
	}
	if err := u.EndSession(w, r); err != nil {
		return err
	}
	if !atProvider {
		http.Redirect(w, r, PathLogin+"?out=1", http.StatusSeeOther)
		return nil
	}
	stateOf(r).session = nil
	w.Header().Set("Refresh", "0; url="+to)
	return u.Render(w, r, http.StatusOK, "signout.html", keyTitleSignOut, signOutPage{Name: name, URL: to})
}

// providerSignOut is the provider's end-session URL for session s, and
// the provider's name, when s was signed in by the provider and the
// provider has one.
func (u *UI) providerSignOut(ctx context.Context, s *Session) (to, name string, ok bool) {
	ws, err := u.Store.WebSessionByID(ctx, s.id)
	if err != nil || ws.Method != db.SessionOIDC {
		return "", "", false
	}
	settings, err := u.Store.OIDCConfig(ctx)
	if err != nil || !settings.Enabled {
		return "", "", false
	}
	p, err := u.OIDCProvider(ctx, settings)
	if err != nil {
		u.Log.Warn("signing out at the OpenID Connect provider is not possible", "request_id", web.RequestID(ctx), "err", err)
		return "", "", false
	}
	idToken := ""
	if len(ws.IDPToken) > 0 && u.Sealer != nil {
		if idToken, err = u.Sealer.Open(ws.IDPToken, oidc.IDTokenPurpose); err != nil {
			u.Log.Warn("the session's ID token cannot be unsealed; signing out at the provider without it", "request_id", web.RequestID(ctx))
			idToken = ""
		}
	}
	to, ok = p.EndSessionURL(idToken, strings.TrimRight(settings.ExternalURL, "/")+PathLogin+"?out=1")
	return to, OIDCName(settings), ok
}
