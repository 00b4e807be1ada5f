package ldapdir

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"

	"backupd/db"
)

// Security modes (db.LDAPSettings.Security).
const (
	// SecurityLDAPS is TLS from the first byte (ldaps://, port 636).
	SecurityLDAPS = "ldaps"
	// SecurityStartTLS is plain LDAP (ldap://, port 389) upgraded to TLS
	// before anything else is said; a refused upgrade ends the
	// conversation, it never goes on in the clear.
	SecurityStartTLS = "starttls"
	// SecurityInsecure is plain LDAP: passwords cross the network
	// readable. An explicit choice, never a fallback.
	SecurityInsecure = "insecure"
)

// Group modes (db.LDAPSettings.GroupMode).
const (
	// GroupsMemberOf reads the user's memberOf attribute (Active
	// Directory, OpenLDAP with the memberof or dynlist overlay).
	GroupsMemberOf = "memberof"
	// GroupsSearch searches the groups whose GroupMemberAttr holds the
	// user's DN, then the groups holding those, up to maxDepth levels.
	GroupsSearch = "search"
	// GroupsADChain asks Active Directory for every group the user is in,
	// nested ones included, with its in-chain matching rule.
	GroupsADChain = "ad-chain"
)

// The username placeholder of UserFilter.
const usernamePlaceholder = "{username}"

// Bounds of the settings.
const (
	DefaultTimeout  = 10 * time.Second
	minTimeout      = time.Second
	maxTimeout      = 2 * time.Minute
	minSyncInterval = time.Minute
	maxSyncInterval = 24 * time.Hour
)

// Preset returns the schema settings of a kind of directory: the user
// filter, username attribute and group lookup. The server, base DN and
// bind are the administrator's. Names: "openldap", "ad" (users by
// sAMAccountName) and "ad-upn" (by userPrincipalName, alice@corp.example).
// The Active Directory filters leave disabled accounts out
// (userAccountControl bit 2), so that they are not found, at sign-in or
// sync.
func Preset(name string) (db.LDAPSettings, bool) {
	ad := func(attr string) db.LDAPSettings {
		return db.LDAPSettings{
			Preset:          name,
			UserFilter:      "(&(objectClass=user)(" + attr + "={username})(!(userAccountControl:1.2.840.113556.1.4.803:=2)))",
			UsernameAttr:    attr,
			GroupMode:       GroupsADChain,
			GroupFilter:     "(objectClass=group)",
			GroupMemberAttr: "member",
		}
	}
	switch name {
	case "openldap":
		return db.LDAPSettings{
			Preset:          name,
			UserFilter:      "(&(objectClass=inetOrgPerson)(uid={username}))",
			UsernameAttr:    "uid",
			GroupMode:       GroupsMemberOf,
			GroupFilter:     "(objectClass=groupOfNames)",
			GroupMemberAttr: "member",
		}, true
	case "ad":
		return ad("sAMAccountName"), true
	case "ad-upn":
		return ad("userPrincipalName"), true
	}
	return db.LDAPSettings{}, false
}

// FieldError is a problem with one setting. Field is the setting's JSON
// name (db.LDAPSettings), so that a form shows Message under its field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// FieldErrors are every problem Validate found, in the order of the
// form.
type FieldErrors []FieldError

func (fe FieldErrors) Error() string {
	parts := make([]string, len(fe))
	for i, e := range fe {
		parts[i] = e.Field + ": " + e.Message
	}
	return "invalid LDAP settings: " + strings.Join(parts, "; ")
}

