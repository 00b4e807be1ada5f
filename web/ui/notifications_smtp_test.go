package ui_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// smtpBox is an SMTP relay on 127.0.0.1 (go-smtp, no TLS, as a local
// relay) that wants AUTH PLAIN with one user and password and keeps the
// messages it accepts.
type smtpBox struct {
	user, password string
	port           int
	mu             sync.Mutex
	messages       []string
}

type smtpSession struct {
	box    *smtpBox
	authed bool
}

func (b *smtpBox) NewSession(*gosmtp.Conn) (gosmtp.Session, error) { return &smtpSession{box: b}, nil }

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.box.user || pass != s.box.password {
			return gosmtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}

func (s *smtpSession) Mail(string, *gosmtp.MailOptions) error {
	if !s.authed {
		return gosmtp.ErrAuthRequired
	}
	return nil
}

func (s *smtpSession) Rcpt(string, *gosmtp.RcptOptions) error { return nil }

func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.box.mu.Lock()
	s.box.messages = append(s.box.messages, string(b))
	s.box.mu.Unlock()
	return nil
}

func (s *smtpSession) Reset()        {}
func (s *smtpSession) Logout() error { return nil }

func startSMTPBox(t *testing.T, user, password string) *smtpBox {
	t.Helper()
	box := &smtpBox{user: user, password: password}
	s := gosmtp.NewServer(box)
	s.Domain = "localhost"
	s.AllowInsecureAuth = true
	s.ErrorLog = log.New(io.Discard, "", 0)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	box.port = l.Addr().(*net.TCPAddr).Port
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(l) }()
	t.Cleanup(func() { _ = s.Close(); <-done })
	return box
}

// Send test on an e-mail channel logs in with the stored (sealed)
// password and shows the server's reply; a refused login shows the
// server's refusal, never the password.
func TestNotificationEmailSendTest(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	const password = "relay-Pa55-w0rd"
	box := startSMTPBox(t, "backupd", password)
	b.get("/notifications/channels/new")
	p := b.post("/notifications/channels", url.Values{"name": {"mail"}, "type": {"email"}, "enabled": {"1"}, "language": {"zh"},
		"host": {"127.0.0.1"}, "port": {strconv.Itoa(box.port)}, "security": {"none"}, "username": {"backupd"},
		"smtp_password": {password}, "from": {"backupd@example.com"}, "to": {"noc@example.com"}})
	expect(t, "create e-mail channel", p, http.StatusSeeOther, "/notifications/channels/1?notice=channel_created")

	p = b.post("/notifications/channels/1/test", nil)
	expect(t, "send test", p, http.StatusOK, "")
	expectBody(t, "send test", p, `data-ok="1"`, "The test was delivered. Answer: 250")
	box.mu.Lock()
	got := append([]string(nil), box.messages...)
	box.mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], "backupd-test") || !strings.Contains(got[0], "To: <noc@example.com>") {
		t.Fatalf("the relay got %q", got)
	}

	// The relay changes its password: the test fails and says why.
	box.password = "another-password"
	p = b.post("/notifications/channels/1/test", nil)
	expectBody(t, "refused login", p, `data-ok="0"`, "The test was not delivered.", "535")
	if strings.Contains(p.body, password) {
		t.Errorf("the refused test shows the password")
	}
	if c, _ := e.store.GetNotificationChannel(context.Background(), 1); strings.Contains(string(c.Secret)+string(c.Config), password) {
		t.Errorf("the password is stored in clear")
	}
}
