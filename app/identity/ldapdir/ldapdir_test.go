package ldapdir_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupd/app/identity/ldapdir"
	"backupd/db"
	"backupd/internal/testldap"
)

// Every password of the test directory: none may appear in an error or
// a report.
var passwords = []string{testldap.AdminPassword, testldap.ServicePassword, testldap.AlicePassword,
	testldap.BobPassword, testldap.CarolPassword, testldap.DavePassword, "Wonderland-1x", "wrong-Service-7"}

func noPassword(t *testing.T, text string) {
	t.Helper()
	for _, pw := range passwords {
		if strings.Contains(text, pw) {
			t.Errorf("a password (%s…) is in %q", pw[:3], text)
		}
	}
}

func newDir(t *testing.T, s db.LDAPSettings, bindPassword string) *ldapdir.Directory {
	t.Helper()
	d, err := ldapdir.New(s, bindPassword)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ldapsDir is the test directory over LDAPS with its CA pinned, the
// openldap preset and the service account.
func ldapsDir(t *testing.T, srv *testldap.Server) *ldapdir.Directory {
	t.Helper()
	return newDir(t, srv.Settings(openldap(t)), srv.ServicePassword)
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func groupNames(e ldapdir.Entry) []string {
	var names []string
	for _, g := range e.Groups {
		names = append(names, g.Name)
	}
	return names
}

func wantGroups(t *testing.T, e ldapdir.Entry, names ...string) {
	t.Helper()
	if got := groupNames(e); !slices.Equal(got, names) {
		t.Errorf("%s groups = %q, want %q", e.Username, got, names)
	}
	for _, g := range e.Groups {
		if !strings.EqualFold(g.DN, testldap.GroupDN(g.Name)) {
			t.Errorf("group %s has DN %s", g.Name, g.DN)
		}
	}
}

// New refuses what Validate refuses, and a bind DN without a password
// (which would bind anonymously).
func TestNew(t *testing.T) {
	s := openldap(t)
	if _, err := ldapdir.New(s, ""); err == nil {
		t.Error("New accepted settings without a URL")
	}
	s.URL, s.Security, s.BaseDN, s.BindDN = "ldaps://127.0.0.1", "ldaps", "dc=example,dc=test", testldap.ServiceDN
	var fe ldapdir.FieldErrors
	if _, err := ldapdir.New(s, ""); !errors.As(err, &fe) || !slices.ContainsFunc(fe, func(e ldapdir.FieldError) bool { return e.Field == "bind_password" }) {
		t.Errorf("New with a bind DN and no password = %v", err)
	}
	if _, err := ldapdir.New(s, "pw"); err != nil {
		t.Error(err)
	}
}

func TestAuthenticate(t *testing.T) {
	srv := testldap.Start(t)
	starttls := srv.Settings(openldap(t))
	starttls.URL, starttls.Security = srv.URL, "starttls"
	for name, d := range map[string]*ldapdir.Directory{
		"LDAPS":    ldapsDir(t, srv),
		"StartTLS": newDir(t, starttls, srv.ServicePassword),
	} {
		t.Run(name, func(t *testing.T) {
			e, err := d.Authenticate(ctx(t), "alice", testldap.AlicePassword)
			if err != nil {
				t.Fatal(err)
			}
			if e.Username != "alice" || e.DN != testldap.UserDN("alice") || e.DisplayName != "Alice L." || e.Email != "alice@example.test" {
				t.Errorf("entry = %+v", e)
			}
			// netops only through core-team.
			wantGroups(t, e, "core-team", "netops")
			keys := e.GroupKeys()
			for _, k := range []string{"netops", testldap.GroupDN("netops"), "core-team", testldap.GroupDN("core-team")} {
				if !slices.Contains(keys, k) {
					t.Errorf("GroupKeys %q lack %q", keys, k)
				}
			}

			for user, pw := range map[string]string{"bob": testldap.BobPassword, "dave": testldap.DavePassword, "carol": testldap.CarolPassword} {
				e, err := d.Authenticate(ctx(t), user, pw)
				if err != nil {
					t.Fatalf("%s: %v", user, err)
				}
				want := map[string]string{"bob": "viewers", "dave": "netops", "carol": "lab"}[user]
				wantGroups(t, e, want)
			}

			// The username as stored, not as typed.
			e, err = d.Authenticate(ctx(t), "ALICE", testldap.AlicePassword)
			if err != nil || e.Username != "alice" {
				t.Errorf("ALICE: %q, %v; want alice", e.Username, err)
			}
		})
	}
}

func TestInvalidCredentials(t *testing.T) {
	srv := testldap.Start(t)
	d := ldapsDir(t, srv)
	for _, tc := range []struct{ name, user, password string }{
		{"wrong password", "alice", "Wonderland-1x"},
		{"another's password", "alice", testldap.BobPassword},
		{"unknown user", "mallory", testldap.AlicePassword},
		{"the service account's name", "backupd-svc", testldap.ServicePassword},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := d.Authenticate(ctx(t), tc.user, tc.password)
			// The same error, word for word: nothing tells which.
			if err != ldapdir.ErrInvalidCredentials {
				t.Errorf("Authenticate = %+v, %v; want exactly ErrInvalidCredentials", e, err)
			}
		})
	}
}

