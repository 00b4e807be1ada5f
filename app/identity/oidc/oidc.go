// Package oidc is backupd's OpenID Connect relying party: the
// authorization code flow with PKCE (S256) and a nonce, the ID token
// verified with github.com/coreos/go-oidc (signature through the
// provider's JWKS, issuer, audience, expiry), and the claims that name
// the person read from it (or from the userinfo endpoint when the token
// lacks them). It knows nothing of HTTP routes or users: web/ui/sso
// drives it, and app/identity turns the Identity into a backupd user.
//
// Every conversation with the provider is bounded by a timeout and goes
// through the outbound policy (app/netguard); the provider's CA
// certificate is pinned when the settings give one.
package oidc

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"backupd/app/netguard"
	"backupd/db"
)

const (
	// CallbackPath is where the provider sends the browser back to,
	// below the external URL.
	CallbackPath = "/login/oidc/callback"
	// DefaultTimeout bounds each request to the provider.
	DefaultTimeout = 10 * time.Second
	// IDTokenPurpose seals the ID token a session keeps for sign-out.
	IDTokenPurpose = "oidc id token"
	// DefaultUsernameClaim and DefaultGroupsClaim are the claims read
	// when the settings name none.
	DefaultUsernameClaim = "preferred_username"
	DefaultGroupsClaim   = "groups"
	// MaxGroups and MaxGroupBytes bound the groups claim: a token with
	// more, or longer, values is refused rather than cut (a cut list
	// could drop the group that matters, or keep one by accident).
	MaxGroups     = 1000
	MaxGroupBytes = 1024
	// MaxUsernameBytes bounds the username, as for local accounts.
	MaxUsernameBytes = 128
)

// DefaultScopes are requested beyond "openid" when the settings name
// none.
var DefaultScopes = []string{"profile", "email", "groups"}

// What can go wrong, for the caller to tell the person and the audit log
// (Reason). The errors wrap one of these with the detail, which names no
// token, code or secret.
var (
	// ErrSettings: the settings cannot work (see Validate).
	ErrSettings = errors.New("the OpenID Connect settings are incomplete or wrong")
	// ErrDiscovery: the provider could not be reached, or its discovery
	// document is unusable.
	ErrDiscovery = errors.New("the OpenID Connect provider's discovery failed")
	// ErrExchange: the token endpoint refused the authorization code.
	ErrExchange = errors.New("the provider refused to exchange the authorization code")
	// ErrToken: no ID token, or one whose signature, issuer or audience
	// is wrong.
	ErrToken = errors.New("the ID token is not valid")
	// ErrExpired: the ID token has expired.
	ErrExpired = errors.New("the ID token has expired")
	// ErrNonce: the ID token was not issued for this sign-in.
	ErrNonce = errors.New("the ID token's nonce is not this sign-in's")
	// ErrClaims: the username or groups claim is missing or unusable.
	ErrClaims = errors.New("the provider's claims cannot name a backupd user")
)

