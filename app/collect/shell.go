package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"backupd/app/collect/driver"
	"backupd/app/collect/transport"
)

// A Shell is a device's command line kept open for writing: a restore or
// a change set logs in once, then sends configuration lines, answers the
// questions some commands ask, types whole configurations, writes files
// and runs show commands to check the result, all on one session.
//
// It logs in as Collect does (the same Target, timeouts, host key pinning,
// outbound control, enable step, paging off and transcript) but always
// with an interactive shell: a PTY over SSH, or telnet; never one exec
// request per command, whatever the platform collects with.
//
// Each call is bounded by ctx and by Target.Timeouts.Command; the session
// itself lives until Close. A Shell is not safe for concurrent use.
//
// Errors are *Error, classified as Collect's (Reason), except a line the
// device rejected, which is *LineError. A session the device dropped (or
// that had to be closed) is told apart from a rejected line by
// errors.Is(err, driver.ErrClosed). No error holds a line that was sent
// unmasked, nor a file's content.
type Shell struct {
	c       *collector
	sess    *driver.Session
	files   fileFetcher  // nil over telnet
	up      fileUploader // nil over telnet
	hostKey []byte
	close   func() error
	closed  bool
}

// fileUploader writes a file over the shell's SSH login; the SSH shell
// offers it.
type fileUploader interface {
	UploadSCP(ctx context.Context, path string, data []byte, mode os.FileMode) error
}

// Bounds on what a Shell sends.
const (
	maxSendLine = 64 << 10 // one line
	maxSendText = 16 << 20 // one block of text
	maxSendEnd  = 16       // the raw bytes that end a block
	maxShown    = 120      // characters of a rejected line in an error
)

// OpenShell logs in to t and returns the open session; t.Commands are not
// used. The returned Shell must be closed.
func OpenShell(ctx context.Context, t Target) (*Shell, error) {
	t, pl, method, err := prepareTarget(t)
	if err != nil {
		return nil, err
	}
	if t.Transcript != nil {
		t.Transcript.setSecrets(t.Password, t.EnablePassword, t.PrivateKeyPassphrase)
	}
	c := &collector{t: t, d: pl.Dialogue, pl: pl, addr: net.JoinHostPort(t.Host, strconv.Itoa(t.Port))}
	// A write session types its lines, also on a platform collected with
	// exec requests.
	c.d.Exec = false
	r, files, key, closeConn, err := c.login(ctx, method)
	if err != nil {
		return nil, c.redact(err)
	}
	sess, ok := r.(*driver.Session)
	if !ok {
		_ = closeConn()
		return nil, &Error{Reason: ReasonProtocol, msg: fmt.Sprintf("%s: no interactive shell was opened", c.addr)}
	}
	up, _ := files.(fileUploader)
	return &Shell{c: c, sess: sess, files: files, up: up, hostKey: key, close: closeConn}, nil
}

// prepareTarget checks a target as Collect does and fills in its
// defaults: the platform, the login method and port, the character set,
// the timeouts and the output limit.
func prepareTarget(t Target) (Target, driver.Platform, string, error) {
	var pl driver.Platform
	if t.Definition != nil {
		p, err := driver.Prepare(*t.Definition)
		if err != nil {
			return t, pl, "", &Error{Reason: ReasonProtocol, msg: err.Error()}
		}
		pl = p
	} else {
		p, ok := driver.Lookup(t.Platform)
		if !ok {
			return t, pl, "", &Error{Reason: ReasonProtocol, msg: fmt.Sprintf("unknown platform %q", t.Platform)}
		}
		pl = p
	}
	if _, err := driver.Decode(t.Encoding, nil); err != nil {
		return t, pl, "", &Error{Reason: ReasonProtocol, msg: err.Error()}
	}
	if strings.TrimSpace(t.Host) == "" {
		return t, pl, "", &Error{Reason: ReasonProtocol, msg: "no host given"}
	}
	method := strings.ToLower(t.Method)
	if method == "" {
		method = "ssh"
	}
	defPort, ok := driver.LoginMethods[method]
	if !ok {
		return t, pl, "", &Error{Reason: ReasonProtocol, msg: fmt.Sprintf("unknown login method %q (ssh or telnet)", t.Method)}
	}
	if t.Port == 0 {
		t.Port = defPort
	}
	t.Timeouts = t.Timeouts.withDefaults()
	if t.MaxOutput <= 0 {
		t.MaxOutput = DefaultMaxOutput
	}
	return t, pl, method, nil
}

