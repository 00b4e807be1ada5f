package ldapdir

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// session is one conversation with the directory: one connection, one
// deadline (the settings' timeout) for all of it.
type session struct {
	d      *Directory
	c      *ldap.Conn
	ctx    context.Context // carries the deadline
	cancel context.CancelFunc
	limit  time.Duration // from the start to the deadline
	stop   func() bool   // unregisters the close on cancellation
	tls    *tls.ConnectionState
}

// open dials the directory and secures the connection as the settings
// say. The conversation's deadline is set on the socket itself, so that
// no step (dial, TLS handshake, StartTLS, any request) waits past it,
// and cancelling ctx closes the socket at once.
func (d *Directory) open(ctx context.Context) (*session, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	deadline, _ := ctx.Deadline()
	s := &session{d: d, ctx: ctx, cancel: cancel, limit: deadline.Sub(start)}
	var dialer net.Dialer
	raw, err := dialer.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		err = s.fail(err, "cannot reach %s: %v", d.addr, err)
		cancel()
		return nil, err
	}
	_ = raw.SetDeadline(deadline)
	s.stop = context.AfterFunc(ctx, func() { _ = raw.Close() })
	var verifyErr error
	conn := raw
	if d.s.Security == SecurityLDAPS {
		tc := tls.Client(raw, d.tlsConfig(&verifyErr))
		if err := tc.HandshakeContext(ctx); err != nil {
			err = s.tlsFail(err, verifyErr)
			s.stop()
			_ = raw.Close()
			cancel()
			return nil, err
		}
		state := tc.ConnectionState()
		s.tls = &state
		conn = tc
	}
	s.c = ldap.NewConn(conn, s.tls != nil)
	s.c.Start()
	s.c.SetTimeout(d.timeout)
	if d.s.Security == SecurityStartTLS {
		// go-ldap closes the connection when the handshake fails; when
		// the server refuses the upgrade, close does. Either way nothing
		// more is said in the clear.
		if err := s.c.StartTLS(d.tlsConfig(&verifyErr)); err != nil {
			err = s.tlsFail(err, verifyErr)
			s.close()
			return nil, err
		}
		state, _ := s.c.TLSConnectionState()
		s.tls = &state
	}
	return s, nil
}

func (s *session) close() {
	if s.c != nil {
		_ = s.c.Close()
	}
	if s.stop != nil {
		s.stop()
	}
	s.cancel()
}

// tlsConfig is the connection's TLS: TLS 1.2 at least, the host of the
// URL as the certificate must name it, the pinned CA (else the system's).
//
// The certificate is verified in VerifyConnection, exactly as crypto/tls
// would (chain to the roots, host name, server use), rather than by
// crypto/tls itself, only to keep the failure as a value: go-ldap's
// StartTLS flattens the handshake error into text, and the
// administrator deserves to read "not signed by the configured CA"
// rather than a guess. verifyErr receives it.
func (d *Directory) tlsConfig(verifyErr *error) *tls.Config {
	return &tls.Config{
		ServerName: d.host,
		MinVersion: tls.VersionTLS12,
		// Verified below; never skipped.
		InsecureSkipVerify: true, //nolint:gosec // VerifyConnection verifies.
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				*verifyErr = errors.New("the directory presented no certificate")
				return *verifyErr
			}
			opts := x509.VerifyOptions{
				Roots:         d.roots, // nil: the system's
				DNSName:       d.host,
				Intermediates: x509.NewCertPool(),
				KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			}
			for _, c := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(c)
			}
			if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
				*verifyErr = err
				return err
			}
			return nil
		},
	}
}

// tlsFail explains a failed TLS handshake (at dial or StartTLS).
func (s *session) tlsFail(err, verifyErr error) error {
	if s.ended() != nil {
		return s.fail(err, "")
	}
	if verifyErr != nil {
		var unknown x509.UnknownAuthorityError
		var host x509.HostnameError
		var invalid x509.CertificateInvalidError
		switch {
		case errors.As(verifyErr, &unknown) && s.d.roots != nil:
			return unavailable(verifyErr, "the directory's certificate is not signed by the configured CA: %v", verifyErr)
		case errors.As(verifyErr, &unknown):
			return unavailable(verifyErr, "the directory's certificate is not signed by a CA this system trusts (paste the directory's CA certificate into the settings): %v", verifyErr)
		case errors.As(verifyErr, &host):
			return unavailable(verifyErr, "the directory's certificate is not valid for %s (the URL must name the server as its certificate does): %v", s.d.host, verifyErr)
		case errors.As(verifyErr, &invalid):
			return unavailable(verifyErr, "the directory's certificate is not valid: %v", verifyErr)
		}
		return unavailable(verifyErr, "the directory's certificate cannot be verified: %v", verifyErr)
	}
	var le *ldap.Error
	if s.d.s.Security == SecurityStartTLS && errors.As(err, &le) && le.ResultCode != ldap.ErrorNetwork {
		return unavailable(err, "the directory refused StartTLS (it may offer LDAPS only, or no TLS at all): %v", err)
	}
	return unavailable(err, "the TLS handshake with %s failed: %v", s.d.addr, err)
}

