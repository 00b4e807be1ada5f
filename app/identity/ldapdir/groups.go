package ldapdir

import (
	"slices"
	"strings"

	"github.com/go-ldap/ldap/v3"
)

// Bounds of the nested-group search (GroupsSearch): a directory with
// deeper nesting or more groups per user is cut there, not followed
// forever.
const (
	maxDepth  = 8
	maxGroups = 1000
	// orBatch is how many DNs one search asks about (the filter's size).
	orBatch = 50
)

// adInChain is Active Directory's LDAP_MATCHING_RULE_IN_CHAIN: a member
// filter with it matches through nested groups.
const adInChain = "1.2.840.113556.1.4.1941"

// groups finds the user's groups as the group mode says, sorted by DN,
// without duplicates. le is the user's entry as findUser read it.
func (s *session) groups(le *ldap.Entry) ([]Group, error) {
	var dns []string
	switch s.d.s.GroupMode {
	case GroupsMemberOf:
		dns = le.GetEqualFoldAttributeValues("memberOf")
	case GroupsSearch:
		var err error
		if dns, err = s.nestedGroups(le.DN); err != nil {
			return nil, err
		}
	case GroupsADChain:
		res, err := s.search(ldap.NewSearchRequest(s.d.groupBaseDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
			maxGroups, 0, false, s.d.chainFilter(le.DN), []string{"1.1"}, nil), "searching the user's groups")
		if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
			return nil, err
		}
		for _, e := range res.Entries {
			dns = append(dns, e.DN)
		}
	}
	seen := make(map[string]bool, len(dns))
	groups := make([]Group, 0, len(dns))
	for _, dn := range dns {
		if k := foldDN(dn); !seen[k] {
			seen[k] = true
			groups = append(groups, Group{DN: dn, Name: firstRDNValue(dn)})
		}
	}
	slices.SortFunc(groups, func(a, b Group) int { return strings.Compare(foldDN(a.DN), foldDN(b.DN)) })
	return groups, nil
}

// nestedGroups searches the groups holding dn, then the groups holding
// those, level by level: each group is asked about once (a cycle ends),
// at most maxDepth levels and maxGroups groups.
func (s *session) nestedGroups(dn string) ([]string, error) {
	seen := map[string]bool{foldDN(dn): true}
	var found []string
	level := []string{dn}
	for depth := 0; depth < maxDepth && len(level) > 0; depth++ {
		var next []string
		for chunk := range slices.Chunk(level, orBatch) {
			res, err := s.search(ldap.NewSearchRequest(s.d.groupBaseDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
				maxGroups, 0, false, s.d.memberFilter(chunk), []string{"1.1"}, nil), "searching the user's groups")
			if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
				return nil, err
			}
			for _, e := range res.Entries {
				k := foldDN(e.DN)
				if seen[k] {
					continue
				}
				seen[k] = true
				found = append(found, e.DN)
				next = append(next, e.DN)
				if len(found) == maxGroups {
					return found, nil
				}
			}
		}
		level = next
	}
	return found, nil
}

// memberFilter finds the groups (GroupFilter) whose member attribute
// holds any of dns.
func (d *Directory) memberFilter(dns []string) string {
	attr := d.memberAttr()
	var b strings.Builder
	if len(dns) > 1 {
		b.WriteString("(|")
	}
	for _, dn := range dns {
		b.WriteString("(" + attr + "=" + ldap.EscapeFilter(dn) + ")")
	}
	if len(dns) > 1 {
		b.WriteString(")")
	}
	return d.andGroupFilter(b.String())
}

// chainFilter finds, on Active Directory, every group dn is in, nested
// ones included, in one search. OpenLDAP does not implement the in-chain
// rule (it answers such a filter with no entries and success), so the
// tests check the filter this builds, not its results.
func (d *Directory) chainFilter(dn string) string {
	return d.andGroupFilter("(" + d.memberAttr() + ":" + adInChain + ":=" + ldap.EscapeFilter(dn) + ")")
}

func (d *Directory) andGroupFilter(f string) string {
	if d.s.GroupFilter == "" {
		return f
	}
	return "(&" + d.s.GroupFilter + f + ")"
}

func (d *Directory) memberAttr() string {
	if d.s.GroupMemberAttr == "" {
		return "member"
	}
	return d.s.GroupMemberAttr
}

// firstRDNValue is a group's name: the value of its DN's first RDN (cn=
// netops,ou=groups,… is netops). A DN that does not parse has none.
func firstRDNValue(dn string) string {
	p, err := ldap.ParseDN(dn)
	if err != nil || len(p.RDNs) == 0 || len(p.RDNs[0].Attributes) == 0 {
		return ""
	}
	return p.RDNs[0].Attributes[0].Value
}

// foldDN is the form DNs are compared in: lower case, without the spaces
// some servers write after commas.
func foldDN(dn string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(dn)), ", ", ",")
}
