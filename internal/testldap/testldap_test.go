package testldap

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
)

func dial(t *testing.T, s *Server) *ldap.Conn {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CAPEM) {
		t.Fatal("CAPEM holds no certificate")
	}
	c, err := ldap.DialURL(s.LDAPSURL, ldap.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}),
		ldap.DialWithTLSConfig(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetTimeout(10 * time.Second)
	return c
}

func memberOf(t *testing.T, c *ldap.Conn, uid string) []string {
	t.Helper()
	res, err := c.Search(ldap.NewSearchRequest(PeopleDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 2, 10, false,
		"(uid="+ldap.EscapeFilter(uid)+")", []string{"memberOf"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 1 {
		t.Fatalf("uid=%s: %d entries", uid, len(res.Entries))
	}
	v := res.Entries[0].GetAttributeValues("memberOf")
	slices.Sort(v)
	return v
}

// TestDirectory checks what the ldapdir tests rely on: the documented
// passwords bind over LDAPS with the CA pinned, the service account
// reads users and their nested groups but no password, and the helpers
// change the directory.
func TestDirectory(t *testing.T) {
	s := Start(t)
	for dn, pw := range map[string]string{
		UserDN("alice"): AlicePassword, UserDN("bob"): BobPassword, UserDN("carol"): CarolPassword,
		UserDN("dave"): DavePassword, ServiceDN: ServicePassword, AdminDN: AdminPassword,
	} {
		if err := dial(t, s).Bind(dn, pw); err != nil {
			t.Errorf("bind %s: %v", dn, err)
		}
		if err := dial(t, s).Bind(dn, pw+"x"); !ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
			t.Errorf("bind %s with a wrong password: %v, want invalid credentials", dn, err)
		}
	}

	c := dial(t, s)
	if err := c.Bind(ServiceDN, ServicePassword); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"alice": {GroupDN("core-team"), GroupDN("netops")},
		"bob":   {GroupDN("viewers")},
		"carol": {GroupDN("lab")},
		"dave":  {GroupDN("netops")},
	}
	for uid, groups := range want {
		if got := memberOf(t, c, uid); !slices.Equal(got, groups) {
			t.Errorf("%s memberOf = %q, want %q", uid, got, groups)
		}
	}
	res, err := c.Search(ldap.NewSearchRequest(PeopleDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 10, false,
		"(uid=alice)", []string{"userPassword"}, nil))
	if err != nil || len(res.Entries) != 1 {
		t.Fatalf("search: %v", err)
	}
	if pw := res.Entries[0].GetAttributeValues("userPassword"); len(pw) != 0 {
		t.Errorf("the service account reads passwords: %q", pw)
	}

	s.RemoveMember(t, GroupDN("netops"), GroupDN("core-team"))
	if got := memberOf(t, c, "alice"); !slices.Equal(got, []string{GroupDN("core-team")}) {
		t.Errorf("after RemoveMember alice memberOf = %q", got)
	}
	s.AddMember(t, GroupDN("viewers"), UserDN("alice"))
	if got := memberOf(t, c, "alice"); !slices.Equal(got, []string{GroupDN("core-team"), GroupDN("viewers")}) {
		t.Errorf("after AddMember alice memberOf = %q", got)
	}
	s.SetPassword(t, UserDN("bob"), "new-Password-5")
	if err := dial(t, s).Bind(UserDN("bob"), "new-Password-5"); err != nil {
		t.Errorf("bind with the new password: %v", err)
	}
	if err := dial(t, s).Bind(UserDN("bob"), BobPassword); err == nil {
		t.Error("the old password still binds")
	}
	s.Delete(t, UserDN("carol"))
	if err := dial(t, s).Bind(UserDN("carol"), CarolPassword); !ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
		t.Errorf("bind as a deleted user: %v", err)
	}
}

// TestStartTLS: the plain port offers StartTLS with the same
// certificate, and a client pinning another CA is refused.
func TestStartTLS(t *testing.T) {
	s := Start(t)
	for _, tc := range []struct {
		name string
		ca   []byte
		ok   bool
	}{{"own CA", s.CAPEM, true}, {"other CA", NewCA(t).PEM, false}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ldap.DialURL(s.URL, ldap.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetTimeout(10 * time.Second)
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(tc.ca)
			err = c.StartTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
			if (err == nil) != tc.ok {
				t.Fatalf("StartTLS: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