// attrName is an attribute description's type: a name (RFC 4512
// keystring) or a numeric OID.
var attrName = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*|[0-9]+(\.[0-9]+)+)$`)

// Validate checks settings before they are saved or used and returns
// FieldErrors naming every problem, or nil. It does not reach the server
// (the Test button does).
func Validate(s db.LDAPSettings) error {
	var fe FieldErrors
	add := func(field, format string, args ...any) {
		fe = append(fe, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}

	scheme := ""
	if s.URL == "" {
		add("url", "the server's URL is required, such as ldaps://ldap.example.com")
	} else if _, _, _, err := parseURL(s.URL); err != nil {
		add("url", "%s", err)
	} else {
		scheme, _, _ = strings.Cut(s.URL, "://")
		scheme = strings.ToLower(scheme)
	}
	switch s.Security {
	case SecurityLDAPS:
		if scheme == "ldap" {
			add("security", "LDAPS needs an ldaps:// URL; for ldap:// choose StartTLS")
		}
	case SecurityStartTLS, SecurityInsecure:
		if scheme == "ldaps" {
			add("security", "an ldaps:// URL is already encrypted: choose LDAPS")
		}
	case "":
		add("security", "choose LDAPS, StartTLS or insecure (plain LDAP)")
	default:
		add("security", "%q is not a security mode: choose ldaps, starttls or insecure", s.Security)
	}
	if s.CACert != "" {
		if err := checkCA(s.CACert); err != nil {
			add("ca_cert", "%s", err)
		}
	}
	if s.BindDN != "" {
		if err := checkDN(s.BindDN); err != nil {
			add("bind_dn", "%s", err)
		}
	}
	if s.BaseDN == "" {
		add("base_dn", "the base DN where users are searched is required, such as dc=example,dc=com")
	} else if err := checkDN(s.BaseDN); err != nil {
		add("base_dn", "%s", err)
	}
	switch {
	case s.UserFilter == "":
		add("user_filter", "the user filter is required, such as (uid={username})")
	case !strings.Contains(s.UserFilter, usernamePlaceholder):
		add("user_filter", "the user filter must contain {username}, where the name typed goes")
	default:
		if _, err := ldap.CompileFilter(userFilter(s.UserFilter, "alice")); err != nil {
			add("user_filter", "the user filter is not a valid LDAP filter: %s", filterError(err))
		}
	}
	if s.UsernameAttr == "" {
		add("username_attr", "the username attribute is required, such as uid or sAMAccountName")
	} else if !attrName.MatchString(s.UsernameAttr) {
		add("username_attr", "%q is not an attribute name", s.UsernameAttr)
	}
	switch s.GroupMode {
	case GroupsMemberOf, GroupsSearch, GroupsADChain:
	case "":
		add("group_mode", "choose how groups are found: memberof, search or ad-chain")
	default:
		add("group_mode", "%q is not a group mode: choose memberof, search or ad-chain", s.GroupMode)
	}
	if s.GroupBaseDN != "" {
		if err := checkDN(s.GroupBaseDN); err != nil {
			add("group_base_dn", "%s", err)
		}
	}
	if s.GroupFilter != "" {
		if _, err := ldap.CompileFilter(s.GroupFilter); err != nil {
			add("group_filter", "the group filter is not a valid LDAP filter: %s", filterError(err))
		}
	}
	if s.GroupMemberAttr != "" && !attrName.MatchString(s.GroupMemberAttr) {
		add("group_member_attr", "%q is not an attribute name", s.GroupMemberAttr)
	}
	if d := time.Duration(s.Timeout); d != 0 && (d < minTimeout || d > maxTimeout) {
		add("timeout", "the timeout must be between %s and %s (0 for the default, %s)", minTimeout, maxTimeout, DefaultTimeout)
	}
	if d := time.Duration(s.SyncInterval); d != 0 && (d < minSyncInterval || d > maxSyncInterval) {
		add("sync_interval", "the sync interval must be between %s and %s (0 for the default)", minSyncInterval, maxSyncInterval)
	}
	if len(fe) == 0 {
		return nil
	}
	return fe
}

// parseURL reads an ldap:// or ldaps:// URL: a host and an optional
// port, nothing else (a base DN in the URL would be a second, silent
// setting).
func parseURL(raw string) (scheme, host, port string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", "", fmt.Errorf("not a URL: %w", err)
	}
	scheme = strings.ToLower(u.Scheme)
	switch scheme {
	case "ldap", "ldaps":
	default:
		return "", "", "", fmt.Errorf("the URL must start with ldaps:// or ldap://, not %q", u.Scheme+":")
	}
	host, port = u.Hostname(), u.Port()
	if host == "" {
		return "", "", "", fmt.Errorf("the URL names no host: ldaps://ldap.example.com")
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", "", "", fmt.Errorf("the URL takes a host and a port only (the base DN has its own setting)")
	}
	if port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return "", "", "", fmt.Errorf("the URL's port is empty")
		}
		port = "389"
		if scheme == "ldaps" {
			port = "636"
		}
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", "", "", fmt.Errorf("the port %q is not a number from 1 to 65535", port)
	}
	return scheme, host, port, nil
}

func checkDN(dn string) error {
	if _, err := ldap.ParseDN(dn); err != nil {
		return fmt.Errorf("%q is not a valid DN (%v); a DN looks like cn=backupd,ou=services,dc=example,dc=com", dn, err)
	}
	return nil
}

// checkCA requires PEM holding at least one certificate, and no other
// kind of block (a private key pasted by mistake is refused).
func checkCA(text string) error {
	rest := []byte(text)
	n := 0
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			return fmt.Errorf("the CA certificate field holds a %s block: paste certificates only (PEM, -----BEGIN CERTIFICATE-----)", b.Type)
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return fmt.Errorf("certificate %d cannot be read: %v", n+1, err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no certificate found: paste the CA's certificate in PEM form (-----BEGIN CERTIFICATE-----)")
	}
	return nil
}

// userFilter puts the escaped username into the filter: the name typed
// can only ever be a value, never filter syntax.
func userFilter(filter, username string) string {
	return strings.ReplaceAll(filter, usernamePlaceholder, ldap.EscapeFilter(username))
}

// filterError drops go-ldap's "LDAP Result Code 201 ..." prefix.
func filterError(err error) string {
	var le *ldap.Error
	if errors.As(err, &le) && le.Err != nil {
		return le.Err.Error()
	}
	return err.Error()
}