// HostKey is the SSH host key the device presented (wire format), to pin
// on first use; nil over telnet.
func (s *Shell) HostKey() []byte { return append([]byte(nil), s.hostKey...) }

// Prompt is the device's prompt after the last call: its mode shows in it
// ("R1(config-router)#").
func (s *Shell) Prompt() string { return s.sess.Prompt() }

// Close ends the session. It does not leave configuration mode first: a
// device discards what a dropped session left uncommitted, or keeps what
// was applied line by line, as it would for any dropped login.
func (s *Shell) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.close()
}

func (s *Shell) usable() error {
	if s.closed {
		return &Error{Reason: ReasonProtocol, err: driver.ErrClosed, msg: fmt.Sprintf("%s: the session is closed", s.c.addr)}
	}
	return nil
}

// Run runs a read command as Collect does: its output cleaned and
// stripped as a backup's is, an error if the device rejects the command.
// "scp:<path>" fetches a file over the SSH login instead.
func (s *Shell) Run(ctx context.Context, cmd string) (string, error) {
	if err := s.usable(); err != nil {
		return "", err
	}
	cmd = strings.TrimSpace(cmd)
	if cmd == "" {
		return "", &Error{Reason: ReasonProtocol, msg: "no command given"}
	}
	cctx, cancel := context.WithTimeout(ctx, s.c.t.Timeouts.Command)
	defer cancel()
	var out string
	var err error
	if path, ok := driver.SCPPath(cmd); ok {
		if err := transport.CheckSCPPath(path); err != nil {
			return "", &Error{Reason: ReasonProtocol, err: err, msg: fmt.Sprintf("`%s`: %s", cmd, err.Error())}
		}
		out, err = s.c.fetch(ctx, cctx, s.files, cmd, path)
	} else {
		out, err = s.sess.Run(cctx, cmd)
		if lostWrite(err) {
			err = fmt.Errorf("%w: %w", driver.ErrClosed, err)
		}
	}
	var done *Error
	switch {
	case errors.As(err, &done):
		return "", s.c.redact(done)
	case err != nil:
		return "", s.c.redact(s.c.commandError(ctx, cmd, err))
	}
	return strings.TrimRight(s.c.pl.StripOutput(out), "\n"), nil
}

// lostWrite reports a command that could not be sent because the
// connection is gone (a broken pipe on telnet), which the read path
// leaves unclassified.
func lostWrite(err error) bool {
	return err != nil && !errors.Is(err, driver.ErrClosed) && (errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed))
}

// Send sends one configuration or operational line and returns what the
// device printed for it (no echo, no prompt), once its prompt is back;
// the prompt may have changed mode. When a line of the output matches
// errs, or the platform's CommandError when errs is nil, the output comes
// back with a *LineError: for a write, any such line is a rejection,
// however long the output.
func (s *Shell) Send(ctx context.Context, line string, errs *regexp.Regexp) (string, error) {
	return s.send(ctx, line, nil, errs)
}

// Dialog is Send for a line the device answers with questions: each
// question (the last line of output matching an answer's Match) gets that
// answer's Send, at most three times; asked again, the dialogue fails.
// In Send, "\n" stands for the line end. E.g. IOS "Enter Y if you are
// sure you want to proceed. ? [no]:" → "Y\n".
func (s *Shell) Dialog(ctx context.Context, line string, answers []driver.Answer, errs *regexp.Regexp) (string, error) {
	for _, a := range answers {
		if a.Match == nil {
			return "", &Error{Reason: ReasonProtocol, msg: "a dialogue answer has no question to match"}
		}
	}
	return s.send(ctx, line, answers, errs)
}

