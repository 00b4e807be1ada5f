package oidc_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/app/identity/oidc"
	"backupd/app/netguard"
	"backupd/db"
	"backupd/internal/testoidc"
)

// external is where the tests' relying party says it lives; the
// provider's redirects to it are looked at, never followed.
const external = "http://127.0.0.1:9"

var alice = testoidc.User{Subject: "u-1", Username: "alice", Password: "alice-pw", Email: "alice@example.test",
	Name: "Alice Example", Groups: []string{"netops", "everyone"}}

func startIdP(t *testing.T, clients ...testoidc.Client) *testoidc.Provider {
	t.Helper()
	if len(clients) == 0 {
		clients = []testoidc.Client{{ID: "backupd", Secret: "s3cret", RedirectURIs: []string{external + oidc.CallbackPath},
			PostLogoutRedirectURIs: []string{external + "/login?out=1"}}}
	}
	return testoidc.Start(t, []testoidc.User{alice, {Username: "bob", Password: "bob-pw"}}, clients)
}

func settingsFor(idp *testoidc.Provider, clientID string) db.OIDCSettings {
	return db.OIDCSettings{Enabled: true, Name: "Test IdP", Issuer: idp.Issuer, ClientID: clientID, ExternalURL: external + "/"}
}

func newProvider(t *testing.T, s db.OIDCSettings, secret string, opts ...oidc.Option) *oidc.Provider {
	t.Helper()
	p, err := oidc.New(context.Background(), s, secret, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// signIn begins a sign-in, signs in at the provider and returns the
// request and the code the provider sent back.
func signIn(t *testing.T, p *oidc.Provider, idp *testoidc.Provider, user, password string) (oidc.Request, string) {
	t.Helper()
	req := p.Begin()
	back, err := idp.SignIn(req.URL, user, password)
	if err != nil {
		t.Fatalf("sign in at the provider: %v", err)
	}
	if got := back.Scheme + "://" + back.Host + back.Path; got != external+oidc.CallbackPath {
		t.Fatalf("the provider sent the browser to %s, want the callback", got)
	}
	q := back.Query()
	if q.Get("state") != req.State {
		t.Fatalf("the provider sent back state %q, want the request's", q.Get("state"))
	}
	if q.Get("code") == "" {
		t.Fatalf("no code in %s", back)
	}
	return req, q.Get("code")
}

func TestOIDCHappyPath(t *testing.T) {
	idp := startIdP(t)
	p := newProvider(t, settingsFor(idp, "backupd"), "s3cret")
	req, code := signIn(t, p, idp, "alice", "alice-pw")

	// The authorization request carries PKCE (S256), the nonce and state.
	u, _ := url.Parse(req.URL)
	q := u.Query()
	for k, want := range map[string]string{"code_challenge_method": "S256", "nonce": req.Nonce, "state": req.State,
		"client_id": "backupd", "redirect_uri": external + oidc.CallbackPath, "response_type": "code"} {
		if q.Get(k) != want {
			t.Errorf("authorization URL %s = %q, want %q", k, q.Get(k), want)
		}
	}
	if q.Get("code_challenge") == "" || strings.Contains(req.URL, req.Verifier) {
		t.Errorf("authorization URL: challenge %q; the verifier itself must not go along", q.Get("code_challenge"))
	}
	if scopes := strings.Fields(q.Get("scope")); !slices.Equal(scopes, []string{"openid", "profile", "email", "groups"}) {
		t.Errorf("scopes %v, want openid and the default ones", scopes)
	}
	if len(req.State) < 26 || len(req.Nonce) < 26 || req.State == req.Nonce {
		t.Errorf("state %d and nonce %d characters: want at least 26 (128 bits) each, and different", len(req.State), len(req.Nonce))
	}

	id, err := p.Finish(context.Background(), code, req.Verifier, req.Nonce)
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if id.Username != "alice" || !slices.Equal(id.Groups, alice.Groups) || id.Subject != "u-1" || id.Issuer != idp.Issuer ||
		id.Email != alice.Email || id.Name != alice.Name {
		t.Fatalf("identity = %+v", id)
	}
	if id.ExternalID() != idp.Issuer+" u-1" || strings.Count(id.IDToken, ".") != 2 || !id.Expiry.After(time.Now()) {
		t.Fatalf("external id %q, token %d bytes, expiry %s", id.ExternalID(), len(id.IDToken), id.Expiry)
	}
	// A code is good once, at the provider.
	if _, err := p.Finish(context.Background(), code, req.Verifier, req.Nonce); !errors.Is(err, oidc.ErrExchange) {
		t.Fatalf("the same code again: %v, want ErrExchange", err)
	}
}

func TestOIDCPKCEVerifierIsChecked(t *testing.T) {
	idp := startIdP(t)
	p := newProvider(t, settingsFor(idp, "backupd"), "s3cret")
	req, code := signIn(t, p, idp, "alice", "alice-pw")
	other := p.Begin()
	_, err := p.Finish(context.Background(), code, other.Verifier, req.Nonce)
	if !errors.Is(err, oidc.ErrExchange) || oidc.Reason(err) != "exchange_failed" {
		t.Fatalf("another sign-in's verifier: %v, want ErrExchange", err)
	}
}

func TestOIDCClaimsFromUserinfo(t *testing.T) {
	idp := startIdP(t, testoidc.Client{ID: "strict", Secret: "s", RedirectURIs: []string{external + oidc.CallbackPath}, UserinfoOnly: true})
	p := newProvider(t, settingsFor(idp, "strict"), "s")
	req, code := signIn(t, p, idp, "alice", "alice-pw")
	id, err := p.Finish(context.Background(), code, req.Verifier, req.Nonce)
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if id.Username != "alice" || !slices.Equal(id.Groups, alice.Groups) {
		t.Fatalf("identity from userinfo = %+v", id)
	}
	// The token itself had neither claim: the userinfo endpoint gave them.
	claims := payload(t, id.IDToken)
	if _, ok := claims["groups"]; ok {
		t.Fatalf("the ID token has groups; the test proves nothing: %v", claims)
	}
}

func TestOIDCMissingUsernameClaimRefused(t *testing.T) {
	idp := startIdP(t)
	s := settingsFor(idp, "backupd")
	s.UsernameClaim = "upn"
	p := newProvider(t, s, "s3cret")
	req, code := signIn(t, p, idp, "alice", "alice-pw")
	if _, err := p.Finish(context.Background(), code, req.Verifier, req.Nonce); !errors.Is(err, oidc.ErrClaims) || !strings.Contains(err.Error(), `"upn"`) {
		t.Fatalf("no upn claim: %v, want ErrClaims naming it", err)
	}
}

func TestOIDCTamperedTokenRefused(t *testing.T) {
	for name, tamper := range map[string]func(t *testing.T, raw string) string{
		"signature": func(t *testing.T, raw string) string {
			parts := strings.Split(raw, ".")
			sig, err := base64.RawURLEncoding.DecodeString(parts[2])
			if err != nil {
				t.Fatal(err)
			}
			sig[len(sig)/2] ^= 0x01
			parts[2] = base64.RawURLEncoding.EncodeToString(sig)
			return strings.Join(parts, ".")
		},
		"payload": func(t *testing.T, raw string) string {
			parts := strings.Split(raw, ".")
			claims := payload(t, raw)
			claims["preferred_username"] = "root"
			claims["groups"] = []string{"admins"}
			b, _ := json.Marshal(claims)
			parts[1] = base64.RawURLEncoding.EncodeToString(b)
			return strings.Join(parts, ".")
		},
	} {
		t.Run(name, func(t *testing.T) {
			idp := startIdP(t)
			p := newProvider(t, settingsFor(idp, "backupd"), "s3cret")
			tampered := false
			idp.RewriteIDToken(func(raw string) string { tampered = true; return tamper(t, raw) })
			req, code := signIn(t, p, idp, "alice", "alice-pw")
			id, err := p.Finish(context.Background(), code, req.Verifier, req.Nonce)
			if !tampered {
				t.Fatal("the token endpoint answered no ID token to tamper with")
			}
			if !errors.Is(err, oidc.ErrToken) || !strings.Contains(err.Error(), "signature") {
				t.Fatalf("tampered %s: identity %+v, err %v; want ErrToken for the signature", name, id, err)
			}
		})
	}
}

func TestOIDCWrongAudienceRefused(t *testing.T) {
	cb := []string{external + oidc.CallbackPath}
	idp := startIdP(t, testoidc.Client{ID: "backupd", Secret: "s3cret", RedirectURIs: cb},
		testoidc.Client{ID: "wiki", Secret: "wiki-secret", RedirectURIs: cb})
	// A genuine token of the provider's, issued to another client.
	wiki := newProvider(t, settingsFor(idp, "wiki"), "wiki-secret")
	wreq, wcode := signIn(t, wiki, idp, "alice", "alice-pw")
	wid, err := wiki.Finish(context.Background(), wcode, wreq.Verifier, wreq.Nonce)
	if err != nil {
		t.Fatalf("the wiki's sign-in: %v", err)
	}

	p := newProvider(t, settingsFor(idp, "backupd"), "s3cret")
	idp.RewriteIDToken(func(string) string { return wid.IDToken })
	req, code := signIn(t, p, idp, "alice", "alice-pw")
	_, err = p.Finish(context.Background(), code, req.Verifier, req.Nonce)
	if !errors.Is(err, oidc.ErrToken) || !strings.Contains(err.Error(), "audience") {
		t.Fatalf("a token for another client: %v, want ErrToken for the audience", err)
	}
}

// TestOIDCExpiredTokenRefused judges the provider's one-hour token by a
// clock two hours ahead (go-oidc's Config.Now, through WithClock).
func TestOIDCExpiredTokenRefused(t *testing.T) {
	idp := startIdP(t)
	p := newProvider(t, settingsFor(idp, "backupd"), "s3cret", oidc.WithClock(func() time.Time { return time.Now().Add(2 * time.Hour) }))
	req, code := signIn(t, p, idp, "alice", "alice-pw")
	_, err := p.Finish(context.Background(), code, req.Verifier, req.Nonce)
	if !errors.Is(err, oidc.ErrExpired) || oidc.Reason(err) != "expired_token" {
		t.Fatalf("an expired token: %v, want ErrExpired", err)
	}
}

func TestOIDCNonceMismatchRefused(t *testing.T) {
	idp := startIdP(t)
	p := newProvider(t, settingsFor(idp, "backupd"), "s3cret")
	req, code := signIn(t, p, idp, "alice", "alice-pw")
	_, err := p.Finish(context.Background(), code, req.Verifier, p.Begin().Nonce)
	if !errors.Is(err, oidc.ErrNonce) || oidc.Reason(err) != "nonce_mismatch" {
		t.Fatalf("another sign-in's nonce: %v, want ErrNonce", err)
	}
}

func TestOIDCDiscoveryFailuresAreClear(t *testing.T) {
	// A provider that accepts connections and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	held := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			select {
			case held <- c:
			default:
				c.Close()
			}
		}
	}()
	t.Cleanup(func() {
		for {
			select {
			case c := <-held:
				c.Close()
			default:
				return
			}
		}
	})
	// A port nobody listens on.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	// A discovery document without an authorization endpoint.
	var partial *httptest.Server
	partial = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": partial.URL, "token_endpoint": partial.URL + "/token",
			"jwks_uri": partial.URL + "/keys"})
	}))
	t.Cleanup(partial.Close)
	idp := startIdP(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(idp.Issuer, "http://"))

	for _, c := range []struct {
		name, issuer, want string
	}{
		{"silent", "http://" + silent.Addr().String(), "did not answer in time"},
		{"refused", "http://" + closedAddr, "cannot reach"},
		{"mismatch", "http://localhost:" + port, "calls itself \"" + idp.Issuer + "\""},
		{"no authorization endpoint", partial.URL, "no usable authorization_endpoint"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := settingsFor(idp, "backupd")
			s.Issuer = c.issuer
			type result struct {
				p   *oidc.Provider
				err error
			}
			done := make(chan result, 1)
			go func() {
				p, err := oidc.New(context.Background(), s, "s3cret", oidc.WithTimeout(time.Second))
				done <- result{p, err}
			}()
			select {
			case r := <-done:
				if !errors.Is(r.err, oidc.ErrDiscovery) || !strings.Contains(r.err.Error(), c.want) {
					t.Fatalf("New: %v, want ErrDiscovery saying %q", r.err, c.want)
				}
				if strings.Contains(r.err.Error(), "s3cret") {
					t.Fatalf("the error shows the client secret: %v", r.err)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("New did not give up within 15 s with a 1 s timeout")
			}
		})
	}
}

