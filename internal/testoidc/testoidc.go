// Package testoidc runs a real OpenID Connect provider on 127.0.0.1 for
// tests: zitadel/oidc's OpenID-certified example provider (authorization
// code flow with PKCE, discovery, JWKS, userinfo, end-session), with the
// users and clients a test gives. Its own login page asks for a username
// and password; SignIn goes through it over plain HTTP, a browser test
// through Chromium.
//
// Only tests import this package, so that the release binary does not
// carry the provider.
package testoidc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// User is a person the provider knows.
type User struct {
	// Subject is the "sub" claim (default "sub-" + Username).
	Subject  string
	Username string
	Password string
	Email    string
	// Name is the "name" claim's first word and the rest ("Ada Lovelace").
	Name string
	// Groups go into the "groups" claim when the "groups" scope is asked
	// for.
	Groups []string
}

// Client is a relying party registered at the provider: a confidential
// web client (HTTP Basic authentication at the token endpoint).
type Client struct {
	ID     string
	Secret string
	// RedirectURIs are the callbacks it may be sent back to, exactly.
	RedirectURIs []string
	// PostLogoutRedirectURIs are where end-session may send it back to.
	PostLogoutRedirectURIs []string
	// UserinfoOnly keeps profile, email and groups claims out of the ID
	// token, as the core specification has it when an access token is
	// issued: only the userinfo endpoint answers them.
	UserinfoOnly bool
}

// Provider is the running provider.
type Provider struct {
	// Issuer is its issuer URL, http://127.0.0.1:PORT.
	Issuer string

	t       testing.TB
	srv     *httptest.Server
	users   map[string]*User // by subject
	clients map[string]Client

	mu      sync.Mutex
	rewrite func(idToken string) string
	hits    map[string]int
}

// Start runs a provider with users and clients until the test ends.
func Start(t testing.TB, users []User, clients []Client) *Provider {
	t.Helper()
	p := &Provider{t: t, users: map[string]*User{}, clients: map[string]Client{}, hits: map[string]int{}}
	for i := range users {
		u := users[i]
		if u.Subject == "" {
			u.Subject = "sub-" + u.Username
		}
		p.users[u.Subject] = &u
	}
	registered := map[string]*storage.Client{}
	for _, c := range clients {
		p.clients[c.ID] = c
		registered[c.ID] = storage.WebClient(c.ID, c.Secret, c.RedirectURIs...)
	}
	p.srv = httptest.NewUnstartedServer(nil)
	p.Issuer = "http://" + p.srv.Listener.Addr().String()
	st := &store{Storage: storage.NewStorageWithClients(userStore{p}, registered), p: p}
	// A nil logger leaves the process's default logger alone.
	router := exampleop.SetupServer(p.Issuer, st, nil, false)
	p.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hits[r.URL.Path]++
		p.mu.Unlock()
		if r.URL.Path == TokenPath {
			p.token(router, w, r)
			return
		}
		router.ServeHTTP(w, r)
	})
	p.srv.Config.ReadHeaderTimeout = 10 * time.Second
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

// RewriteIDToken makes the token endpoint answer f(id_token) instead of
// the ID token it issued (nil: as issued), to play a tampering or
// confused provider.
func (p *Provider) RewriteIDToken(f func(idToken string) string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rewrite = f
}

// Requests is how many requests for path the provider has had
// (TokenPath, EndSessionPath …).
func (p *Provider) Requests(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[path]
}

