package ldapdir

import (
	"testing"

	"github.com/go-ldap/ldap/v3"

	"backupd/db"
)

// The AD in-chain filter is tested as text: OpenLDAP does not implement
// the matching rule (it answers with no entries and success), so no
// server here can prove what it finds.
func TestChainFilter(t *testing.T) {
	p, _ := Preset("ad")
	d := &Directory{s: p}
	dn := `CN=Smith\, John (ops*),OU=Staff\\Ext,DC=corp,DC=example`
	got := d.chainFilter(dn)
	want := `(&(objectClass=group)(member:1.2.840.113556.1.4.1941:=CN=Smith\5c, John \28ops\2a\29,OU=Staff\5c\5cExt,DC=corp,DC=example))`
	if got != want {
		t.Errorf("chainFilter =\n%s\nwant\n%s", got, want)
	}
	if _, err := ldap.CompileFilter(got); err != nil {
		t.Errorf("the filter does not compile: %v", err)
	}
	// Without a group filter, the member clause alone.
	d = &Directory{s: db.LDAPSettings{GroupMemberAttr: "member"}}
	if got := d.chainFilter("cn=a,dc=b"); got != "(member:1.2.840.113556.1.4.1941:=cn=a,dc=b)" {
		t.Errorf("chainFilter without a group filter = %s", got)
	}
}

func TestMemberFilter(t *testing.T) {
	d := &Directory{s: db.LDAPSettings{GroupFilter: "(objectClass=groupOfUniqueNames)", GroupMemberAttr: "uniqueMember"}}
	if got, want := d.memberFilter([]string{"cn=a*,dc=x"}), `(&(objectClass=groupOfUniqueNames)(uniqueMember=cn=a\2a,dc=x))`; got != want {
		t.Errorf("memberFilter = %s, want %s", got, want)
	}
	got := d.memberFilter([]string{"cn=a,dc=x", "cn=(b),dc=x"})
	if want := `(&(objectClass=groupOfUniqueNames)(|(uniqueMember=cn=a,dc=x)(uniqueMember=cn=\28b\29,dc=x)))`; got != want {
		t.Errorf("memberFilter = %s, want %s", got, want)
	}
	if _, err := ldap.CompileFilter(got); err != nil {
		t.Error(err)
	}
}

func TestUserFilterEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"alice":           "(&(objectClass=inetOrgPerson)(uid=alice))",
		"*)(uid=*":        `(&(objectClass=inetOrgPerson)(uid=\2a\29\28uid=\2a))`,
		`alice)(|(uid=*`:  `(&(objectClass=inetOrgPerson)(uid=alice\29\28|\28uid=\2a))`,
		`back\slash`:      `(&(objectClass=inetOrgPerson)(uid=back\5cslash))`,
		"{username}twice": "(&(objectClass=inetOrgPerson)(uid={username}twice))",
	} {
		if got := userFilter("(&(objectClass=inetOrgPerson)(uid={username}))", in); got != want {
			t.Errorf("userFilter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestFirstRDNValue(t *testing.T) {
	for dn, want := range map[string]string{
		"cn=netops,ou=groups,dc=example,dc=test": "netops",
		`CN=Smith\, John,OU=Staff,DC=corp`:       "Smith, John",
		"not a dn":                               "",
	} {
		if got := firstRDNValue(dn); got != want {
			t.Errorf("firstRDNValue(%q) = %q, want %q", dn, got, want)
		}
	}
}