func (s *Shell) send(ctx context.Context, line string, answers []driver.Answer, errs *regexp.Regexp) (string, error) {
	if err := s.usable(); err != nil {
		return "", err
	}
	if len(line) > maxSendLine {
		return "", &Error{Reason: ReasonProtocol, msg: fmt.Sprintf("%s: a line of %d bytes is longer than the %d a device is sent", s.c.addr, len(line), maxSendLine)}
	}
	cctx, cancel := context.WithTimeout(ctx, s.c.t.Timeouts.Command)
	defer cancel()
	lines, err := s.sess.Line(cctx, line, answers)
	if err != nil {
		return "", s.writeError(ctx, "sending a line", err)
	}
	out := joinOutput(lines)
	return out, s.judge(line, "", lines, out, errs)
}

// Expect sends a line that makes the device wait for a block of text
// (Junos "load override terminal") and returns once a line of output
// matches ready (its invitation: "[Type ^D at a new line to end input]"),
// with the output so far. When the prompt comes back instead, the device
// did not take the line: *LineError.
func (s *Shell) Expect(ctx context.Context, line string, ready, errs *regexp.Regexp) (string, error) {
	if err := s.usable(); err != nil {
		return "", err
	}
	if ready == nil {
		return "", &Error{Reason: ReasonProtocol, msg: "no invitation to wait for"}
	}
	cctx, cancel := context.WithTimeout(ctx, s.c.t.Timeouts.Command)
	defer cancel()
	lines, prompted, err := s.sess.Expect(cctx, line, ready)
	if err != nil {
		return "", s.writeError(ctx, "sending a line", err)
	}
	out := joinOutput(lines)
	if err := s.judge(line, "", lines, out, errs); err != nil {
		return out, err
	}
	if prompted {
		return out, &LineError{Line: line, Output: out, shown: s.showLine(line),
			reason: "the prompt came back without an invitation to type the text"}
	}
	return out, nil
}

// SendText types a block of text (a whole configuration after Expect),
// then end byte for byte (Ctrl-D, 0x04, for Junos), and returns what the
// device printed up to its prompt, without its echo of the text. Raw
// control bytes go only here, in end; the text's lines must have none.
// The transcript notes "[sent N lines]" instead of the text. When the
// device's answer holds an error line (errs, or the platform's
// CommandError), the output comes back with a *LineError. A block that
// fails on the way leaves the device waiting for the rest: the session is
// closed, and the error matches driver.ErrClosed.
func (s *Shell) SendText(ctx context.Context, text string, end []byte, errs *regexp.Regexp) (string, error) {
	if err := s.usable(); err != nil {
		return "", err
	}
	if len(text) > maxSendText {
		return "", &Error{Reason: ReasonProtocol, msg: fmt.Sprintf("%s: a text of %d bytes is larger than the %s a device is sent", s.c.addr, len(text), size(maxSendText))}
	}
	if len(end) > maxSendEnd {
		return "", &Error{Reason: ReasonProtocol, msg: fmt.Sprintf("%s: %d bytes to end a text are more than %d", s.c.addr, len(end), maxSendEnd)}
	}
	var lines []string
	if text = strings.ReplaceAll(text, "\r\n", "\n"); text != "" {
		lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	}
	cctx, cancel := context.WithTimeout(ctx, s.c.t.Timeouts.Command)
	defer cancel()
	tr := s.c.t.Transcript
	if tr != nil {
		tr.beginBlock(lines)
	}
	out, err := s.sess.Text(cctx, lines, end)
	// Nothing was sent when a line could not be.
	sent := err == nil || !errors.Is(err, driver.ErrUnencodable) && !errors.Is(err, driver.ErrControl)
	if tr != nil {
		tr.endBlock(sent)
	}
	what := fmt.Sprintf("sending a text of %d lines", len(lines))
	if err != nil {
		if sent {
			// Text closed the connection: the device waits for the rest.
			s.closed = true
			if !errors.Is(err, driver.ErrClosed) {
				err = fmt.Errorf("%w (the session was closed: %w)", err, driver.ErrClosed)
			}
		}
		return "", s.writeError(ctx, what, err)
	}
	joined := joinOutput(out)
	return joined, s.judge("", fmt.Sprintf("the text of %d lines", len(lines)), out, joined, errs)
}