// token serves the token endpoint through the provider, applying the
// rewrite to the ID token of a successful answer.
func (p *Provider) token(next http.Handler, w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	rewrite := p.rewrite
	p.mu.Unlock()
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	if rewrite != nil && rec.Code == http.StatusOK {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err == nil {
			if raw, ok := m["id_token"].(string); ok {
				m["id_token"] = rewrite(raw)
				body, _ = json.Marshal(m)
			}
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// Paths of the provider's token and end-session endpoints.
const (
	TokenPath      = "/oauth/token"
	EndSessionPath = "/end_session"
)

var (
	authRequestID = regexp.MustCompile(`name="id" value="([^"]+)"`)
	wrongPassword = "username or password wrong"
)

// ErrWrongPassword is the provider refusing the username and password.
var ErrWrongPassword = errors.New("the provider refused the username or password")

// SignIn goes through the provider's login page from authURL (the
// relying party's authorization URL) with username and password, as a
// browser would, and returns the redirect back to the relying party
// (its callback, with code and state, or error), which it does not
// follow.
func (p *Provider) SignIn(authURL, username, password string) (*url.URL, error) {
	jar, _ := cookiejar.New(nil)
	var back *url.URL
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > 10 {
				return errors.New("more than 10 redirects")
			}
			if !strings.HasPrefix(req.URL.String(), p.Issuer+"/") {
				back = req.URL
				return http.ErrUseLastResponse
			}
			return nil
		}}
	res, err := client.Get(authURL)
	if err != nil {
		return nil, err
	}
	page, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	if back != nil {
		// Refused before any login page (a bad redirect URI, say).
		return back, nil
	}
	m := authRequestID.FindSubmatch(page)
	if res.StatusCode != http.StatusOK || m == nil {
		return nil, fmt.Errorf("the provider answered %d without its login page: %.300s", res.StatusCode, page)
	}
	res, err = client.PostForm(p.Issuer+"/login/username", url.Values{
		"id": {string(m[1])}, "username": {username}, "password": {password},
	})
	if err != nil {
		return nil, err
	}
	page, _ = io.ReadAll(io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	if back != nil {
		return back, nil
	}
	if bytes.Contains(page, []byte(wrongPassword)) {
		return nil, ErrWrongPassword
	}
	return nil, fmt.Errorf("the provider did not send the browser back: %d %.300s", res.StatusCode, page)
}

// EndSession follows an end-session URL the relying party sent the
// browser to and returns where the provider sends it next.
func (p *Provider) EndSession(endSessionURL string) (*url.URL, error) {
	client := &http.Client{Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(endSessionURL)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	res.Body.Close()
	if res.StatusCode != http.StatusFound && res.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("end-session answered %d: %.300s", res.StatusCode, body)
	}
	return res.Location()
}

// userStore is the provider's view of the users.
type userStore struct{ p *Provider }

func (s userStore) GetUserByID(id string) *storage.User {
	if u, ok := s.p.users[id]; ok {
		return s.storageUser(u)
	}
	return nil
}

func (s userStore) GetUserByUsername(name string) *storage.User {
	for _, u := range s.p.users {
		if u.Username == name {
			return s.storageUser(u)
		}
	}
	return nil
}

func (userStore) ExampleClientID() string { return storage.ServiceUserID }

func (userStore) storageUser(u *User) *storage.User {
	first, last, _ := strings.Cut(u.Name, " ")
	return &storage.User{ID: u.Subject, Username: u.Username, Password: u.Password,
		FirstName: first, LastName: last, Email: u.Email, EmailVerified: u.Email != ""}
}

// store is the example storage with the groups claim and this package's
// client settings.
type store struct {
	*storage.Storage
	p *Provider
}

// groupsScope is the scope that asks for the groups claim.
const groupsScope = "groups"

func (s *store) groups(subject string, scopes []string) []string {
	if !slices.Contains(scopes, groupsScope) {
		return nil
	}
	if u, ok := s.p.users[subject]; ok {
		return u.Groups
	}
	return nil
}

// SetUserinfoFromRequest fills the ID token's claims.
func (s *store) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	if c, ok := s.p.clients[req.GetClientID()]; ok && !c.UserinfoOnly {
		if g := s.groups(req.GetSubject(), scopes); g != nil {
			info.AppendClaims(groupsScope, g)
		}
	}
	return nil
}

// SetUserinfoFromToken fills the userinfo endpoint's answer.
func (s *store) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, tokenID, subject, origin string) error {
	if err := s.Storage.SetUserinfoFromToken(ctx, info, tokenID, subject, origin); err != nil {
		return err
	}
	// The example keeps the token's scopes to itself; the groups claim
	// goes along whenever the user has groups.
	if u, ok := s.p.users[info.Subject]; ok && u.Groups != nil {
		info.AppendClaims(groupsScope, u.Groups)
	}
	return nil
}

// GetClientByClientID returns the client with this package's settings.
func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return client{Client: c, cfg: s.p.clients[id]}, nil
}

type client struct {
	op.Client
	cfg Client
}

// IDTokenUserinfoClaimsAssertion puts profile and email claims into the
// ID token unless the client is UserinfoOnly.
func (c client) IDTokenUserinfoClaimsAssertion() bool { return !c.cfg.UserinfoOnly }

// IsScopeAllowed admits the groups scope.
func (c client) IsScopeAllowed(scope string) bool {
	return scope == groupsScope || c.Client.IsScopeAllowed(scope)
}

// PostLogoutRedirectURIs are the client's.
func (c client) PostLogoutRedirectURIs() []string { return c.cfg.PostLogoutRedirectURIs }