// Reason names what err is for the audit log ("invalid_token", …);
// "error" for anything else.
func Reason(err error) string {
	for _, r := range []struct {
		err    error
		reason string
	}{
		{ErrSettings, "bad_settings"}, {ErrDiscovery, "provider_unreachable"}, {ErrExchange, "exchange_failed"},
		{ErrExpired, "expired_token"}, {ErrToken, "invalid_token"}, {ErrNonce, "nonce_mismatch"}, {ErrClaims, "bad_claims"},
	} {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return "error"
}

// Identity is the person the provider signed in.
type Identity struct {
	Issuer  string
	Subject string
	// Username is the settings' username claim (default
	// preferred_username).
	Username string
	Email    string
	Name     string
	// Groups are the groups claim's values (default "groups").
	Groups []string
	// IDToken is the raw ID token, for ending the provider's session at
	// sign-out; Expiry is its expiry.
	IDToken string
	Expiry  time.Time
}

// ExternalID is how backupd names the person at its source: "ISSUER
// SUBJECT" (db.UserOIDC users' ExternalID).
func (id Identity) ExternalID() string { return id.Issuer + " " + id.Subject }

// Option changes how New talks to the provider.
type Option func(*options)

type options struct {
	timeout  time.Duration
	outbound netguard.Policy
	now      func() time.Time
}

// WithTimeout bounds each request to the provider (default
// DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithOutbound applies the outbound allow list (the zero policy refuses
// link-local and cloud metadata addresses).
func WithOutbound(p netguard.Policy) Option { return func(o *options) { o.outbound = p } }

// WithClock sets the clock ID tokens' expiry is judged by (default
// time.Now).
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// Provider is an OpenID Connect provider as the settings name it, its
// discovery document read.
type Provider struct {
	settings   db.OIDCSettings
	provider   *gooidc.Provider
	verifier   *gooidc.IDTokenVerifier
	oauth      oauth2.Config
	client     *http.Client
	transport  *http.Transport
	timeout    time.Duration
	endSession string
	userInfo   string
	usernameClaim,
	groupsClaim string
}

// New reads the provider's discovery document from the settings' issuer
// and returns the provider ready to sign people in. clientSecret is the
// settings' ClientSecret unsealed ("" for a public client). The error
// wraps ErrSettings or ErrDiscovery and says what to fix.
func New(ctx context.Context, s db.OIDCSettings, clientSecret string, opts ...Option) (*Provider, error) {
	o := options{timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if problems := Validate(s); len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrSettings, joinProblems(problems))
	}
	client, transport, err := newHTTPClient(s, o)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSettings, err)
	}
	dctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	gp, err := gooidc.NewProvider(gooidc.ClientContext(dctx, client), s.Issuer)
	if err != nil {
		transport.CloseIdleConnections()
		return nil, discoveryError(s.Issuer, err)
	}
	var meta struct {
		AuthURL       string   `json:"authorization_endpoint"`
		TokenURL      string   `json:"token_endpoint"`
		JWKSURL       string   `json:"jwks_uri"`
		UserInfoURL   string   `json:"userinfo_endpoint"`
		EndSessionURL string   `json:"end_session_endpoint"`
		PKCEMethods   []string `json:"code_challenge_methods_supported"`
	}
	if err := gp.Claims(&meta); err != nil {
		transport.CloseIdleConnections()
		return nil, fmt.Errorf("%w: %s: the discovery document: %v", ErrDiscovery, s.Issuer, err)
	}
	for _, e := range []struct{ what, url string }{
		{"authorization_endpoint", meta.AuthURL}, {"token_endpoint", meta.TokenURL}, {"jwks_uri", meta.JWKSURL},
	} {
		if !webURL(e.url) {
			transport.CloseIdleConnections()
			return nil, fmt.Errorf("%w: %s: the discovery document has no usable %s", ErrDiscovery, s.Issuer, e.what)
		}
	}
	scopes := []string{gooidc.ScopeOpenID}
	extra := s.Scopes
	if len(extra) == 0 {
		extra = DefaultScopes
	}
	for _, sc := range extra {
		if sc != gooidc.ScopeOpenID {
			scopes = append(scopes, sc)
		}
	}
	p := &Provider{
		settings: s, provider: gp, client: client, transport: transport, timeout: o.timeout,
		verifier: gp.Verifier(&gooidc.Config{ClientID: s.ClientID, Now: o.now}),
		oauth: oauth2.Config{
			ClientID: s.ClientID, ClientSecret: clientSecret, Endpoint: gp.Endpoint(),
			RedirectURL: RedirectURL(s.ExternalURL), Scopes: scopes,
		},
		usernameClaim: orDefault(s.UsernameClaim, DefaultUsernameClaim),
		groupsClaim:   orDefault(s.GroupsClaim, DefaultGroupsClaim),
	}
	if webURL(meta.EndSessionURL) {
		p.endSession = meta.EndSessionURL
	}
	if webURL(meta.UserInfoURL) {
		p.userInfo = meta.UserInfoURL
	}
	return p, nil
}

// RedirectURL is the callback the provider must know for externalURL.
func RedirectURL(externalURL string) string {
	return strings.TrimRight(externalURL, "/") + CallbackPath
}

// Settings are the settings the provider was made from.
func (p *Provider) Settings() db.OIDCSettings { return p.settings }

// Close lets go of the provider's idle connections.
func (p *Provider) Close() { p.transport.CloseIdleConnections() }

func orDefault(v, def string) string {
	if v = strings.TrimSpace(v); v != "" {
		return v
	}
	return def
}

// webURL reports an absolute http(s) URL.
func webURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

