// Package ldapdir signs people in against an LDAP directory or Active
// Directory, and reads who they are and which groups they are in, for
// the identity package to map to roles. The protocol is go-ldap's; this
// package decides how it is spoken: always over a verified TLS
// connection unless the administrator chose plain LDAP, with a service
// account that searches and the person's own bind that proves the
// password, one connection per call, every call bounded in time.
package ldapdir

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-ldap/ldap/v3"

	"backupd/db"
)

var (
	// ErrInvalidCredentials is a sign-in refused: a wrong password, an
	// unknown user or a filter finding more than one entry all return
	// this same error, so that a sign-in form tells nobody which names
	// exist.
	ErrInvalidCredentials = errors.New("invalid username or password")
	// ErrNoSuchUser is Lookup finding no entry: the directory no longer
	// vouches for the user (deleted, disabled, moved out of the base DN).
	ErrNoSuchUser = errors.New("the user is not in the directory")
	// ErrAmbiguous is Lookup finding more than one entry for a name: the
	// user filter is too wide.
	ErrAmbiguous = errors.New("the user filter finds more than one entry")
	// ErrUnavailable is the directory that could not be asked: it is
	// unreachable, its certificate is refused, the service account's
	// bind is refused, it did not answer in time. The error wrapping it
	// says which, in words meant for the administrator.
	ErrUnavailable = errors.New("the directory is unavailable")
)

// Bounds of a username, checked before any network traffic.
const maxUsernameLen = 128

// Group is a group the user is in.
type Group struct {
	DN string `json:"dn"`
	// Name is the value of the DN's first RDN (usually its cn).
	Name string `json:"name"`
}

// Entry is a user as the directory describes it.
type Entry struct {
	DN string `json:"dn"`
	// Username is the value of the username attribute as the directory
	// stores it (its case), which may differ from what was typed.
	Username    string  `json:"username"`
	DisplayName string  `json:"display_name,omitempty"`
	Email       string  `json:"email,omitempty"`
	Groups      []Group `json:"groups"`
}

// GroupKeys are every group's DN and name, the strings a mapping may
// name a group by (identity.Resolve compares them case-insensitively).
func (e Entry) GroupKeys() []string {
	keys := make([]string, 0, 2*len(e.Groups))
	for _, g := range e.Groups {
		keys = append(keys, g.DN)
		if g.Name != "" {
			keys = append(keys, g.Name)
		}
	}
	return keys
}

// Directory is a configured LDAP directory. It keeps no connection: each
// call dials, speaks and closes, so that it is safe for concurrent use
// and a directory restarting between calls costs nothing.
type Directory struct {
	s            db.LDAPSettings
	bindPassword string
	scheme       string // ldap or ldaps
	host         string // as the certificate must name it
	addr         string // host:port
	roots        *x509.CertPool
	timeout      time.Duration
	groupBaseDN  string
}

// New checks s (Validate) and prepares a Directory. bindPassword is the
// service account's, unsealed; it is required when s.BindDN is set (an
// empty password would make the bind anonymous) and ignored otherwise.
func New(s db.LDAPSettings, bindPassword string) (*Directory, error) {
	if err := Validate(s); err != nil {
		return nil, err
	}
	if s.BindDN != "" && bindPassword == "" {
		return nil, FieldErrors{{Field: "bind_password", Message: "the service account needs its password: without one the bind would be anonymous"}}
	}
	scheme, host, port, _ := parseURL(s.URL)
	d := &Directory{
		s:            s,
		bindPassword: bindPassword,
		scheme:       scheme,
		host:         host,
		addr:         net.JoinHostPort(host, port),
		timeout:      time.Duration(s.Timeout),
		groupBaseDN:  s.GroupBaseDN,
	}
	if s.BindDN == "" {
		d.bindPassword = ""
	}
	if d.timeout == 0 {
		d.timeout = DefaultTimeout
	}
	if d.groupBaseDN == "" {
		d.groupBaseDN = s.BaseDN
	}
	if s.CACert != "" {
		d.roots = x509.NewCertPool()
		if !d.roots.AppendCertsFromPEM([]byte(s.CACert)) {
			return nil, FieldErrors{{Field: "ca_cert", Message: "no certificate found"}}
		}
	}
	return d, nil
}

