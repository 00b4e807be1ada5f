package notify_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"backupd/app/notify"
)

// mailbox is an SMTP server on 127.0.0.1 (go-smtp) that keeps what it
// receives and who logged in how.
type mailbox struct {
	mu       sync.Mutex
	messages []delivered
	mechs    []string // AUTH mechanisms offered
	user     string
	password string
	port     int
}

type delivered struct {
	from, auth string
	to         []string
	data       []byte
	tls        bool
}

type mailSession struct {
	mb  *mailbox
	cur delivered
	tls bool
}

func (m *mailbox) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	_, isTLS := c.TLSConnectionState()
	return &mailSession{mb: m, tls: isTLS}, nil
}

func (s *mailSession) AuthMechanisms() []string { return s.mb.mechs }

func (s *mailSession) Auth(mech string) (sasl.Server, error) {
	check := func(user, pass string) error {
		if user != s.mb.user || pass != s.mb.password {
			return gosmtp.ErrAuthFailed
		}
		s.cur.auth = mech + ":" + user
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(_, user, pass string) error { return check(user, pass) }), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, gosmtp.ErrAuthUnknownMechanism
}

func (s *mailSession) Mail(from string, _ *gosmtp.MailOptions) error {
	if s.mb.user != "" && s.cur.auth == "" {
		return gosmtp.ErrAuthRequired
	}
	s.cur.from = from
	return nil
}

func (s *mailSession) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if strings.HasPrefix(to, "full@") {
		return &gosmtp.SMTPError{Code: 452, EnhancedCode: gosmtp.EnhancedCode{4, 2, 2}, Message: "Mailbox full"}
	}
	if strings.HasPrefix(to, "nobody@") {
		return &gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
	}
	s.cur.to = append(s.cur.to, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data, s.cur.tls = b, s.tls
	s.mb.mu.Lock()
	s.mb.messages = append(s.mb.messages, s.cur)
	s.mb.mu.Unlock()
	return nil
}

func (s *mailSession) Reset()        { s.cur = delivered{auth: s.cur.auth} }
func (s *mailSession) Logout() error { return nil }

// loginServer is the server side of AUTH LOGIN, which go-sasl lacks.
type loginServer struct {
	check func(user, pass string) error
	step  int
	user  string
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	l.step++
	switch l.step {
	case 1:
		return []byte("Username:"), false, nil
	case 2:
		l.user = string(resp)
		return []byte("Password:"), false, nil
	}
	return nil, true, l.check(l.user, string(resp))
}

func (m *mailbox) last(t *testing.T) delivered {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.messages) == 0 {
		t.Fatal("the mailbox got nothing")
	}
	return m.messages[len(m.messages)-1]
}

// startMailbox serves SMTP on 127.0.0.1 with the given security: "none"
// (AUTH allowed in clear, as for a local relay), "starttls" or "tls".
func startMailbox(t testing.TB, security string, cert tls.Certificate) *mailbox {
	t.Helper()
	mb := &mailbox{mechs: []string{sasl.Plain, sasl.Login}, user: "alerts", password: "smtp-Pa55!"}
	s := gosmtp.NewServer(mb)
	s.Domain = "localhost"
	s.MaxMessageBytes = 8 << 20
	s.ErrorLog = log.New(io.Discard, "", 0)
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mb.port = l.Addr().(*net.TCPAddr).Port
	switch security {
	case notify.SecurityNone:
		s.AllowInsecureAuth = true
	case notify.SecuritySTARTTLS:
		s.TLSConfig = tlsCfg
	case notify.SecurityTLS:
		l = tls.NewListener(l, tlsCfg)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(l) }()
	t.Cleanup(func() { _ = s.Close(); <-done })
	return mb
}

func emailChannel(mb *mailbox, security, lang string) notify.Channel {
	return notify.Channel{
		Type: notify.TypeEmail, Name: "NOC mail", Language: lang,
		Email: &notify.EmailConfig{
			Host: "127.0.0.1", Port: mb.port, Security: security, Username: mb.user,
			From: "backupd <backupd@example.net>", To: []string{"noc@example.net", "Ops Team <ops@example.net>"},
		},
		Secret: []byte(mb.password),
	}
}