func discoveryError(issuer string, err error) error {
	var mismatch *gooidc.IssuerMismatchError
	var nerr net.Error
	switch {
	case errors.As(err, &mismatch):
		return fmt.Errorf("%w: the provider at %s calls itself %q: set the issuer exactly as the provider writes it (a trailing slash counts)",
			ErrDiscovery, issuer, mismatch.Discovered)
	case errors.Is(err, netguard.ErrRefused):
		return fmt.Errorf("%w: %s: %v (the outbound allow list can admit it)", ErrDiscovery, issuer, err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		return fmt.Errorf("%w: %s did not answer in time", ErrDiscovery, issuer)
	case errors.As(err, &nerr):
		return fmt.Errorf("%w: cannot reach %s: %v", ErrDiscovery, issuer, err)
	}
	return fmt.Errorf("%w: %s/.well-known/openid-configuration: %s", ErrDiscovery, strings.TrimRight(issuer, "/"), firstLine(err.Error(), 200))
}

// firstLine is the start of an error text, which for a discovery answer
// of the wrong kind may hold the provider's page.
func firstLine(s string, n int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// newHTTPClient is the client every request to the provider goes
// through: bounded in time, guarded by the outbound policy, the CA
// pinned when given, and no redirect to another host.
func newHTTPClient(s db.OIDCSettings, o options) (*http.Client, *http.Transport, error) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if strings.TrimSpace(s.CACert) != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(s.CACert)) {
			return nil, nil, errors.New("ca_cert: no PEM certificate in it")
		}
		tlsConf.RootCAs = pool
	}
	policy := o.outbound
	t := &http.Transport{
		Proxy:                 guardedProxy(policy),
		DialContext:           policy.Dialer(o.timeout).DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   o.timeout,
		ResponseHeaderTimeout: o.timeout,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4,
		IdleConnTimeout:       90 * time.Second,
	}
	c := &http.Client{
		Transport: t,
		Timeout:   o.timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			if !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
				return fmt.Errorf("redirected to another host (%s)", req.URL.Host)
			}
			return nil
		},
	}
	return c, t, nil
}

// guardedProxy is http.ProxyFromEnvironment for a transport whose dials
// the policy guards: through a proxy, the provider's name is resolved and
// checked here first.
func guardedProxy(p netguard.Policy) func(*http.Request) (*url.URL, error) {
	return func(req *http.Request) (*url.URL, error) {
		proxy, err := http.ProxyFromEnvironment(req)
		if err != nil || proxy == nil {
			return proxy, err
		}
		if _, err := p.Resolve(req.Context(), req.URL.Hostname()); err != nil {
			return nil, err
		}
		return proxy, nil
	}
}

// Request is a sign-in begun: the browser goes to URL, and the callback
// needs State (to find the rest), Nonce and Verifier back.
type Request struct {
	URL      string
	State    string
	Nonce    string
	Verifier string
}

// Begin starts a sign-in: a fresh state and nonce (130 random bits
// each), a PKCE verifier (256 bits) whose S256 challenge goes along, and
// the provider's authorization URL.
func (p *Provider) Begin() Request {
	r := Request{State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier()}
	r.URL = p.oauth.AuthCodeURL(r.State, oauth2.S256ChallengeOption(r.Verifier), gooidc.Nonce(r.Nonce))
	return r
}

// StateHash is the SHA-256 (hex) of a state, as db.OIDCLogin keeps it.
func StateHash(state string) string {
	h := sha256.Sum256([]byte(state))
	return hex.EncodeToString(h[:])
}

// Finish ends a sign-in: the code is exchanged (with the PKCE verifier)
// for tokens, the ID token verified (signature, issuer, audience,
// expiry, then the nonce), and the person read from its claims, the
// userinfo endpoint filling in the username or groups claim when the
// token has none. The error wraps ErrExchange, ErrToken, ErrExpired,
// ErrNonce or ErrClaims.
func (p *Provider) Finish(ctx context.Context, code, verifier, nonce string) (Identity, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*p.timeout)
	defer cancel()
	ctx = gooidc.ClientContext(ctx, p.client)
	tok, err := p.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return Identity{}, exchangeError(err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Identity{}, fmt.Errorf("%w: the token endpoint sent none", ErrToken)
	}
	idt, err := p.verifier.Verify(ctx, raw)
	if err != nil {
		var expired *gooidc.TokenExpiredError
		if errors.As(err, &expired) {
			return Identity{}, fmt.Errorf("%w: at %s", ErrExpired, expired.Expiry.UTC().Format(time.RFC3339))
		}
		return Identity{}, fmt.Errorf("%w: %v", ErrToken, err)
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return Identity{}, ErrNonce
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return Identity{}, fmt.Errorf("%w: at_hash: %v", ErrToken, err)
		}
	}
	var claims map[string]json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrToken, err)
	}
	if len(idt.Audience) > 1 {
		// With several audiences the token must say it was for us.
		var azp string
		if v, ok := claims["azp"]; !ok || json.Unmarshal(v, &azp) != nil || azp != p.settings.ClientID {
			return Identity{}, fmt.Errorf("%w: several audiences and azp is not the client id", ErrToken)
		}
	}
	if (claims[p.usernameClaim] == nil || claims[p.groupsClaim] == nil) && p.userInfo != "" {
		if err := p.fillFromUserInfo(ctx, tok, idt.Subject, claims); err != nil {
			return Identity{}, err
		}
	}
	id := Identity{Issuer: idt.Issuer, Subject: idt.Subject, IDToken: raw, Expiry: idt.Expiry}
	if id.Username, err = usernameOf(claims, p.usernameClaim); err != nil {
		return Identity{}, err
	}
	if id.Groups, err = groupsOf(claims, p.groupsClaim); err != nil {
		return Identity{}, err
	}
	id.Email = stringClaim(claims, "email")
	id.Name = stringClaim(claims, "name")
	return id, nil
}

