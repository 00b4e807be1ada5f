package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"
)

// E-mail transport security.
const (
	SecuritySTARTTLS = "starttls" // plain connection upgraded with STARTTLS (port 587); the default
	SecurityTLS      = "tls"      // TLS from the first byte (port 465)
	SecurityNone     = "none"     // no TLS: only sensible to a relay on localhost
)

// EmailConfig is an e-mail channel's non-secret settings; its secret is
// the SMTP password.
type EmailConfig struct {
	Host     string   `json:"host"`
	Port     int      `json:"port,omitempty"`     // 0: 587, 465 or 25 by Security
	Security string   `json:"security,omitempty"` // starttls (default) | tls | none
	Username string   `json:"username,omitempty"` // AUTH PLAIN or LOGIN when set
	From     string   `json:"from"`
	To       []string `json:"to"`
	// SkipVerify accepts any certificate of the server.
	SkipVerify bool `json:"skip_verify,omitempty"`
	// Helo is the name sent in EHLO; "": this machine's host name.
	Helo string `json:"helo,omitempty"`
}

// Bounds of an e-mail.
const (
	maxRecipients      = 50
	maxEmailEvents     = 5000 // events listed in one message; the rest counted
	maxEmailDiffLines  = 2000 // diff lines in one message, all events together
	maxSubjectRunes    = 150
	maxSMTPReplyQuoted = 200
)

func (c EmailConfig) security() string {
	if c.Security == "" {
		return SecuritySTARTTLS
	}
	return c.Security
}

func (c EmailConfig) port() int {
	if c.Port != 0 {
		return c.Port
	}
	switch c.security() {
	case SecurityTLS:
		return 465
	case SecurityNone:
		return 25
	}
	return 587
}

// Validate checks the settings; hasPassword says whether the channel has
// a secret.
func (c EmailConfig) Validate(hasPassword bool) error {
	if c.Host == "" || strings.ContainsAny(c.Host, " \t\r\n/") {
		return errors.New("host: a host name or address is required")
	}
	if c.Port < 0 || c.Port > 65535 {
		return errors.New("port: must be between 1 and 65535")
	}
	switch c.security() {
	case SecuritySTARTTLS, SecurityTLS, SecurityNone:
	default:
		return fmt.Errorf("security %q: use starttls, tls or none", c.Security)
	}
	if strings.ContainsAny(c.Username, "\r\n\x00") {
		return errors.New("username: holds a line break")
	}
	if c.Username != "" && !hasPassword {
		return errors.New("username set without a password")
	}
	if c.Username == "" && hasPassword {
		return errors.New("password set without a username")
	}
	if c.Username != "" && c.security() == SecurityNone && !isLocalhost(c.Host) {
		return errors.New("security none with a login: the password would cross the network in clear; use starttls or tls")
	}
	if _, err := parseAddress(c.From); err != nil {
		return fmt.Errorf("from: %w", err)
	}
	if len(c.To) == 0 || len(c.To) > maxRecipients {
		return fmt.Errorf("to: between 1 and %d addresses", maxRecipients)
	}
	for _, a := range c.To {
		if _, err := parseAddress(a); err != nil {
			return fmt.Errorf("to: %w", err)
		}
	}
	if strings.ContainsAny(c.Helo, " \t\r\n") {
		return errors.New("helo: a host name without spaces")
	}
	return nil
}

func parseAddress(s string) (*mail.Address, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, errors.New("an address holds a line break")
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not an e-mail address", oneLine(s, 80))
	}
	return a, nil
}

func isLocalhost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// smtpError is a failure of the conversation, with the server's reply
// when there was one.
type smtpError struct {
	step      string
	code      int
	reply     string // the server's reply, on one line and short
	permanent bool
	err       error
}

func (e *smtpError) Error() string { return "SMTP " + e.step + ": " + e.err.Error() }
func (e *smtpError) Unwrap() error { return e.err }