// parsed is a received message taken apart as a mail reader would.
type parsed struct {
	header      mail.Header
	subject     string
	text, html  string
	contentType []string
}

func parseMessage(t *testing.T, raw []byte) parsed {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%v in:\n%s", err, raw)
	}
	var p parsed
	p.header = m.Header
	p.subject, err = new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q: %v", m.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(part) // quoted-printable decoded by the reader
		ct := part.Header.Get("Content-Type")
		p.contentType = append(p.contentType, ct)
		switch ct {
		case "text/plain; charset=utf-8":
			p.text = string(body)
		case "text/html; charset=utf-8":
			p.html = string(body)
		}
	}
	return p
}

func TestEmailOverEverySecurity(t *testing.T) {
	cert, pool := selfSigned(t)
	for _, sec := range []string{notify.SecurityNone, notify.SecuritySTARTTLS, notify.SecurityTLS} {
		for _, mech := range []string{sasl.Plain, sasl.Login} {
			t.Run(sec+"/"+mech, func(t *testing.T) {
				mb := startMailbox(t, sec, cert)
				mb.mechs = []string{mech}
				ch := emailChannel(mb, sec, "en")
				res := notify.Send(context.Background(), ch, []notify.Event{changedEvent(7, "core-1")}, notify.Options{DeliveryID: "42-3", RootCAs: pool})
				if !res.OK() || !strings.HasPrefix(res.Status, "250 ") {
					t.Fatalf("%+v", res)
				}
				got := mb.last(t)
				if got.auth != mech+":alerts" || got.from != "backupd@example.net" || strings.Join(got.to, ",") != "noc@example.net,ops@example.net" {
					t.Errorf("envelope %+v", got)
				}
				if got.tls != (sec != notify.SecurityNone) {
					t.Errorf("TLS %v over %s", got.tls, sec)
				}
				p := parseMessage(t, got.data)
				if p.subject != "backupd: core-1 (10.0.0.1): configuration changed" {
					t.Errorf("subject %q", p.subject)
				}
				if !strings.Contains(p.text, "+3 −1 lines") || !strings.Contains(p.html, "<strong>core-1 (10.0.0.1)</strong>") {
					t.Errorf("parts:\n%s\n%s", p.text, p.html)
				}
			})
		}
	}
}