// fail turns an error of the conversation into an ErrUnavailable: a
// timeout or a cancellation says so; anything else is explained by
// format (or, when it is empty, as a broken connection).
func (s *session) fail(err error, format string, args ...any) error {
	switch ctxErr := s.ended(); {
	case errors.Is(ctxErr, context.DeadlineExceeded):
		return unavailable(ctxErr, "%s did not answer within %s", s.d.addr, s.limit.Round(time.Millisecond))
	case ctxErr != nil:
		return unavailable(ctxErr, "the request to %s was cancelled", s.d.addr)
	case format == "":
		return unavailable(err, "the connection to %s failed: %v", s.d.addr, err)
	}
	return unavailable(err, format, args...)
}

// ended is why the conversation may not go on: its deadline passed (on
// the clock, or as the context says) or it was cancelled; nil while it
// may. The socket's deadline may fail a read a hair before the
// context's timer fires: the clock decides.
func (s *session) ended() error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if !time.Now().Before(s.deadline()) {
		return context.DeadlineExceeded
	}
	return nil
}

// isNetwork is an error of the connection rather than an answer of the
// server.
func isNetwork(err error) bool {
	var le *ldap.Error
	return !errors.As(err, &le) || le.ResultCode == ldap.ErrorNetwork
}

// serviceBind binds as the service account (anonymously without a bind
// DN), before searching.
func (s *session) serviceBind() error {
	var err error
	if s.d.s.BindDN == "" {
		err = s.c.UnauthenticatedBind("")
	} else {
		err = s.c.Bind(s.d.s.BindDN, s.d.bindPassword)
	}
	switch {
	case err == nil:
		return nil
	case isNetwork(err):
		return s.fail(err, "")
	case ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) && s.d.s.BindDN != "":
		return unavailable(err, "the service account's bind was refused: check the bind DN and password (%v)", err)
	case s.d.s.BindDN == "":
		return unavailable(err, "the directory refused an anonymous bind: set a service account's bind DN and password (%v)", err)
	}
	return unavailable(err, "the service account's bind failed: %v", err)
}

// search runs req, bounded by the session's time left. A size limit
// reached is not an error here: the entries are returned with it.
func (s *session) search(req *ldap.SearchRequest, what string) (*ldap.SearchResult, error) {
	req.DerefAliases = ldap.NeverDerefAliases
	if left := time.Until(s.deadline()); left > 0 {
		req.TimeLimit = int(left/time.Second) + 1
	}
	res, err := s.c.Search(req)
	switch {
	case err == nil:
		return res, nil
	case ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded):
		return res, err
	case isNetwork(err):
		return nil, s.fail(err, "")
	case ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject):
		return nil, unavailable(err, "%s: the base DN %s does not exist on the directory, or the service account may not read it", what, req.BaseDN)
	}
	return nil, unavailable(err, "%s failed: %v", what, err)
}

func (s *session) deadline() time.Time {
	d, _ := s.ctx.Deadline()
	return d
}

// userAttrs are the attributes read from a user's entry. memberOf is
// operational on OpenLDAP: it comes only when named.
func (d *Directory) userAttrs() []string {
	return []string{d.s.UsernameAttr, "cn", "displayName", "mail", "memberOf"}
}

// findUser searches the one entry the user filter finds for username.
// The search asks for two entries at most: a second one is
// ErrAmbiguous, never a choice.
func (s *session) findUser(username string) (*ldap.Entry, error) {
	filter := userFilter(s.d.s.UserFilter, username)
	res, err := s.search(ldap.NewSearchRequest(s.d.s.BaseDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
		2, 0, false, filter, s.d.userAttrs(), nil), "searching for the user")
	if ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
		return nil, ErrAmbiguous
	}
	if err != nil {
		return nil, err
	}
	switch len(res.Entries) {
	case 0:
		return nil, ErrNoSuchUser
	case 1:
		return res.Entries[0], nil
	}
	return nil, ErrAmbiguous
}

// describe is the connect step of a Test report.
func (s *session) describe() string {
	if s.tls == nil {
		return fmt.Sprintf("connected to %s over plain LDAP: passwords cross the network readable", s.d.addr)
	}
	how := "LDAPS"
	if s.d.s.Security == SecurityStartTLS {
		how = "StartTLS"
	}
	ca := "a CA this system trusts"
	if s.d.roots != nil {
		ca = "the configured CA"
	}
	return fmt.Sprintf("connected to %s over %s (%s), certificate for %s signed by %s",
		s.d.addr, how, tls.VersionName(s.tls.Version), s.d.host, ca)
}