// Upload writes data to path on the device over SCP, on a new channel of
// the shell's SSH connection; the shell stays open. Over telnet there is
// no SCP. mode's permission bits go with the file (0644 when none). When
// the upload times out the whole connection is closed. No error holds the
// data.
func (s *Shell) Upload(ctx context.Context, path string, data []byte, mode os.FileMode) error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := transport.CheckSCPUploadPath(path); err != nil {
		return &Error{Reason: ReasonProtocol, err: err, msg: fmt.Sprintf("%s: upload to `%s`: %s", s.c.addr, path, err.Error())}
	}
	if s.up == nil {
		return &Error{Reason: ReasonProtocol,
			msg: fmt.Sprintf("%s: upload to `%s`: needs ssh: a file is written over the device's SSH login, and this session is over telnet", s.c.addr, path)}
	}
	tr := s.c.t.Transcript
	if tr != nil {
		tr.note("[scp] scp -t " + path + "\n")
	}
	cctx, cancel := context.WithTimeout(ctx, s.c.t.Timeouts.Command)
	defer cancel()
	if err := s.up.UploadSCP(cctx, path, data, mode); err != nil {
		return s.c.redact(s.uploadError(ctx, cctx, path, len(data), err))
	}
	if tr != nil {
		tr.note(fmt.Sprintf("[scp] sent %d bytes\n", len(data)))
	}
	return nil
}

// uploadError explains a failed upload; a connection lost or closed by
// the timeout also matches driver.ErrClosed.
func (s *Shell) uploadError(ctx, cctx context.Context, path string, n int, err error) error {
	var refused *transport.SCPError
	at := fmt.Sprintf("%s: upload to `%s`", s.c.addr, path)
	switch {
	case errors.Is(err, transport.ErrFileTooLarge):
		return &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: the file of %d bytes exceeds the limit of %s", at, n, size(transport.MaxSCPUpload))}
	case errors.As(err, &refused):
		return &Error{Reason: ReasonProtocol, err: err, msg: fmt.Sprintf("%s: %s", at, refused.Error())}
	case cctx.Err() != nil:
		s.closed = true
		why := fmt.Sprintf("the command timeout (%s)", s.c.t.Timeouts.Command)
		if ctx.Err() != nil {
			why = "a cancellation or the caller's deadline"
		}
		return &Error{Reason: ReasonTimeout, err: fmt.Errorf("%w: %w", driver.ErrClosed, err),
			msg: fmt.Sprintf("%s: timed out writing the file over SCP: %s ran out; the session was closed", at, why)}
	case errors.Is(err, transport.ErrConnectionLost):
		return &Error{Reason: ReasonProtocol, err: fmt.Errorf("%w: %w", driver.ErrClosed, err),
			msg: fmt.Sprintf("%s: the device closed the connection during the upload; the file may be incomplete", at)}
	}
	return &Error{Reason: ReasonProtocol, err: err, msg: fmt.Sprintf("%s: %s", at, safeText(err))}
}

