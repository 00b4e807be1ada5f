package importer

import (
	"net"
	"regexp"
	"strings"
)

// A router.db read with the wrong column map, or a line with a column
// too many or too few, puts a value in a column it does not belong to:
// a password where the username goes (then kept as a name, in clear,
// and shown on every page), an address where the group goes. A line is
// refused (ReasonShifted) when one of its columns holds what another
// column would:
//
//   - username: an IP address; a password hash; what looks like a
//     password: a character usernames do not have (see secretChars), or
//     upper and lower case letters with digits between letters at least
//     twice ("S3cr3tx", "5uP3R53cR3T"); a platform or model name backupd
//     knows (ios, junos, …), except the factory logins of some vendors
//     that are also model names (cisco, netscreen, apc, vyatta, vyos,
//     cumulus, ubnt);
//   - group: an IP address or a password hash;
//   - model: an IP address or a password hash (an "ip" column read as
//     the model: Oxidized's Sources.md layout name:ip:model:…).
//
// The value is never shown: it may be a password.

// Kinds of misplaced value, the third argument of ReasonShifted.
const (
	LooksIP       = "ip"
	LooksHash     = "hash"
	LooksSecret   = "secret"
	LooksPlatform = "platform"
)

// secretChars are characters that passwords have and usernames on
// network devices do not.
const secretChars = "!\"#$%&'()*,:;<=>?[]^`{|}~"

// factoryLogins are usernames vendors ship devices with that are also
// model names: they are taken as usernames.
var factoryLogins = map[string]bool{"cisco": true, "netscreen": true, "apc": true, "vyatta": true, "vyos": true, "cumulus": true, "ubnt": true}

var (
	// cryptHash is a crypt(3) string ($1$, $5$, $6$, $2b$, $y$, …) or
	// one of Cisco's ($8$, $9$, $14$) and Juniper's ($9$) encodings.
	cryptHash = regexp.MustCompile(`^\$[A-Za-z0-9-]{1,16}\$\S{4,}$`)
	// ldapHash is an LDAP {SCHEME}hash.
	ldapHash = regexp.MustCompile(`^\{[A-Za-z0-9-]{2,16}\}\S{8,}$`)
	// ciscoType7 is a Cisco type 7 password: two decimal digits (the
	// key offset), then hex pairs.
	ciscoType7 = regexp.MustCompile(`^[0-9]{2}(?:[0-9A-F]{2}){3,}$`)
	// longHex is a hex digest or key.
	longHex = regexp.MustCompile(`^[0-9A-Fa-f]{32,}$`)
)

// looksIP reports an IP address, with or without brackets or a prefix
// length.
func looksIP(v string) bool {
	v, _, _ = strings.Cut(v, "/")
	return net.ParseIP(strings.Trim(v, "[]")) != nil
}

// looksHash reports a password hash or an encoded password.
func looksHash(v string) bool {
	switch {
	case len(v) < 8:
		return false
	case v[0] == '$':
		return cryptHash.MatchString(v)
	case v[0] == '{':
		return ldapHash.MatchString(v)
	}
	return longHex.MatchString(v) || ciscoType7.MatchString(v) && strings.ContainsAny(v, "ABCDEF")
}

// shiftedUsername says what a username column's value looks like when it
// is not a username ("" when it may be one); res looks model names up.
func (res resolver) shiftedUsername(v string) string {
	switch {
	case v == "":
		return ""
	case looksIP(v):
		return LooksIP
	case looksHash(v):
		return LooksHash
	case strings.ContainsAny(v, secretChars), leetspeak(v):
		return LooksSecret
	}
	if _, ok := res.resolve(v); ok && !factoryLogins[strings.ToLower(v)] {
		return LooksPlatform
	}
	return ""
}

// shiftedGroup says what a group or model column's value looks like when
// it is not one ("" when it may be).
func shiftedGroup(v string) string {
	switch {
	case v == "":
		return ""
	case looksIP(v):
		return LooksIP
	case looksHash(v):
		return LooksHash
	}
	return ""
}

// leetspeak reports upper and lower case letters with digits between
// letters at least twice: "S3cr3tx", "T0p53cR3t", not "NetOps01" or
// "r2d2".
func leetspeak(v string) bool {
	var upper, lower bool
	runs := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		upper = upper || c >= 'A' && c <= 'Z'
		lower = lower || c >= 'a' && c <= 'z'
		if !isDigit(c) || i == 0 || !isLetter(v[i-1]) {
			continue
		}
		j := i
		for j < len(v) && isDigit(v[j]) {
			j++
		}
		if j < len(v) && isLetter(v[j]) {
			runs++
		}
	}
	return upper && lower && runs >= 2
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