func TestOIDCEndSessionURL(t *testing.T) {
	idp := startIdP(t)
	p := newProvider(t, settingsFor(idp, "backupd"), "s3cret")
	req, code := signIn(t, p, idp, "alice", "alice-pw")
	id, err := p.Finish(context.Background(), code, req.Verifier, req.Nonce)
	if err != nil {
		t.Fatal(err)
	}
	back := external + "/login?out=1"
	raw, ok := p.EndSessionURL(id.IDToken, back)
	if !ok {
		t.Fatal("the provider's end-session endpoint was not found")
	}
	u, _ := url.Parse(raw)
	if u.Scheme+"://"+u.Host != idp.Issuer || u.Query().Get("id_token_hint") != id.IDToken ||
		u.Query().Get("post_logout_redirect_uri") != back || u.Query().Get("client_id") != "backupd" {
		t.Fatalf("end-session URL %s", raw)
	}
	// The provider accepts it and sends the browser back.
	next, err := idp.EndSession(raw)
	if err != nil || next.String() != back {
		t.Fatalf("the provider's end-session sends to %v (%v), want %s", next, err, back)
	}
}

func TestOIDCCacheRebuildsOnChange(t *testing.T) {
	idp := startIdP(t)
	var c oidc.Cache
	ctx := context.Background()
	s := settingsFor(idp, "backupd")
	first, err := c.Get(ctx, s, "s3cret", netguard.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Get(ctx, s, "s3cret", netguard.Policy{})
	if err != nil || again != first {
		t.Fatalf("the same settings again: %p %v, want the kept %p", again, err, first)
	}
	s.Mappings = []db.GroupMapping{{Group: "x", RoleIDs: []int64{1}}}
	if kept, _ := c.Get(ctx, s, "s3cret", netguard.Policy{}); kept != first {
		t.Fatal("a mapping change rebuilt the provider")
	}
	s.ClientID = "other"
	changed, err := c.Get(ctx, s, "s3cret", netguard.Policy{})
	if err != nil || changed == first || changed.Settings().ClientID != "other" {
		t.Fatalf("another client id: %p %v, want a new provider", changed, err)
	}
	s.Issuer = "http://127.0.0.1:1"
	if _, err := c.Get(ctx, s, "s3cret", netguard.Policy{}); !errors.Is(err, oidc.ErrDiscovery) {
		t.Fatalf("an unreachable issuer: %v, want ErrDiscovery", err)
	}
}

func TestValidate(t *testing.T) {
	good := db.OIDCSettings{Name: "Corp SSO", Issuer: "https://idp.example.com/realms/main", ClientID: "backupd",
		ExternalURL: "https://backupd.example.com", Scopes: []string{"profile", "groups"},
		UsernameClaim: "email", GroupsClaim: "https://example.com/claims/groups"}
	if got := oidc.Validate(good); len(got) != 0 {
		t.Fatalf("good settings: %v", got)
	}
	for _, c := range []struct {
		field  string
		change func(*db.OIDCSettings)
	}{
		{"name", func(s *db.OIDCSettings) { s.Name = "Corp\x01SSO" }},
		{"name", func(s *db.OIDCSettings) { s.Name = strings.Repeat("n", oidc.MaxNameChars+1) }},
		{"issuer", func(s *db.OIDCSettings) { s.Issuer = "" }},
		{"issuer", func(s *db.OIDCSettings) { s.Issuer = "http://idp.example.com" }},
		{"issuer", func(s *db.OIDCSettings) { s.Issuer = "https://idp.example.com/?x=1" }},
		{"issuer", func(s *db.OIDCSettings) { s.Issuer = "idp.example.com" }},
		{"client_id", func(s *db.OIDCSettings) { s.ClientID = "" }},
		{"external_url", func(s *db.OIDCSettings) { s.ExternalURL = "backupd.example.com" }},
		{"external_url", func(s *db.OIDCSettings) { s.ExternalURL = "https://backupd.example.com/?a=b" }},
		{"external_url", func(s *db.OIDCSettings) { s.ExternalURL = "ftp://backupd.example.com" }},
		{"scopes", func(s *db.OIDCSettings) { s.Scopes = []string{"two words"} }},
		{"username_claim", func(s *db.OIDCSettings) { s.UsernameClaim = "bad claim" }},
		{"groups_claim", func(s *db.OIDCSettings) { s.GroupsClaim = `"x"` }},
		{"ca_cert", func(s *db.OIDCSettings) { s.CACert = "not a certificate" }},
	} {
		s := good
		c.change(&s)
		got := oidc.Validate(s)
		if len(got) != 1 || got[0].Field != c.field {
			t.Errorf("%+v: Validate = %v, want one problem with %s", s, got, c.field)
		}
	}
	for _, local := range []string{"http://127.0.0.1:5556/dex", "http://localhost:8080", "http://[::1]:9000"} {
		s := good
		s.Issuer = local
		if got := oidc.Validate(s); len(got) != 0 {
			t.Errorf("issuer %s on this machine: %v", local, got)
		}
	}
}

// payload is the claims of a JWT, unverified.
func payload(t *testing.T, raw string) map[string]any {
	t.Helper()
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