// writeError explains a failed write (what: "sending a line"). Driver
// errors of a write never quote the line.
func (s *Shell) writeError(ctx context.Context, what string, err error) error {
	c := s.c
	var e *Error
	switch {
	case errors.Is(err, driver.ErrClosed):
		e = &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: the device closed the connection while %s; whether the device applied it is unknown", c.addr, what)}
		if errors.Is(err, driver.ErrTimeout) {
			e.Reason = ReasonTimeout
			e.msg = fmt.Sprintf("%s: timed out while %s; the session was closed; %s", c.addr, what, detail(err))
		}
	case errors.Is(err, driver.ErrTimeout):
		why := fmt.Sprintf("the command timeout (%s)", c.t.Timeouts.Command)
		if ctx.Err() != nil {
			why = "a cancellation or the caller's deadline"
		}
		e = &Error{Reason: ReasonTimeout, err: err,
			msg: fmt.Sprintf("%s: timed out waiting for the prompt while %s: %s ran out; %s", c.addr, what, why, detail(err))}
	case errors.Is(err, driver.ErrOutputTooLarge):
		e = &Error{Reason: ReasonOutputTooLarge, err: err,
			msg: fmt.Sprintf("%s: the device printed more than %s while %s", c.addr, size(c.t.MaxOutput), what)}
	case errors.Is(err, driver.ErrQuestion):
		e = &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: while %s: the device asked the same question again after it was answered as often as allowed", c.addr, what)}
	case errors.Is(err, driver.ErrBinaryOutput):
		e = &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: while %s: the device's answer contains binary control bytes", c.addr, what)}
	case errors.Is(err, driver.ErrControl):
		e = &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: while %s: %s; nothing was sent", c.addr, what, driver.ErrControl.Error())}
	case errors.Is(err, driver.ErrUnencodable):
		set := c.t.Encoding
		if set == "" {
			set = "utf-8"
		}
		e = &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: while %s: %s (%s); nothing was sent", c.addr, what, driver.ErrUnencodable.Error(), set)}
	default:
		e = &Error{Reason: ReasonProtocol, err: err, msg: fmt.Sprintf("%s: while %s: %s", c.addr, what, safeText(err))}
	}
	return c.redact(e)
}

// joinOutput joins output lines without the blank lines that end them.
func joinOutput(lines []string) string {
	return strings.TrimRight(strings.Join(lines, "\n"), "\n \t")
}

// judge returns a *LineError when a line of the output matches errs, or
// the platform's CommandError when errs is nil. The line sent is named
// by line, or described by block.
func (s *Shell) judge(line, block string, lines []string, out string, errs *regexp.Regexp) error {
	if errs == nil {
		errs = s.c.d.CommandError
	}
	if errs == nil {
		return nil
	}
	for _, l := range lines {
		if !errs.MatchString(l) {
			continue
		}
		e := &LineError{Line: line, Output: out, shown: block, reason: s.showText(l, 200)}
		if block == "" {
			e.shown = "`" + s.showLine(line) + "`"
		}
		return e
	}
	return nil
}

// showLine is a line sent, fit for an error: the platform's secrets
// masked, at most maxShown characters.
func (s *Shell) showLine(line string) string { return s.showText(line, maxShown) }

func (s *Shell) showText(text string, max int) string {
	text = s.c.pl.SecretSet().Mask(strings.TrimSpace(text), func(string) string { return "<secret>" }, nil)
	text = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, text)
	if r := []rune(text); len(r) > max {
		text = string(r[:max]) + "…"
	}
	return text
}

// LineError is a line (or a text) the device rejected: a line of its
// answer matched the error pattern.
type LineError struct {
	// Line is the line as sent ("" for a text). It may hold a secret:
	// never log it; Error shows it masked.
	Line string
	// Output is everything the device printed for it.
	Output string

	shown  string // the line masked, or the text described
	reason string // the first error line, masked and bounded
}

// Error names the line (its secrets masked) and the device's first error
// line, never more of the output.
func (e *LineError) Error() string {
	what := e.shown
	if what == "" {
		what = "a line"
	}
	msg := "the device rejected " + what
	if e.reason != "" {
		msg += ": " + e.reason
	}
	return msg
}

// Unwrap makes a LineError match driver.ErrRejected.
func (e *LineError) Unwrap() error { return driver.ErrRejected }