func sendEmail(ctx context.Context, ch Channel, events []Event, opts Options) Result {
	cfg := *ch.Email
	msg, err := EmailMessage(ch, events, opts)
	if err != nil {
		return Result{Permanent: true, Err: err}
	}
	status, err := deliverSMTP(ctx, cfg, string(ch.Secret), msg, opts)
	res := Result{Status: status}
	if err != nil {
		var se *smtpError
		if errors.As(err, &se) {
			res.Permanent = se.permanent
			if res.Status == "" {
				res.Status = se.reply
			}
		}
		res.Err = scrub(err, string(ch.Secret))
	}
	return res
}

// deliverSMTP holds one SMTP conversation and returns the server's reply
// to the message ("250 2.0.0 OK …").
func deliverSMTP(ctx context.Context, cfg EmailConfig, password string, msg []byte, opts Options) (string, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultSMTPTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.port()))
	tlsConfig := &tls.Config{ServerName: cfg.Host, RootCAs: opts.RootCAs, InsecureSkipVerify: cfg.SkipVerify, MinVersion: tls.VersionTLS12} //nolint:gosec // the channel's own choice, off by default

	var conn net.Conn
	var err error
	dialer := opts.Outbound.Dialer(timeout)
	if cfg.security() == SecurityTLS {
		conn, err = (&tls.Dialer{NetDialer: dialer, Config: tlsConfig}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = dialer.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return "", &smtpError{step: "connect to " + addr, permanent: refused(err), err: err}
	}
	defer conn.Close()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	c, err := smtp.NewClient(conn, cfg.Host)
	if err != nil {
		return "", replyError("greeting", err)
	}
	defer c.Close()
	helo := cfg.Helo
	if helo == "" {
		helo = localName()
	}
	if err := c.Hello(helo); err != nil {
		return "", replyError("EHLO", err)
	}
	if cfg.security() == SecuritySTARTTLS {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return "", &smtpError{step: "STARTTLS", permanent: true, err: errors.New("the server does not offer STARTTLS; use security tls, or none for a relay on localhost")}
		}
		if err := c.StartTLS(tlsConfig); err != nil {
			return "", replyError("STARTTLS", err)
		}
	}
	if cfg.Username != "" {
		ok, mechs := c.Extension("AUTH")
		if !ok {
			return "", &smtpError{step: "AUTH", permanent: true, err: errors.New("the server offers no login (AUTH); remove the username, or use starttls/tls")}
		}
		var a smtp.Auth
		switch {
		case hasWord(mechs, "PLAIN"):
			a = smtp.PlainAuth("", cfg.Username, password, cfg.Host)
		case hasWord(mechs, "LOGIN"):
			a = &loginAuth{username: cfg.Username, password: password, host: cfg.Host}
		default:
			return "", &smtpError{step: "AUTH", permanent: true, err: fmt.Errorf("the server offers neither PLAIN nor LOGIN (only %s)", oneLine(mechs, 80))}
		}
		if err := c.Auth(a); err != nil {
			se := replyError("AUTH", err)
			var ne net.Error
			if se.code == 0 && !errors.As(err, &ne) && !errors.Is(err, io.EOF) {
				se.permanent = true // refused on our side: no TLS
			}
			return "", se
		}
	}
	from, _ := parseAddress(cfg.From)
	if err := c.Mail(from.Address); err != nil {
		return "", replyError("MAIL FROM", err)
	}
	for _, to := range cfg.To {
		a, _ := parseAddress(to)
		if err := c.Rcpt(a.Address); err != nil {
			return "", replyError("RCPT TO", err)
		}
	}
	status, err := data(c.Text, msg)
	if err != nil {
		return status, err
	}
	_ = c.Quit()
	return status, nil
}

// data sends the message and returns the server's reply to it, which
// net/smtp's own Data does not give.
func data(t *textproto.Conn, msg []byte) (string, error) {
	id, err := t.Cmd("DATA")
	if err != nil {
		return "", &smtpError{step: "DATA", err: err}
	}
	t.StartResponse(id)
	_, _, err = t.ReadResponse(354)
	t.EndResponse(id)
	if err != nil {
		return "", replyError("DATA", err)
	}
	w := t.DotWriter()
	if _, err := w.Write(msg); err != nil {
		return "", &smtpError{step: "DATA", err: err}
	}
	if err := w.Close(); err != nil {
		return "", &smtpError{step: "DATA", err: err}
	}
	code, text, err := t.ReadResponse(250)
	status := oneLine(strconv.Itoa(code)+" "+text, maxSMTPReplyQuoted)
	if err != nil {
		return status, replyError("message", err)
	}
	return status, nil
}