func exchangeError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		// The answer's body is left out: it is the provider's to word.
		code := re.ErrorCode
		if code == "" {
			code = "no error code"
		}
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		return fmt.Errorf("%w: %s (HTTP %d)", ErrExchange, firstLine(code, 64), status)
	}
	var nerr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout() {
		return fmt.Errorf("%w: the token endpoint did not answer in time", ErrExchange)
	}
	return fmt.Errorf("%w: %s", ErrExchange, firstLine(err.Error(), 200))
}

// fillFromUserInfo adds the claims the ID token lacks from the userinfo
// endpoint, whose subject must be the token's.
func (p *Provider) fillFromUserInfo(ctx context.Context, tok *oauth2.Token, subject string, claims map[string]json.RawMessage) error {
	info, err := p.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		return fmt.Errorf("%w: the userinfo endpoint: %s", ErrClaims, firstLine(err.Error(), 200))
	}
	if info.Subject != subject {
		return fmt.Errorf("%w: the userinfo endpoint names another subject", ErrClaims)
	}
	var more map[string]json.RawMessage
	if err := info.Claims(&more); err != nil {
		return fmt.Errorf("%w: the userinfo answer: %v", ErrClaims, err)
	}
	for k, v := range more {
		if _, have := claims[k]; !have {
			claims[k] = v
		}
	}
	return nil
}

func usernameOf(claims map[string]json.RawMessage, name string) (string, error) {
	v, ok := claims[name]
	if !ok || string(v) == "null" {
		return "", fmt.Errorf("%w: no %q claim", ErrClaims, name)
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("%w: the %q claim is not a string", ErrClaims, name)
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", fmt.Errorf("%w: the %q claim is empty", ErrClaims, name)
	case len(s) > MaxUsernameBytes:
		return "", fmt.Errorf("%w: the %q claim is longer than %d bytes", ErrClaims, name, MaxUsernameBytes)
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return "", fmt.Errorf("%w: the %q claim holds a space or control character", ErrClaims, name)
	}
	return s, nil
}

// groupsOf reads the groups claim: absent (no groups), a string (one
// group) or a list of strings.
func groupsOf(claims map[string]json.RawMessage, name string) ([]string, error) {
	v, ok := claims[name]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(v, &one) == nil {
		v = json.RawMessage(`[` + string(v) + `]`)
	}
	var list []any
	if err := json.Unmarshal(v, &list); err != nil {
		return nil, fmt.Errorf("%w: the %q claim is neither a string nor a list", ErrClaims, name)
	}
	if len(list) > MaxGroups {
		return nil, fmt.Errorf("%w: the %q claim has %d values, more than %d", ErrClaims, name, len(list), MaxGroups)
	}
	out := make([]string, 0, len(list))
	for _, g := range list {
		s, ok := g.(string)
		if !ok {
			return nil, fmt.Errorf("%w: the %q claim holds a value that is not a string", ErrClaims, name)
		}
		if len(s) > MaxGroupBytes {
			return nil, fmt.Errorf("%w: the %q claim holds a value longer than %d bytes", ErrClaims, name, MaxGroupBytes)
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

func stringClaim(claims map[string]json.RawMessage, name string) string {
	var s string
	if v, ok := claims[name]; ok && json.Unmarshal(v, &s) == nil {
		return s
	}
	return ""
}

// EndSessionURL is where to send the browser to end its session at the
// provider too (RP-initiated logout): the end_session_endpoint with the
// ID token as a hint, the page to come back to and the client id. ok is
// false when the provider has no such endpoint.
func (p *Provider) EndSessionURL(idToken, postLogoutRedirect string) (string, bool) {
	if p.endSession == "" {
		return "", false
	}
	u, err := url.Parse(p.endSession)
	if err != nil {
		return "", false
	}
	q := u.Query()
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	if postLogoutRedirect != "" {
		q.Set("post_logout_redirect_uri", postLogoutRedirect)
	}
	q.Set("client_id", p.settings.ClientID)
	u.RawQuery = q.Encode()
	return u.String(), true
}
