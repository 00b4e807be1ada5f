package ldapdir_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"backupd/app/identity/ldapdir"
	"backupd/db"
	"backupd/internal/testldap"
)

func TestPreset(t *testing.T) {
	for _, tc := range []struct {
		name                                                  string
		filter, attr, mode, groupFilter, memberAttr, contains string
	}{
		{"openldap", "(&(objectClass=inetOrgPerson)(uid={username}))", "uid", "memberof", "(objectClass=groupOfNames)", "member", ""},
		{"ad", "(&(objectClass=user)(sAMAccountName={username})(!(userAccountControl:1.2.840.113556.1.4.803:=2)))", "sAMAccountName", "ad-chain", "(objectClass=group)", "member", ""},
		{"ad-upn", "(&(objectClass=user)(userPrincipalName={username})(!(userAccountControl:1.2.840.113556.1.4.803:=2)))", "userPrincipalName", "ad-chain", "(objectClass=group)", "member", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := ldapdir.Preset(tc.name)
			if !ok {
				t.Fatal("unknown preset")
			}
			if p.UserFilter != tc.filter || p.UsernameAttr != tc.attr || p.GroupMode != tc.mode ||
				p.GroupFilter != tc.groupFilter || p.GroupMemberAttr != tc.memberAttr || p.Preset != tc.name {
				t.Errorf("Preset(%q) = %+v", tc.name, p)
			}
			if p.URL != "" || p.BaseDN != "" || p.BindDN != "" || p.Security != "" {
				t.Errorf("a preset filled in the server: %+v", p)
			}
			// With a server filled in, a preset is valid settings.
			p.URL, p.Security, p.BaseDN = "ldaps://dc1.corp.example", "ldaps", "dc=corp,dc=example"
			if err := ldapdir.Validate(p); err != nil {
				t.Error(err)
			}
		})
	}
	if _, ok := ldapdir.Preset("novell"); ok {
		t.Error("an unknown preset was found")
	}
}

func openldap(t *testing.T) db.LDAPSettings {
	t.Helper()
	p, ok := ldapdir.Preset("openldap")
	if !ok {
		t.Fatal("no openldap preset")
	}
	return p
}