// replyError classifies a failed step: a 5xx reply is permanent, a 4xx
// reply or a broken connection worth retrying.
func replyError(step string, err error) *smtpError {
	se := &smtpError{step: step, err: err}
	var te *textproto.Error
	if errors.As(err, &te) {
		se.code = te.Code
		se.permanent = te.Code >= 500
		se.reply = oneLine(strconv.Itoa(te.Code)+" "+te.Msg, maxSMTPReplyQuoted)
		se.err = errors.New("server replied " + se.reply)
	}
	return se
}

// scrub removes a secret from an error's text, should any reply or
// library ever echo it.
func scrub(err error, secret string) error {
	if err == nil || len(secret) < 4 || !strings.Contains(err.Error(), secret) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), secret, "***"))
}

func hasWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, w) {
			return true
		}
	}
	return false
}

func localName() string {
	h, err := os.Hostname()
	if err != nil || h == "" || strings.ContainsAny(h, " \t\r\n") {
		return "localhost"
	}
	return h
}

// loginAuth is AUTH LOGIN (username and password each base64 in answer
// to the server's prompt), which some relays offer instead of PLAIN. Like
// net/smtp's PlainAuth it refuses to send the password without TLS
// except to localhost.
type loginAuth struct {
	username, password, host string
	step                     int
}

func (a *loginAuth) Start(server *smtp.ServerInfo) (string, []byte, error) {
	if !server.TLS && !isLocalhost(server.Name) {
		return "", nil, errors.New("unencrypted connection: the password is only sent over TLS")
	}
	if server.Name != a.host {
		return "", nil, errors.New("wrong host name")
	}
	a.step = 0
	return "LOGIN", nil, nil
}

func (a *loginAuth) Next(_ []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	a.step++
	switch a.step {
	case 1:
		return []byte(a.username), nil
	case 2:
		return []byte(a.password), nil
	}
	return nil, errors.New("unexpected server challenge")
}

// EmailMessage renders the whole message (headers, text and HTML parts)
// with CRLF line ends, ready for DATA.
func EmailMessage(ch Channel, events []Event, opts Options) ([]byte, error) {
	lang := pickLanguage(ch.Language)
	cfg := ch.Email
	from, err := parseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("from: %w", err)
	}
	var to []string
	for _, a := range cfg.To {
		p, err := parseAddress(a)
		if err != nil {
			return nil, fmt.Errorf("to: %w", err)
		}
		to = append(to, p.String())
	}
	view := emailView(lang, ch.Name, events)

	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	hdr := func(k, v string) { buf.WriteString(k + ": " + v + "\r\n") }
	hdr("From", from.String())
	hdr("To", strings.Join(to, ",\r\n "))
	hdr("Subject", encodeSubject(view.Subject))
	hdr("Date", opts.now().Format(time.RFC1123Z))
	hdr("Message-ID", messageID(opts.DeliveryID, from.Address))
	hdr("MIME-Version", "1.0")
	hdr("Auto-Submitted", "auto-generated")
	kind := EventDigest
	if len(events) == 1 {
		kind = oneLine(events[0].Kind, 40)
	}
	hdr(HeaderEvent, kind)
	hdr("Content-Type", `multipart/alternative; boundary="`+mw.Boundary()+`"`)
	buf.WriteString("\r\n")

	var text, html bytes.Buffer
	if err := textTemplate(&text, view); err != nil {
		return nil, err
	}
	if err := htmlTemplate.Execute(&html, view); err != nil {
		return nil, fmt.Errorf("e-mail HTML: %w", err)
	}
	for _, p := range []struct {
		ctype string
		body  []byte
	}{{"text/plain; charset=utf-8", text.Bytes()}, {"text/html; charset=utf-8", html.Bytes()}} {
		w, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {p.ctype},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, err
		}
		qp := quotedprintable.NewWriter(w)
		if _, err := qp.Write(p.body); err != nil {
			return nil, err
		}
		if err := qp.Close(); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeSubject is the Subject header's value: RFC 2047 encoded-words