func TestEmailChineseDigest(t *testing.T) {
	cert, pool := selfSigned(t)
	mb := startMailbox(t, notify.SecuritySTARTTLS, cert)
	ch := emailChannel(mb, notify.SecuritySTARTTLS, "zh")
	ev := changedEvent(7, "核心交换机-1")
	ev.Diff = notify.NewDiff(iosOld, iosNew, mustIOSFilter(t), 0)
	events := []notify.Event{ev, failedEvent(8, "edge-2")}
	res := notify.Send(context.Background(), ch, events, notify.Options{DeliveryID: "77-1", RootCAs: pool})
	if !res.OK() {
		t.Fatalf("%+v", res)
	}
	raw := mb.last(t).data
	p := parseMessage(t, raw)
	if p.subject != "backupd：2 台设备，2 个事件" {
		t.Errorf("subject %q", p.subject)
	}
	if s := p.header.Get("Subject"); !strings.HasPrefix(s, "=?utf-8?b?") {
		t.Errorf("Subject not RFC 2047 encoded: %q", s)
	}
	if len(p.contentType) != 2 || p.contentType[0] != "text/plain; charset=utf-8" || p.contentType[1] != "text/html; charset=utf-8" {
		t.Errorf("parts %v", p.contentType)
	}
	for _, want := range []string{"核心交换机-1 (10.0.0.1): 配置已变更", "edge-2 (10.0.0.2): 备份失败", "阶段 login：authentication refused", "连续失败 3 次",
		"分组: Sites / Berlin", "触发方式: 计划任务", "~ -! Last configuration change at 11:54:34", "  + description uplink to core-2", "标有 ~ 的行是噪声",
		"在 backupd 中查看: https://backupd.example.net/devices/7/diff?from=b1&to=b2"} {
		if !strings.Contains(p.text, want) {
			t.Errorf("text part lacks %q:\n%s", want, p.text)
		}
	}
	for _, want := range []string{`<html`, `<strong>核心交换机-1 (10.0.0.1)</strong>`, `<span class="del noise" style="color:#999">-! Last configuration change`,
		`<span class="add" style="color:#116611">&#43; description uplink to core-2</span>`, `<span> version 15.2</span>`, `href="https://backupd.example.net/devices/7/diff?from=b1&amp;to=b2"`, "灰色的行是噪声"} {
		if !strings.Contains(p.html, want) {
			t.Errorf("HTML part lacks %q:\n%s", want, p.html)
		}
	}
	// Failures first, in both parts.
	if strings.Index(p.text, "edge-2") > strings.Index(p.text, "核心交换机") {
		t.Error("the failure is not listed first")
	}
	if d, err := p.header.Date(); err != nil || d.IsZero() {
		t.Errorf("Date %q: %v", p.header.Get("Date"), err)
	}
	if id := p.header.Get("Message-ID"); id != "<backupd.77-1@example.net>" {
		t.Errorf("Message-ID %q", id)
	}
	for _, h := range []string{"MIME-Version", "Auto-Submitted", "From", "To"} {
		if p.header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	for i, l := range strings.Split(string(raw), "\r\n") {
		if len(l) > 998 {
			t.Errorf("line %d is %d bytes long", i, len(l))
		}
	}
}

func mustIOSFilter(t *testing.T) *backupFilter {
	t.Helper()
	f, err := newIOSFilter()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A device name or reason with line breaks cannot add a header, and
// markup in it is shown, not run.
func TestEmailHeaderInjection(t *testing.T) {
	cert, _ := selfSigned(t)
	mb := startMailbox(t, notify.SecurityNone, cert)
	ch := emailChannel(mb, notify.SecurityNone, "en")
	ev := changedEvent(7, "sw1\r\nBcc: victim@example.org\r\n\r\n<script>alert(1)</script>")
	ev.Device.Host = "10.0.0.1\nX-Evil: 1"
	ev.Kind = "config.changed\r\nX-Kind: 1"
	res := notify.Send(context.Background(), ch, []notify.Event{ev}, notify.Options{DeliveryID: "1\r\nX-Id: 2"})
	if !res.OK() {
		t.Fatalf("%+v", res)
	}
	got := mb.last(t)
	if len(got.to) != 2 {
		t.Errorf("recipients %v", got.to)
	}
	p := parseMessage(t, got.data)
	for _, h := range []string{"Bcc", "X-Evil", "X-Kind", "X-Id"} {
		if v := p.header.Get(h); v != "" {
			t.Errorf("injected header %s: %q", h, v)
		}
	}
	if !strings.Contains(p.subject, "sw1 Bcc: victim@example.org <script>") {
		t.Errorf("subject %q", p.subject)
	}
	if strings.Contains(p.html, "<script>") || !strings.Contains(p.html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("HTML not escaped:\n%s", p.html)
	}
	// Addresses with line breaks never reach the server.
	ch.Email.To = []string{"noc@example.net\r\nRCPT TO:<victim@example.org>"}
	if res := notify.Send(context.Background(), ch, []notify.Event{ev}, notify.Options{}); res.OK() || !res.Permanent {
		t.Errorf("address with a line break: %+v", res)
	}
}

func TestEmailFailures(t *testing.T) {
	cert, pool := selfSigned(t)
	ev := []notify.Event{changedEvent(7, "core-1")}
	opts := notify.Options{RootCAs: pool}

	starttls := startMailbox(t, notify.SecuritySTARTTLS, cert)
	// Wrong password: refused, permanent, and the password is nowhere.
	ch := emailChannel(starttls, notify.SecuritySTARTTLS, "en")
	ch.Secret = []byte("wrong-Pa55")
	res := notify.Send(context.Background(), ch, ev, opts)
	if res.OK() || !res.Permanent || !strings.HasPrefix(res.Status, "535 5.7.8 ") || strings.Contains(res.Err.Error(), "wrong-Pa55") {
		t.Errorf("wrong password: %+v", res)
	}
	// Self-signed certificate, not trusted: refused, worth retrying.
	ch = emailChannel(starttls, notify.SecuritySTARTTLS, "en")
	if res := notify.Send(context.Background(), ch, ev, notify.Options{}); res.OK() || res.Permanent || !strings.Contains(res.Err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %+v", res)
	}
	ch.Email.SkipVerify = true
	if res := notify.Send(context.Background(), ch, ev, notify.Options{}); !res.OK() {
		t.Errorf("skip_verify: %+v", res)
	}
	// A recipient refused for now (4xx) or for good (5xx).
	ch = emailChannel(starttls, notify.SecuritySTARTTLS, "en")
	ch.Email.To = []string{"full@example.net"}
	if res := notify.Send(context.Background(), ch, ev, opts); res.OK() || res.Permanent || res.Status != "452 4.2.2 Mailbox full" {
		t.Errorf("mailbox full: %+v", res)
	}
	ch.Email.To = []string{"nobody@example.net"}
	if res := notify.Send(context.Background(), ch, ev, opts); res.OK() || !res.Permanent || res.Status != "550 5.1.1 No such user" {
		t.Errorf("no such user: %+v", res)
	}

	// STARTTLS asked of a server that has none: permanent, not silently plain.
	plain := startMailbox(t, notify.SecurityNone, cert)
	ch = emailChannel(plain, notify.SecuritySTARTTLS, "en")
	if res := notify.Send(context.Background(), ch, ev, opts); res.OK() || !res.Permanent || !strings.Contains(res.Err.Error(), "does not offer STARTTLS") {
		t.Errorf("no STARTTLS: %+v", res)
	}
	if len(plain.messages) != 0 {
		t.Error("a message went out in clear")
	}
	// A login in clear to a relay that is not on localhost is refused
	// before any connection.
	ch = emailChannel(plain, notify.SecurityNone, "en")
	ch.Email.Host = "192.0.2.1"
	if res := notify.Send(context.Background(), ch, ev, opts); res.OK() || !res.Permanent || !strings.Contains(res.Err.Error(), "in clear") {
		t.Errorf("login in clear: %+v", res)
	}
	// Nobody listening.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ch = emailChannel(plain, notify.SecurityNone, "en")
	ch.Email.Port = port
	if res := notify.Send(context.Background(), ch, ev, opts); res.OK() || res.Permanent || !strings.Contains(res.Err.Error(), "127.0.0.1:"+strconv.Itoa(port)) {
		t.Errorf("connection refused: %+v", res)
	}
}

func TestEmailValidate(t *testing.T) {
	good := notify.EmailConfig{Host: "smtp.example.net", From: "a@example.net", To: []string{"b@example.net"}}
	if err := good.Validate(false); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*notify.EmailConfig) (pw bool){
		"no host":      func(c *notify.EmailConfig) bool { c.Host = ""; return false },
		"bad security": func(c *notify.EmailConfig) bool { c.Security = "ssl3"; return false },
		"bad from":     func(c *notify.EmailConfig) bool { c.From = "not an address"; return false },
		"no to":        func(c *notify.EmailConfig) bool { c.To = nil; return false },
		"user, no pw":  func(c *notify.EmailConfig) bool { c.Username = "u"; return false },
		"pw, no user":  func(c *notify.EmailConfig) bool { return true },
		"clear login":  func(c *notify.EmailConfig) bool { c.Username, c.Security = "u", "none"; return true },
		"bad port":     func(c *notify.EmailConfig) bool { c.Port = 70000; return false },
	} {
		c := good
		if err := c.Validate(mut(&c)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A server that accepts the connection and then says nothing costs the
// timeout, not a worker forever.
func TestEmailSilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	defer func() {
		l.Close()
		close(held)
		for c := range held {
			c.Close()
		}
	}()
	ch := notify.Channel{Type: notify.TypeEmail, Name: "mute", Email: &notify.EmailConfig{
		Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port, Security: notify.SecurityNone,
		From: "a@example.net", To: []string{"b@example.net"},
	}}
	res := notify.Send(context.Background(), ch, []notify.Event{changedEvent(1, "a")}, notify.Options{Timeout: 300 * time.Millisecond})
	if res.OK() || res.Permanent || !strings.Contains(res.Err.Error(), "greeting") {
		t.Errorf("silent server: %+v", res)
	}
}
