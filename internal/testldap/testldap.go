// Package testldap runs a real OpenLDAP server (Debian's slapd) for one
// test: its own throwaway database, its own certificate authority, on
// free ports of 127.0.0.1, stopped when the test ends. Tests of the LDAP
// sign-in talk to it as they would to a company's directory, so that
// what they prove holds for the protocol as a server speaks it, not as a
// fake imagines it. Only tests import it.
//
// The directory (testdata/directory.ldif) holds, under BaseDN:
//
//	ou=people    alice, bob, carol, dave (inetOrgPerson, uid)
//	ou=groups    core-team: alice
//	             netops:    core-team (so alice, through nesting), dave
//	             viewers:   bob
//	             lab:       carol (a group no mapping uses)
//	ou=services  backupd-svc, the read-only service account
//
// Users read memberOf, nested groups included (slapd's dynlist overlay).
package testldap

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"backupd/db"
)

// The directory's names.
const (
	BaseDN    = "dc=example,dc=test"
	PeopleDN  = "ou=people," + BaseDN
	GroupsDN  = "ou=groups," + BaseDN
	AdminDN   = "cn=admin," + BaseDN
	ServiceDN = "cn=backupd-svc,ou=services," + BaseDN
)

// The passwords the directory starts with (testdata/directory.ldif).
const (
	AdminPassword   = "admin-Root-0"
	ServicePassword = "svc-Reader-9"
	AlicePassword   = "Wonderland-1"
	BobPassword     = "Builder-2"
	CarolPassword   = "Singer-3"
	DavePassword    = "Diver-4"
)

// SlapdPath is where Debian's slapd package puts the server; slapadd is
// beside it.
const SlapdPath = "/usr/sbin/slapd"

//go:embed testdata/directory.ldif
var directoryLDIF []byte

// UserDN is the DN of the user uid under ou=people.
func UserDN(uid string) string { return "uid=" + uid + "," + PeopleDN }

// GroupDN is the DN of the group cn under ou=groups.
func GroupDN(cn string) string { return "cn=" + cn + "," + GroupsDN }

// Server is a running slapd of one test's own.
type Server struct {
	// URL is plain LDAP ("ldap://127.0.0.1:P"), where StartTLS is
	// offered; LDAPSURL is LDAP over TLS from the first byte.
	URL      string
	LDAPSURL string
	// CA signed the server's certificate (ECDSA P-256, SAN IP
	// 127.0.0.1); CAPEM is its certificate, as a client pins it.
	CA    *CA
	CAPEM []byte

	BaseDN          string
	AdminDN         string // the rootdn: may do anything
	AdminPassword   string
	ServiceDN       string // reads everything but passwords
	ServicePassword string
}