// when it is not plain ASCII, folded between words so that no line grows
// long. Its text is already on one line (oneLine), so it cannot start a
// header of its own.
func encodeSubject(s string) string {
	s = oneLine(s, maxSubjectRunes)
	return strings.ReplaceAll(mime.BEncoding.Encode("utf-8", s), "?= =?", "?=\r\n =?")
}

// messageID is stable for a delivery (the same on a retry, so that a
// mailbox can drop a duplicate), random without one.
func messageID(deliveryID, from string) string {
	domain := "backupd.invalid"
	if i := strings.LastIndexByte(from, '@'); i >= 0 && i+1 < len(from) {
		domain = from[i+1:]
	}
	id := strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
			return r
		}
		return -1
	}, deliveryID)
	if id == "" {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		id = hex.EncodeToString(b)
	}
	return "<backupd." + id + "@" + domain + ">"
}

// mailView is what both parts of an e-mail show.
type mailView struct {
	Subject      string
	Heading      string
	Items        []mailItem
	More         string // "and N more" when events were left out
	DiffsOmitted string
	NoiseLegend  string
	NoiseHTML    string
	Footer       string
	TriggerLabel string
	GroupLabel   string
	AtLabel      string
	DiffTitle    string
	ViewLabel    string
}

type mailItem struct {
	Device   string
	What     string
	Details  []string
	Group    string
	At       string
	Trigger  string
	URL      string
	Diff     []diffLine
	DiffNote string
	HasNoise bool
}

type diffLine struct {
	Text  string
	Class string // "add", "del", "hunk", "head" or ""
	Noise bool
}

func emailView(lang, channel string, events []Event) mailView {
	v := mailView{
		Subject:      title(lang, events),
		Heading:      title(lang, events),
		NoiseLegend:  tr(lang, "diff.legend"),
		NoiseHTML:    tr(lang, "diff.legend_html"),
		Footer:       tr(lang, "email.footer", oneLine(channel, 80)),
		TriggerLabel: tr(lang, "field.trigger"),
		GroupLabel:   tr(lang, "field.group"),
		AtLabel:      tr(lang, "field.at"),
		DiffTitle:    tr(lang, "diff.title"),
		ViewLabel:    tr(lang, "link.view"),
	}
	list := ordered(events)
	if len(list) > maxEmailEvents {
		v.More = tr(lang, "digest.more", len(list)-maxEmailEvents)
		list = list[:maxEmailEvents]
	}
	diffBudget, omitted := maxEmailDiffLines, 0
	for _, e := range list {
		it := mailItem{
			Device:  deviceLabel(e.Device),
			What:    what(lang, e),
			Details: details(lang, e),
			At:      when(e.At),
			Trigger: triggerName(lang, e.Trigger),
			URL:     e.URL,
		}
		if e.Device != nil {
			it.Group = oneLine(strings.Join(e.Device.GroupPath, " / "), 200)
		}
		if d := e.Diff; d != nil && (d.Unified != "" || d.Truncated) {
			lines := strings.Split(strings.TrimSuffix(d.Unified, "\n"), "\n")
			if d.Unified == "" || len(lines) > diffBudget { // cut to nothing by BoundDiffs, or past this message's budget
				omitted++
			} else {
				diffBudget -= len(lines)
				for i, l := range lines {
					dl := diffLine{Text: strings.ToValidUTF8(l, "\uFFFD"), Noise: d.IsNoise(i + 1)}
					switch {
					case i < 2:
						dl.Class = "head"
					case strings.HasPrefix(l, "@@"):
						dl.Class = "hunk"
					case strings.HasPrefix(l, "+"):
						dl.Class = "add"
					case strings.HasPrefix(l, "-"):
						dl.Class = "del"
					}
					it.HasNoise = it.HasNoise || dl.Noise
					it.Diff = append(it.Diff, dl)
				}
				if d.Truncated {
					it.DiffNote = tr(lang, "diff.truncated", len(lines), d.TotalLines)
				}
			}
		}
		v.Items = append(v.Items, it)
	}
	if omitted > 0 {
		v.DiffsOmitted = tr(lang, "diff.omitted", omitted)
	}
	return v
}