// A username is only ever a value in the filter: these would, spliced
// in raw, match alice (or everyone) and sign in as her.
func TestUsernameInjection(t *testing.T) {
	srv := testldap.Start(t)
	d := ldapsDir(t, srv)
	for _, user := range []string{"*)(uid=*", "alice)(|(uid=*", "*", "ali*", "alice)(uid=alice", `alice\`} {
		t.Run(user, func(t *testing.T) {
			e, err := d.Authenticate(ctx(t), user, testldap.AlicePassword)
			if !errors.Is(err, ldapdir.ErrInvalidCredentials) || e.Username != "" {
				t.Errorf("Authenticate(%q) = %+v, %v; want ErrInvalidCredentials", user, e, err)
			}
			if _, err := d.Lookup(ctx(t), user); !errors.Is(err, ldapdir.ErrNoSuchUser) {
				t.Errorf("Lookup(%q) = %v, want ErrNoSuchUser", user, err)
			}
		})
	}
}

// silent is a listener on 127.0.0.1 that accepts connections and never
// says a word; it counts them.
type silent struct {
	l        net.Listener
	accepted atomic.Int32
}

func newSilent(t *testing.T) *silent {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silent{l: l}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return s
}

func (s *silent) port() string { return strings.TrimPrefix(s.l.Addr().String(), "127.0.0.1:") }

// Names no directory holds, and the empty password (an "unauthenticated
// bind" many servers accept as a success), are refused before any
// traffic: the server here would hang the call.
func TestRefusedBeforeNetwork(t *testing.T) {
	t.Parallel() // waits a second at the end
	hang := newSilent(t)
	s := openldap(t)
	s.URL, s.Security, s.BaseDN, s.Timeout = "ldap://127.0.0.1:"+hang.port(), "insecure", testldap.BaseDN, db.Duration(time.Second)
	d := newDir(t, s, "")
	for _, tc := range []struct{ name, user, password string }{
		{"empty password", "alice", ""},
		{"empty username", "", "pw"},
		{"username too long", strings.Repeat("a", 129), "pw"},
		{"NUL", "ali\x00ce", "pw"},
		{"newline", "alice\n", "pw"},
		{"DEL", "alice\x7f", "pw"},
		{"not UTF-8", "al\xffice", "pw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := d.Authenticate(ctx(t), tc.user, tc.password); err != ldapdir.ErrInvalidCredentials {
				t.Errorf("Authenticate = %v, want ErrInvalidCredentials", err)
			}
			if tc.user != "alice" {
				if _, err := d.Lookup(ctx(t), tc.user); err != ldapdir.ErrNoSuchUser {
					t.Errorf("Lookup = %v, want ErrNoSuchUser", err)
				}
			}
		})
	}
	if n := hang.accepted.Load(); n != 0 {
		t.Errorf("%d connections were made", n)
	}
	// 128 bytes is a valid length: that one is asked (and times out).
	if _, err := d.Authenticate(ctx(t), strings.Repeat("a", 128), "pw"); !errors.Is(err, ldapdir.ErrUnavailable) {
		t.Errorf("128-byte username: %v, want the silent server's timeout", err)
	}
}

func TestUnknownCA(t *testing.T) {
	srv := testldap.Start(t)
	other := string(testldap.NewCA(t).PEM)
	ldaps := srv.Settings(openldap(t))
	ldaps.CACert = other
	starttls := ldaps
	starttls.URL, starttls.Security = srv.URL, "starttls"
	system := srv.Settings(openldap(t))
	system.CACert = ""
	for _, tc := range []struct {
		name string
		s    db.LDAPSettings
		want string
	}{
		{"LDAPS", ldaps, "the directory's certificate is not signed by the configured CA"},
		{"StartTLS", starttls, "the directory's certificate is not signed by the configured CA"},
		{"system CAs", system, "not signed by a CA this system trusts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDir(t, tc.s, srv.ServicePassword)
			e, err := d.Authenticate(ctx(t), "alice", testldap.AlicePassword)
			if !errors.Is(err, ldapdir.ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Authenticate = %+v, %v; want ErrUnavailable: %s", e, err, tc.want)
			}
			if errors.Is(err, ldapdir.ErrInvalidCredentials) {
				t.Error("a certificate failure reads as a wrong password")
			}
			noPassword(t, err.Error())
			if _, err := d.Lookup(ctx(t), "alice"); !errors.Is(err, ldapdir.ErrUnavailable) {
				t.Errorf("Lookup = %v", err)
			}
		})
	}
}

// The certificate must name the host of the URL, not merely chain to the
// pinned CA.
func TestCertificateForAnotherHost(t *testing.T) {
	ca := testldap.NewCA(t)
	certPEM, keyPEM := ca.Issue(t, "ldap.other.test")
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// Handshake, then hang up.
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_ = c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	})
	t.Cleanup(func() { _ = l.Close(); wg.Wait() })

	s := openldap(t)
	s.URL, s.Security, s.BaseDN, s.CACert = "ldaps://"+l.Addr().String(), "ldaps", testldap.BaseDN, string(ca.PEM)
	_, err = newDir(t, s, "").Authenticate(ctx(t), "alice", testldap.AlicePassword)
	if !errors.Is(err, ldapdir.ErrUnavailable) || !strings.Contains(err.Error(), "certificate is not valid for 127.0.0.1") {
		t.Errorf("Authenticate = %v, want the certificate refused for its host name", err)
	}
}

func TestPlainLDAP(t *testing.T) {
	srv := testldap.Start(t)
	s := srv.Settings(openldap(t))
	s.URL, s.CACert = srv.URL, ""
	// ldap:// with Security "ldaps" (the form's default) is refused.
	if err := ldapdir.Validate(s); err == nil || !strings.Contains(err.Error(), "security") {
		t.Errorf("Validate(ldap:// with ldaps) = %v", err)
	}
	if _, err := ldapdir.New(s, srv.ServicePassword); err == nil {
		t.Error("New accepted ldap:// with ldaps")
	}
	s.Security = "insecure"
	d := newDir(t, s, srv.ServicePassword)
	e, err := d.Authenticate(ctx(t), "alice", testldap.AlicePassword)
	if err != nil {
		t.Fatal(err)
	}
	wantGroups(t, e, "core-team", "netops")
	r := d.Test(ctx(t), "")
	if !r.OK() || !strings.Contains(r.Steps[0].Detail, "plain LDAP") {
		t.Errorf("Test over plain LDAP = %+v", r)
	}
}

func TestServiceBindRefused(t *testing.T) {
	srv := testldap.Start(t)
	d := newDir(t, srv.Settings(openldap(t)), "wrong-Service-7")
	for name, call := range map[string]func() error{
		"Authenticate": func() error { _, err := d.Authenticate(ctx(t), "alice", testldap.AlicePassword); return err },
		"Lookup":       func() error { _, err := d.Lookup(ctx(t), "alice"); return err },
	} {
		err := call()
		if !errors.Is(err, ldapdir.ErrUnavailable) || errors.Is(err, ldapdir.ErrInvalidCredentials) ||
			!strings.Contains(err.Error(), "the service account's bind was refused: check the bind DN and password") {
			t.Errorf("%s = %v, want ErrUnavailable: the service bind refused", name, err)
		}
		noPassword(t, err.Error())
	}

	// Without a bind DN: anonymous, which this directory lets read
	// nothing, not even the base DN. That is the directory unusable, not
	// every user gone (a sync would disable them all).
	s := srv.Settings(openldap(t))
	s.BindDN = ""
	_, err := newDir(t, s, "").Lookup(ctx(t), "alice")
	if !errors.Is(err, ldapdir.ErrUnavailable) || !strings.Contains(err.Error(), "the base DN dc=example,dc=test does not exist") {
		t.Errorf("anonymous Lookup = %v, want ErrUnavailable (anonymous reads nothing here)", err)
	}
}

func TestLookup(t *testing.T) {
	srv := testldap.Start(t)
	d := ldapsDir(t, srv)
	e, err := d.Lookup(ctx(t), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if e.Username != "alice" || e.DN != testldap.UserDN("alice") {
		t.Errorf("Lookup = %+v", e)
	}
	wantGroups(t, e, "core-team", "netops")

	// Membership changes show at the next lookup: alice leaves netops
	// when core-team does.
	srv.RemoveMember(t, testldap.GroupDN("netops"), testldap.GroupDN("core-team"))
	if e, err = d.Lookup(ctx(t), "alice"); err != nil {
		t.Fatal(err)
	}
	wantGroups(t, e, "core-team")
	srv.AddMember(t, testldap.GroupDN("netops"), testldap.UserDN("bob"))
	srv.RemoveMember(t, testldap.GroupDN("netops"), testldap.UserDN("dave"))
	if e, err = d.Lookup(ctx(t), "dave"); err != nil {
		t.Fatal(err)
	}
	wantGroups(t, e)
	if e, err = d.Lookup(ctx(t), "bob"); err != nil {
		t.Fatal(err)
	}
	wantGroups(t, e, "netops", "viewers")

	srv.Delete(t, testldap.UserDN("alice"))
	if e, err := d.Lookup(ctx(t), "alice"); !errors.Is(err, ldapdir.ErrNoSuchUser) {
		t.Errorf("Lookup of a deleted user = %+v, %v; want ErrNoSuchUser", e, err)
	}
	if _, err := d.Authenticate(ctx(t), "alice", testldap.AlicePassword); err != ldapdir.ErrInvalidCredentials {
		t.Errorf("Authenticate as a deleted user = %v", err)
	}

	// A password changed by the administrator: the old one is refused.
	srv.SetPassword(t, testldap.UserDN("bob"), "Rebuilt-22")
	if _, err := d.Authenticate(ctx(t), "bob", testldap.BobPassword); err != ldapdir.ErrInvalidCredentials {
		t.Errorf("old password: %v", err)
	}
	if _, err := d.Authenticate(ctx(t), "bob", "Rebuilt-22"); err != nil {
		t.Errorf("new password: %v", err)
	}
}

// A filter finding two entries (or more than the size limit) finds
// nobody: the sign-in never picks one.
func TestAmbiguousFilter(t *testing.T) {
	srv := testldap.Start(t)
	for _, filter := range []string{
		"(&(objectClass=inetOrgPerson)(|(uid={username})(uid=bob)))",       // two entries
		"(&(objectClass=inetOrgPerson)(|(uid={username})(objectClass=*)))", // all four: size limit
	} {
		t.Run(filter, func(t *testing.T) {
			s := srv.Settings(openldap(t))
			s.UserFilter = filter
			d := newDir(t, s, srv.ServicePassword)
			if _, err := d.Authenticate(ctx(t), "alice", testldap.AlicePassword); err != ldapdir.ErrInvalidCredentials {
				t.Errorf("Authenticate = %v, want ErrInvalidCredentials", err)
			}
			if _, err := d.Lookup(ctx(t), "alice"); !errors.Is(err, ldapdir.ErrAmbiguous) {
				t.Errorf("Lookup = %v, want ErrAmbiguous", err)
			}
			r := d.Test(ctx(t), "alice")
			last := r.Steps[len(r.Steps)-1]
			if r.OK() || last.Name != ldapdir.StepUserSearch || !strings.Contains(last.Detail, "the filter finds more than one entry") {
				t.Errorf("Test = %+v", r)
			}
		})
	}
}

func TestSearchGroupMode(t *testing.T) {
	srv := testldap.Start(t)
	s := srv.Settings(openldap(t))
	s.GroupMode, s.GroupBaseDN = "search", testldap.GroupsDN
	d := newDir(t, s, srv.ServicePassword)
	e, err := d.Authenticate(ctx(t), "alice", testldap.AlicePassword)
	if err != nil {
		t.Fatal(err)
	}
	wantGroups(t, e, "core-team", "netops")

	// A cycle: netops in core-team in netops. Each group once, and an
	// answer.
	srv.AddMember(t, testldap.GroupDN("core-team"), testldap.GroupDN("netops"))
	if e, err = d.Lookup(ctx(t), "alice"); err != nil {
		t.Fatal(err)
	}
	wantGroups(t, e, "core-team", "netops")

	// Groups the dynlist overlay knows nothing of (uniqueMember): what is
	// found is found by searching, level by level, and no deeper than
	// eight levels. u1 holds alice, u2 holds u1, … u10 holds u9; u1 also
	// holds u3 (a cycle).
	for i := 1; i <= 10; i++ {
		member := testldap.GroupDN("u" + strconv.Itoa(i-1))
		if i == 1 {
			member = testldap.UserDN("alice")
		}
		members := []string{member}
		if i == 1 {
			members = append(members, testldap.GroupDN("u3"))
		}
		srv.Add(t, testldap.GroupDN("u"+strconv.Itoa(i)), map[string][]string{
			"objectClass": {"groupOfUniqueNames"}, "cn": {"u" + strconv.Itoa(i)}, "uniqueMember": members,
		})
	}
	s.GroupFilter, s.GroupMemberAttr = "(objectClass=groupOfUniqueNames)", "uniqueMember"
	e, err = newDir(t, s, srv.ServicePassword).Lookup(ctx(t), "alice")
	if err != nil {
		t.Fatal(err)
	}
	wantGroups(t, e, "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8")
}

// Active Directory's in-chain rule is not OpenLDAP's: the search runs and
// finds nothing (the filter itself is checked in filter_test.go).
func TestADChainModeRuns(t *testing.T) {
	srv := testldap.Start(t)
	s := srv.Settings(openldap(t))
	s.GroupMode = "ad-chain"
	e, err := newDir(t, s, srv.ServicePassword).Lookup(ctx(t), "alice")
	if err != nil || e.Username != "alice" {
		t.Fatalf("Lookup = %+v, %v", e, err)
	}
	wantGroups(t, e)
}

// A server that accepts and never answers fails the call within the
// timeout, at every step where it may fall silent; cancelling the
// context ends the call at once.
func TestTimeout(t *testing.T) {
	t.Parallel() // waits, mostly
	hang := newSilent(t)
	for _, sec := range []string{"insecure", "starttls", "ldaps"} {
		t.Run(sec, func(t *testing.T) {
			t.Parallel()
			s := openldap(t)
			scheme := "ldap://"
			if sec == "ldaps" {
				scheme = "ldaps://"
			}
			s.URL, s.Security, s.BaseDN, s.Timeout = scheme+"127.0.0.1:"+hang.port(), sec, testldap.BaseDN, db.Duration(time.Second)
			d := newDir(t, s, "")
			start := time.Now()
			err := bounded(t, 10*time.Second, func() error {
				_, err := d.Authenticate(ctx(t), "alice", testldap.AlicePassword)
				return err
			})
			if !errors.Is(err, ldapdir.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) ||
				!strings.Contains(err.Error(), "did not answer within 1s") {
				t.Errorf("Authenticate = %v, want ErrUnavailable: did not answer within 1s", err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the 1 s timeout took %s", took)
			}
			r := d.Test(ctx(t), "alice")
			if r.OK() || !strings.Contains(r.Steps[len(r.Steps)-1].Detail, "did not answer") {
				t.Errorf("Test = %+v", r)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		s := openldap(t)
		s.URL, s.Security, s.BaseDN, s.Timeout = "ldap://127.0.0.1:"+hang.port(), "insecure", testldap.BaseDN, db.Duration(2*time.Minute)
		d := newDir(t, s, "")
		c, cancel := context.WithCancel(t.Context())
		time.AfterFunc(200*time.Millisecond, cancel)
		err := bounded(t, 10*time.Second, func() error { _, err := d.Lookup(c, "alice"); return err })
		if !errors.Is(err, ldapdir.ErrUnavailable) || !errors.Is(err, context.Canceled) {
			t.Errorf("Lookup = %v, want ErrUnavailable (cancelled)", err)
		}
	})
}

// bounded runs f and fails the test if it does not return within limit.
func bounded(t *testing.T, limit time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("no answer after %s", limit)
		return nil
	}
}

func TestReport(t *testing.T) {
	srv := testldap.Start(t)
	steps := func(r ldapdir.Report) string {
		var b strings.Builder
		for _, s := range r.Steps {
			ok := "FAIL"
			if s.OK {
				ok = "ok"
			}
			b.WriteString(s.Name + ":" + ok + " ")
		}
		return strings.TrimSpace(b.String())
	}
	check := func(t *testing.T, r ldapdir.Report, want string, detail string) {
		t.Helper()
		if got := steps(r); got != want {
			t.Errorf("steps = %s, want %s", got, want)
		}
		if last := r.Steps[len(r.Steps)-1]; !strings.Contains(last.Detail, detail) {
			t.Errorf("%s: %q, want it to mention %q", last.Name, last.Detail, detail)
		}
		for _, s := range r.Steps {
			noPassword(t, s.Detail)
		}
	}

	t.Run("good", func(t *testing.T) {
		r := ldapsDir(t, srv).Test(ctx(t), "alice")
		check(t, r, "connect:ok service bind:ok user search:ok groups:ok", "core-team, netops")
		if !r.OK() || r.Entry == nil || r.Entry.Username != "alice" || len(r.Entry.Groups) != 2 {
			t.Errorf("report = %+v", r)
		}
		for _, want := range []string{"LDAPS", "the configured CA"} {
			if !strings.Contains(r.Steps[0].Detail, want) {
				t.Errorf("connect: %q lacks %q", r.Steps[0].Detail, want)
			}
		}
		if !strings.Contains(r.Steps[1].Detail, testldap.ServiceDN) || !strings.Contains(r.Steps[2].Detail, testldap.UserDN("alice")) {
			t.Errorf("report = %+v", r)
		}
	})
	t.Run("no username", func(t *testing.T) {
		r := ldapsDir(t, srv).Test(ctx(t), "")
		check(t, r, "connect:ok service bind:ok", "bound as")
		if !r.OK() || r.Entry != nil {
			t.Errorf("report = %+v", r)
		}
	})
	t.Run("unknown user", func(t *testing.T) {
		r := ldapsDir(t, srv).Test(ctx(t), "mallory")
		check(t, r, "connect:ok service bind:ok user search:FAIL", "no entry under dc=example,dc=test matches (&(objectClass=inetOrgPerson)(uid=mallory))")
		if r.OK() || r.Entry != nil {
			t.Errorf("report = %+v", r)
		}
	})
	t.Run("wrong service password", func(t *testing.T) {
		r := newDir(t, srv.Settings(openldap(t)), "wrong-Service-7").Test(ctx(t), "alice")
		check(t, r, "connect:ok service bind:FAIL", "the service account's bind was refused")
	})
	t.Run("wrong CA", func(t *testing.T) {
		s := srv.Settings(openldap(t))
		s.CACert = string(testldap.NewCA(t).PEM)
		r := newDir(t, s, srv.ServicePassword).Test(ctx(t), "alice")
		check(t, r, "connect:FAIL", "certificate is not signed by the configured CA")
	})
	t.Run("wrong base DN", func(t *testing.T) {
		s := srv.Settings(openldap(t))
		s.BaseDN = "dc=nowhere,dc=test"
		r := newDir(t, s, srv.ServicePassword).Test(ctx(t), "alice")
		check(t, r, "connect:ok service bind:ok user search:FAIL", "the base DN dc=nowhere,dc=test does not exist")
	})
	t.Run("nothing listening", func(t *testing.T) {
		hang := newSilent(t)
		port := hang.port()
		_ = hang.l.Close()
		s := srv.Settings(openldap(t))
		s.URL = "ldaps://127.0.0.1:" + port
		r := newDir(t, s, srv.ServicePassword).Test(ctx(t), "alice")
		check(t, r, "connect:FAIL", "cannot reach 127.0.0.1:"+port)
	})
}