// Authenticate checks username and password against the directory and
// returns the user's entry and groups. A wrong password, an unknown
// user and an ambiguous name are all ErrInvalidCredentials; anything
// that kept the directory from answering is ErrUnavailable.
func (d *Directory) Authenticate(ctx context.Context, username, password string) (Entry, error) {
	if checkUsername(username) != nil {
		return Entry{}, ErrInvalidCredentials
	}
	// An empty password makes a simple bind "unauthenticated", which many
	// servers accept as a success: it must never reach the wire.
	if password == "" {
		return Entry{}, ErrInvalidCredentials
	}
	s, err := d.open(ctx)
	if err != nil {
		return Entry{}, err
	}
	defer s.close()
	if err := s.serviceBind(); err != nil {
		return Entry{}, err
	}
	le, err := s.findUser(username)
	if errors.Is(err, ErrNoSuchUser) || errors.Is(err, ErrAmbiguous) {
		return Entry{}, ErrInvalidCredentials
	}
	if err != nil {
		return Entry{}, err
	}
	if le.DN == "" {
		return Entry{}, ErrInvalidCredentials
	}
	if err := s.c.Bind(le.DN, password); err != nil {
		switch {
		case ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials):
			return Entry{}, ErrInvalidCredentials
		case isNetwork(err):
			return Entry{}, s.fail(err, "")
		}
		// Refused for another reason (a locked account, a password
		// policy): still no sign-in, with the server's words for the log.
		return Entry{}, fmt.Errorf("%w: the directory refused the bind: %v", ErrInvalidCredentials, err)
	}
	e, err := d.entry(le, username)
	if err != nil {
		return Entry{}, err
	}
	// The user may not read groups; the service account does. memberOf
	// was read by it already.
	if d.s.GroupMode != GroupsMemberOf {
		if err := s.serviceBind(); err != nil {
			return Entry{}, err
		}
	}
	if e.Groups, err = s.groups(le); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// Lookup reads a user and its groups as the service account, without a
// password: the periodic sync asks whether the directory still vouches
// for a user, and for which groups. A user not found is ErrNoSuchUser,
// a name the filter finds twice ErrAmbiguous, a directory that could
// not be asked (or whose base DN the service account cannot see)
// ErrUnavailable: only the first says the user is gone.
func (d *Directory) Lookup(ctx context.Context, username string) (Entry, error) {
	if checkUsername(username) != nil {
		return Entry{}, ErrNoSuchUser
	}
	s, err := d.open(ctx)
	if err != nil {
		return Entry{}, err
	}
	defer s.close()
	if err := s.serviceBind(); err != nil {
		return Entry{}, err
	}
	le, err := s.findUser(username)
	if err != nil {
		return Entry{}, err
	}
	e, err := d.entry(le, username)
	if err != nil {
		return Entry{}, err
	}
	if e.Groups, err = s.groups(le); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// checkUsername refuses, before any traffic, names no directory holds
// and that would only exercise the filter: empty, overlong, not UTF-8,
// or with control characters.
func checkUsername(u string) error {
	switch {
	case u == "":
		return errors.New("the username is empty")
	case len(u) > maxUsernameLen:
		return fmt.Errorf("the username is longer than %d bytes", maxUsernameLen)
	case !utf8.ValidString(u):
		return errors.New("the username is not valid UTF-8")
	case strings.ContainsFunc(u, unicode.IsControl):
		return errors.New("the username contains control characters")
	}
	return nil
}

// entry is the Entry of a search result (groups apart).
func (d *Directory) entry(le *ldap.Entry, typed string) (Entry, error) {
	e := Entry{
		DN:          le.DN,
		DisplayName: le.GetEqualFoldAttributeValue("displayName"),
		Email:       le.GetEqualFoldAttributeValue("mail"),
	}
	if e.DisplayName == "" {
		e.DisplayName = le.GetEqualFoldAttributeValue("cn")
	}
	// An entry may hold several values (uid: alice, uid: a.liddell):
	// the one typed, else the first.
	for _, v := range le.GetEqualFoldAttributeValues(d.s.UsernameAttr) {
		if strings.EqualFold(v, typed) {
			e.Username = v
			break
		}
		if e.Username == "" {
			e.Username = v
		}
	}
	if e.Username == "" {
		return Entry{}, unavailable(nil, "the entry %s has no %s attribute, or the service account may not read it: check the username attribute", le.DN, d.s.UsernameAttr)
	}
	return e, nil
}

// unavailableError is an ErrUnavailable with the administrator's
// explanation; cause is kept for errors.Is and As.
type unavailableError struct {
	msg   string
	cause error
}

func (e *unavailableError) Error() string        { return e.msg }
func (e *unavailableError) Unwrap() error        { return e.cause }
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

func unavailable(cause error, format string, args ...any) error {
	return &unavailableError{msg: fmt.Sprintf(format, args...), cause: cause}
}