// textTemplate writes the plain-text part. Diff lines are indented by
// two columns, the first of which is "~" on a noise line.
func textTemplate(w *bytes.Buffer, v mailView) error {
	w.WriteString(v.Heading + "\n")
	for _, it := range v.Items {
		w.WriteString("\n" + it.Device + ": " + it.What + "\n")
		for _, d := range it.Details {
			w.WriteString("  " + d + "\n")
		}
		if it.Group != "" {
			w.WriteString("  " + v.GroupLabel + ": " + it.Group + "\n")
		}
		w.WriteString("  " + v.AtLabel + ": " + it.At + " (" + v.TriggerLabel + ": " + it.Trigger + ")\n")
		if it.URL != "" {
			w.WriteString("  " + v.ViewLabel + ": " + it.URL + "\n")
		}
		if len(it.Diff) > 0 {
			w.WriteString("\n")
			for _, l := range it.Diff {
				mark := "  "
				if l.Noise {
					mark = "~ "
				}
				w.WriteString(mark + l.Text + "\n")
			}
			if it.DiffNote != "" {
				w.WriteString("  " + it.DiffNote + "\n")
			}
			if it.HasNoise {
				w.WriteString("  " + v.NoiseLegend + "\n")
			}
		}
	}
	if v.More != "" {
		w.WriteString("\n" + v.More + "\n")
	}
	if v.DiffsOmitted != "" {
		w.WriteString("\n" + v.DiffsOmitted + "\n")
	}
	w.WriteString("\n-- \n" + v.Footer + "\n")
	return nil
}

// htmlTemplate is the HTML part; html/template escapes every value, and
// styles are inline because mail clients drop style sheets.
var htmlTemplate = template.Must(template.New("mail").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{.Subject}}</title></head>
<body style="font-family:sans-serif;font-size:14px;color:#222">
<h2 style="font-size:18px">{{.Heading}}</h2>
{{range .Items}}<div style="margin:0 0 18px 0">
<p style="margin:0"><strong>{{.Device}}</strong>: {{.What}}</p>
{{range .Details}}<p style="margin:0;color:#444">{{.}}</p>
{{end}}<p style="margin:0;color:#666;font-size:12px">{{if .Group}}{{$.GroupLabel}}: {{.Group}} · {{end}}{{$.AtLabel}}: {{.At}} · {{$.TriggerLabel}}: {{.Trigger}}</p>
{{if .URL}}<p style="margin:4px 0"><a href="{{.URL}}">{{$.ViewLabel}}</a></p>
{{end}}{{if .Diff}}<pre style="font-family:monospace;font-size:12px;background:#f6f6f6;padding:8px;overflow:auto">{{range .Diff}}{{if .Noise}}<span class="{{.Class}} noise" style="color:#999">{{else if eq .Class "add"}}<span class="add" style="color:#116611">{{else if eq .Class "del"}}<span class="del" style="color:#aa1111">{{else if eq .Class "hunk"}}<span class="hunk" style="color:#555">{{else}}<span>{{end}}{{.Text}}</span>
{{end}}</pre>
{{if .DiffNote}}<p style="margin:0;font-size:12px">{{.DiffNote}}</p>
{{end}}{{if .HasNoise}}<p style="margin:0;font-size:12px;color:#999">{{$.NoiseHTML}}</p>
{{end}}{{end}}</div>
{{end}}{{if .More}}<p>{{.More}}</p>
{{end}}{{if .DiffsOmitted}}<p>{{.DiffsOmitted}}</p>
{{end}}<hr><p style="font-size:12px;color:#666">{{.Footer}}</p>
</body></html>
`))