func TestValidate(t *testing.T) {
	ca := string(testldap.NewCA(t).PEM)
	good := openldap(t)
	good.URL, good.Security, good.BaseDN, good.BindDN, good.CACert = "ldaps://ldap.example.com:636", "ldaps", "dc=example,dc=com", "cn=svc,dc=example,dc=com", ca
	good.GroupBaseDN, good.Timeout, good.SyncInterval = "ou=groups,dc=example,dc=com", db.Duration(30*time.Second), db.Duration(15*time.Minute)
	if err := ldapdir.Validate(good); err != nil {
		t.Fatalf("good settings: %v", err)
	}

	for _, tc := range []struct {
		name   string
		change func(*db.LDAPSettings)
		// fields and a word each message holds
		want map[string]string
	}{
		{"empty", func(s *db.LDAPSettings) { *s = db.LDAPSettings{} }, map[string]string{
			"url": "required", "security": "choose", "base_dn": "required", "user_filter": "required",
			"username_attr": "required", "group_mode": "choose",
		}},
		{"http URL", func(s *db.LDAPSettings) { s.URL = "https://ldap.example.com" }, map[string]string{"url": "ldaps://"}},
		{"no host", func(s *db.LDAPSettings) { s.URL = "ldaps://:636" }, map[string]string{"url": "no host"}},
		{"bad port", func(s *db.LDAPSettings) { s.URL = "ldaps://ldap.example.com:99999" }, map[string]string{"url": "port"}},
		{"path in URL", func(s *db.LDAPSettings) { s.URL = "ldaps://ldap.example.com/dc=example,dc=com" }, map[string]string{"url": "host and a port only"}},
		{"ldap URL with ldaps", func(s *db.LDAPSettings) { s.URL = "ldap://ldap.example.com" }, map[string]string{"security": "StartTLS"}},
		{"ldaps URL with starttls", func(s *db.LDAPSettings) { s.Security = "starttls" }, map[string]string{"security": "LDAPS"}},
		{"ldaps URL with insecure", func(s *db.LDAPSettings) { s.Security = "insecure" }, map[string]string{"security": "LDAPS"}},
		{"unknown security", func(s *db.LDAPSettings) { s.Security = "ssl" }, map[string]string{"security": `"ssl"`}},
		{"filter without placeholder", func(s *db.LDAPSettings) { s.UserFilter = "(uid=alice)" }, map[string]string{"user_filter": "{username}"}},
		{"filter that does not compile", func(s *db.LDAPSettings) { s.UserFilter = "(&(uid={username})" }, map[string]string{"user_filter": "not a valid LDAP filter"}},
		{"filter without parentheses", func(s *db.LDAPSettings) { s.UserFilter = "uid={username}" }, map[string]string{"user_filter": "not a valid LDAP filter"}},
		{"bad base DN", func(s *db.LDAPSettings) { s.BaseDN = "example.com" }, map[string]string{"base_dn": "not a valid DN"}},
		{"bad bind DN", func(s *db.LDAPSettings) { s.BindDN = "svc@example.com" }, map[string]string{"bind_dn": "not a valid DN"}},
		{"bad group base DN", func(s *db.LDAPSettings) { s.GroupBaseDN = "groups" }, map[string]string{"group_base_dn": "not a valid DN"}},
		{"CA not PEM", func(s *db.LDAPSettings) { s.CACert = "MIIB..." }, map[string]string{"ca_cert": "no certificate"}},
		{"CA is a key", func(s *db.LDAPSettings) {
			s.CACert = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
		}, map[string]string{"ca_cert": "PRIVATE KEY"}},
		{"CA garbage in PEM", func(s *db.LDAPSettings) {
			s.CACert = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
		}, map[string]string{"ca_cert": "cannot be read"}},
		{"unknown group mode", func(s *db.LDAPSettings) { s.GroupMode = "nested" }, map[string]string{"group_mode": `"nested"`}},
		{"bad group filter", func(s *db.LDAPSettings) { s.GroupFilter = "objectClass=group" }, map[string]string{"group_filter": "not a valid LDAP filter"}},
		{"bad username attribute", func(s *db.LDAPSettings) { s.UsernameAttr = "uid)(cn" }, map[string]string{"username_attr": "not an attribute name"}},
		{"bad member attribute", func(s *db.LDAPSettings) { s.GroupMemberAttr = "member;x" }, map[string]string{"group_member_attr": "not an attribute name"}},
		{"timeout too short", func(s *db.LDAPSettings) { s.Timeout = db.Duration(500 * time.Millisecond) }, map[string]string{"timeout": "between"}},
		{"timeout too long", func(s *db.LDAPSettings) { s.Timeout = db.Duration(3 * time.Minute) }, map[string]string{"timeout": "between"}},
		{"sync too often", func(s *db.LDAPSettings) { s.SyncInterval = db.Duration(30 * time.Second) }, map[string]string{"sync_interval": "between"}},
		{"sync too rarely", func(s *db.LDAPSettings) { s.SyncInterval = db.Duration(25 * time.Hour) }, map[string]string{"sync_interval": "between"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good
			tc.change(&s)
			err := ldapdir.Validate(s)
			var fe ldapdir.FieldErrors
			if !errors.As(err, &fe) {
				t.Fatalf("Validate = %v, want FieldErrors", err)
			}
			got := map[string]string{}
			for _, e := range fe {
				if _, dup := got[e.Field]; dup {
					t.Errorf("two errors for %s", e.Field)
				}
				got[e.Field] = e.Message
			}
			for field, word := range tc.want {
				if !strings.Contains(got[field], word) {
					t.Errorf("%s: %q, want it to mention %q", field, got[field], word)
				}
			}
			for field := range got {
				if _, ok := tc.want[field]; !ok {
					t.Errorf("unexpected error on %s: %s", field, got[field])
				}
			}
			if !strings.HasPrefix(err.Error(), "invalid LDAP settings: ") {
				t.Errorf("Error() = %q", err)
			}
		})
	}

	// Zero durations take the defaults; ldap:// with StartTLS or
	// insecure is fine; no CA uses the system's.
	ok := good
	ok.Timeout, ok.SyncInterval, ok.CACert, ok.BindDN, ok.GroupBaseDN = 0, 0, "", "", ""
	for _, sec := range []string{"starttls", "insecure"} {
		ok.URL, ok.Security = "ldap://ldap.example.com", sec
		if err := ldapdir.Validate(ok); err != nil {
			t.Errorf("%s: %v", sec, err)
		}
	}
}