// Start starts slapd for t with the directory above loaded, and stops it
// when t ends. Without slapd the test is skipped, except under CI=true,
// where it fails: .ci/run installs Debian's slapd and ldap-utils.
func Start(t testing.TB) *Server {
	t.Helper()
	slapadd := filepath.Join(filepath.Dir(SlapdPath), "slapadd")
	for _, bin := range []string{SlapdPath, slapadd} {
		if _, err := os.Stat(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true but %s is missing (%v): .ci/run must install Debian's slapd package", bin, err)
			}
			t.Skipf("an LDAP server of the test's own needs Debian's slapd (%s): %v", bin, err)
		}
	}
	dir := t.TempDir()
	ca := NewCA(t)
	certPEM, keyPEM := ca.Issue(t, "127.0.0.1")
	for name, data := range map[string][]byte{"ca.pem": ca.PEM, "cert.pem": certPEM, "key.pem": keyPEM, "data.ldif": directoryLDIF} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "slapd.conf")
	if err := os.WriteFile(conf, []byte(slapdConf(dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(slapadd, "-q", "-f", conf, "-l", filepath.Join(dir, "data.ldif")).CombinedOutput(); err != nil {
		t.Fatalf("slapadd: %v\n%s", err, out)
	}
	s := &Server{CA: ca, CAPEM: ca.PEM, BaseDN: BaseDN, AdminDN: AdminDN, AdminPassword: AdminPassword,
		ServiceDN: ServiceDN, ServicePassword: ServicePassword}
	// The free ports are found by listening and closing: another process
	// may take one in between. A server that could not bind is started
	// again on other ports, a bounded number of times.
	for attempt := 1; ; attempt++ {
		err := s.run(t, conf)
		if err == nil {
			return s
		}
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			t.Fatal(err)
		}
	}
}

var errPortTaken = errors.New("a port was taken")

// run starts slapd on two free ports and returns once it accepts
// connections.
func (s *Server) run(t testing.TB, conf string) error {
	t.Helper()
	ldapPort, ldapsPort := freePort(t), freePort(t)
	s.URL = "ldap://127.0.0.1:" + strconv.Itoa(ldapPort)
	s.LDAPSURL = "ldaps://127.0.0.1:" + strconv.Itoa(ldapsPort)
	// -d none: in the foreground, logging nothing but startup errors.
	cmd := exec.Command(SlapdPath, "-d", "none", "-f", conf, "-h", s.URL+"/ "+s.LDAPSURL+"/")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start slapd: %w", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	addr := strings.TrimPrefix(s.URL, "ldap://")
	for range 250 { // 5 s at most; slapd usually accepts within 20 ms
		select {
		case <-exited:
			if strings.Contains(stderr.String(), "Address already in use") {
				return fmt.Errorf("%w: %s", errPortTaken, stderr.String())
			}
			return fmt.Errorf("slapd exited at start (%v):\n%s", waitErr, stderr.String())
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			t.Cleanup(stop)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	return fmt.Errorf("slapd did not accept connections on %s within 5 s:\n%s", addr, stderr.String())
}

func slapdConf(dir string) string {
	var b strings.Builder
	for _, schema := range []string{"core", "cosine", "inetorgperson", "nis", "dyngroup"} {
		fmt.Fprintf(&b, "include /etc/ldap/schema/%s.schema\n", schema)
	}
	q := func(name string) string { return strconv.Quote(filepath.Join(dir, name)) }
	fmt.Fprintf(&b, `modulepath /usr/lib/ldap
moduleload back_mdb
moduleload dynlist
pidfile %s
argsfile %s
TLSCACertificateFile %s
TLSCertificateFile %s
TLSCertificateKeyFile %s

access to attrs=userPassword
	by self read
	by anonymous auth
	by * none
access to *
	by users read
	by * none

database mdb
suffix %q
rootdn %q
rootpw %q
directory %s
maxsize 10485760
index objectClass eq
index uid,member eq

# memberOf on users, nested groups included; (memberOf=group) matches
# nested members too.
overlay dynlist
dynlist-attrset groupOfURLs memberURL member+memberOf@groupOfNames*
`, q("slapd.pid"), q("slapd.args"), q("ca.pem"), q("cert.pem"), q("key.pem"),
		BaseDN, AdminDN, AdminPassword, q("db"))
	return b.String()
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Settings returns base (a preset's schema: filters, attributes, group
// mode) with this server filled in: LDAPS, its CA pinned, the service
// account binding, users under BaseDN, a 5 s timeout. The service
// password is ServicePassword (settings keep it sealed, elsewhere).
func (s *Server) Settings(base db.LDAPSettings) db.LDAPSettings {
	base.Enabled = true
	base.URL = s.LDAPSURL
	base.Security = "ldaps"
	base.CACert = string(s.CAPEM)
	base.BindDN = s.ServiceDN
	base.BaseDN = s.BaseDN
	base.Timeout = db.Duration(5 * time.Second)
	return base
}

// admin runs f on a connection bound as the rootdn.
func (s *Server) admin(t testing.TB, f func(*ldap.Conn) error) {
	t.Helper()
	c, err := ldap.DialURL(s.URL, ldap.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetTimeout(10 * time.Second)
	if err := c.Bind(s.AdminDN, s.AdminPassword); err != nil {
		t.Fatal(err)
	}
	if err := f(c); err != nil {
		t.Fatal(err)
	}
}

// AddMember adds memberDN (a user or a group) to the group groupDN.
func (s *Server) AddMember(t testing.TB, groupDN, memberDN string) {
	t.Helper()
	s.admin(t, func(c *ldap.Conn) error {
		m := ldap.NewModifyRequest(groupDN, nil)
		m.Add("member", []string{memberDN})
		return c.Modify(m)
	})
}

// RemoveMember removes memberDN from the group groupDN. A groupOfNames
// keeps at least one member: removing the last one fails the test.
func (s *Server) RemoveMember(t testing.TB, groupDN, memberDN string) {
	t.Helper()
	s.admin(t, func(c *ldap.Conn) error {
		m := ldap.NewModifyRequest(groupDN, nil)
		m.Delete("member", []string{memberDN})
		return c.Modify(m)
	})
}

// Delete deletes the entry dn (a leaf).
func (s *Server) Delete(t testing.TB, dn string) {
	t.Helper()
	s.admin(t, func(c *ldap.Conn) error { return c.Del(ldap.NewDelRequest(dn, nil)) })
}

// SetPassword sets the password of dn, as an administrator resetting it
// does (slapd stores it hashed).
func (s *Server) SetPassword(t testing.TB, dn, password string) {
	t.Helper()
	s.admin(t, func(c *ldap.Conn) error {
		_, err := c.PasswordModify(ldap.NewPasswordModifyRequest(dn, "", password))
		return err
	})
}

// Add adds an entry, for a test that needs one the directory lacks.
func (s *Server) Add(t testing.TB, dn string, attrs map[string][]string) {
	t.Helper()
	s.admin(t, func(c *ldap.Conn) error {
		a := ldap.NewAddRequest(dn, nil)
		for name, values := range attrs {
			a.Attribute(name, values)
		}
		return c.Add(a)
	})
}
