package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Conn is the interactive stream a session talks over; the SSH and telnet
// transports provide it.
type Conn interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	SetReadDeadline(t time.Time) error
}

// Dialogue is how a platform's command line behaves. The production
// entries are in dialogues.go (DialogueFor).
type Dialogue struct {
	// Prompt matches a command prompt, tested against the last line of
	// output (cleaned of escapes, trailing spaces trimmed), e.g.
	// `^[\w.-]+[>#]$`.
	Prompt *regexp.Regexp
	// PromptVolatile matches the parts of a prompt that change from one
	// command to the next (EXOS's command counter and unsaved-changes
	// mark); they are removed before a line is compared with the prompt
	// learned at login.
	PromptVolatile *regexp.Regexp
	// PromptLines matches lines a device prints just before its prompt as
	// part of it (Junos "{master:0}", "[edit]"); they are not output.
	PromptLines *regexp.Regexp
	// Pager matches a pager prompt on the last line, e.g. `--More--$`.
	Pager *regexp.Regexp
	// PagerAnswer is sent to a pager prompt (default " ").
	PagerAnswer string
	// PagingOff are sent once after login; their output is ignored, and
	// a device that rejects one is still collected (its pager is
	// answered instead).
	PagingOff []string
	// Enable raises privilege ("enable", "super"); empty when the login
	// lands in privileged mode.
	Enable string
	// EnableWithPasswordOnly runs Enable only when an enable password is
	// given: on Huawei and Comware user and raised levels share the
	// prompt, so it cannot tell whether Enable is needed.
	EnableWithPasswordOnly bool
	// Privileged matches a prompt that needs no Enable.
	Privileged *regexp.Regexp
	// PasswordPrompt matches the enable password question.
	PasswordPrompt *regexp.Regexp
	// EnableUserPrompt matches a username question in the enable dialogue
	// (ProCurve); it is answered with the login username.
	EnableUserPrompt *regexp.Regexp
	// EnableFailed matches what a device prints when it refuses to raise
	// privilege.
	EnableFailed *regexp.Regexp
	// PreLogin are questions a device may ask before its first prompt
	// ("Press any key to continue", a disclaimer to accept, a password
	// change offer), with the answers that get past them unchanged.
	PreLogin []Answer
	// CommandError matches a line by which the device rejects a command
	// ("% Invalid input detected"). It is only looked for in short
	// outputs, so a configuration line can never trip it.
	CommandError *regexp.Regexp
	// Exec collects over SSH with one exec request per command instead of
	// an interactive shell (Junos, RouterOS, Unix). Telnet always uses the
	// shell.
	Exec bool
	// TelnetUserSuffix is appended to the username on telnet logins
	// (RouterOS "+ct": no colours, no terminal probing).
	TelnetUserSuffix string
	// LineEnd ends every command (default "\n").
	LineEnd string
}

// Answer is a reply to a question a device asks. In Send, "\n" stands for
// the session's line end, and UsernamePlaceholder and PasswordPlaceholder
// for the login credentials (for command lines that ask for them again
// after the SSH login). An answer that sends a credential is given once: a
// second question means the device refused it.
type Answer struct {
	Match *regexp.Regexp
	Send  string
}

// Placeholders in Answer.Send for the login username and password.
const (
	UsernamePlaceholder = "{username}"
	PasswordPlaceholder = "{password}"
)

func (a Answer) sendsCredential() bool {
	return strings.Contains(a.Send, UsernamePlaceholder) || strings.Contains(a.Send, PasswordPlaceholder)
}

// Errors a session reports; callers classify failures by them.
var (
	ErrTimeout        = errors.New("timed out waiting for the device")
	ErrOutputTooLarge = errors.New("device output exceeds the size limit")
	ErrEnable         = errors.New("enable failed")
	ErrClosed         = errors.New("the device closed the connection")
	ErrRejected       = errors.New("the device rejected the command")
	ErrBinaryOutput   = errors.New("the output contains binary data")
	// ErrLoginRefused is a command line that asked for the credentials
	// again after they were given to it.
	ErrLoginRefused = errors.New("the device refused the username or password its command line asked for")
)

// quietPeriod is how long a line that merely looks like a prompt (but is
// not the prompt learned at login) must stand with no more output before
// it counts as one; a configuration line ending in '#' must not end a
// command early.
const quietPeriod = 400 * time.Millisecond

// probeDelay is how long a prompt-like line must stand, while no prompt is
// known, before an empty command checks whether it is the prompt.
const probeDelay = 30 * time.Millisecond

// Bounds on what the session inspects and tolerates.
const (
	maxTail           = 1024     // bytes of the last line examined for prompts
	maxPagerLine      = 160      // a longer pager prompt is never one
	maxLoginOutput    = 1 << 20  // banners and MOTDs before the first prompt
	maxEnableOutput   = 64 << 10 // the enable dialogue
	maxAnswers        = 3        // times one PreLogin answer is given
	maxRejectionLines = 6        // outputs longer than this are never a rejection
	maxPromptLines    = 3        // PromptLines removed before the prompt
)

// Session drives one device's command line.
type Session struct {
	conn      Conn
	d         Dialogue
	prompt    string // the exact prompt, learned after login and enable
	maxOutput int
	encoding  string
	username  string
	password  string
	// quietEnds counts the reads a prompt ended only after quietPeriod.
	quietEnds int
}

// NewSession starts a session over conn; maxOutput caps one command's
// output in bytes.
func NewSession(conn Conn, d Dialogue, maxOutput int) *Session {
	if d.PagerAnswer == "" {
		d.PagerAnswer = " "
	}
	if d.LineEnd == "" {
		d.LineEnd = "\n"
	}
	return &Session{conn: conn, d: d, maxOutput: maxOutput, encoding: "utf-8"}
}

// SetEncoding sets the character set the device prints in (one of
// Encodings; "" is UTF-8).
func (s *Session) SetEncoding(name string) error {
	if _, _, err := charset(name); err != nil {
		return err
	}
	s.encoding = name
	return nil
}

// SetUsername sets the login username, which answers EnableUserPrompt.
func (s *Session) SetUsername(name string) { s.username = name }

// SetPassword sets the login password, which answers a PreLogin question
// whose Send holds PasswordPlaceholder. It is never part of an error.
func (s *Session) SetPassword(password string) { s.password = password }

// Prompt is the prompt learned so far.
func (s *Session) Prompt() string { return s.prompt }

// osc matches operating-system commands (xterm titles that Unix prompts
// set): ESC ] … BEL or ESC ] … ESC \.
var osc = regexp.MustCompile(`\x1b\][^\x07\x1b]{0,512}(\x07|\x1b\\)`)

// clean is CleanLines with the escapes it does not know removed first.
func clean(raw []byte) []string {
	if bytes.Contains(raw, []byte("\x1b]")) {
		raw = osc.ReplaceAll(raw, nil)
	}
	return CleanLines(raw)
}

// cleanText is clean of decoded text; text without escapes is split as
// it is, not copied first. plain reports lines without control
// characters (false when unknown).
func cleanText(text string) (lines []string, plain bool) {
	if strings.IndexByte(text, 0x1b) < 0 {
		return splitLines(text)
	}
	return clean([]byte(text)), false
}

// lastLine is the cleaned text after the last newline of raw. Only its
// last maxTail bytes are examined: a prompt is short, and a device that
// never sends a newline must not make every read cost more.
func lastLine(raw []byte) string {
	line := raw[bytes.LastIndexByte(raw, '\n')+1:]
	if len(line) > maxTail {
		line = line[len(line)-maxTail:]
	}
	lines := clean(line)
	return strings.TrimSpace(lines[len(lines)-1])
}

// normPrompt removes the volatile parts of a prompt.
func (s *Session) normPrompt(p string) string {
	if s.d.PromptVolatile == nil {
		return p
	}
	return s.d.PromptVolatile.ReplaceAllString(p, "")
}

// readState is how far a read got, for timeout messages that must not
// quote the device: byte and pager counts only.
type readState struct {
	bytes  int
	pagers int
}

func (st readState) timeout() error {
	msg := fmt.Sprintf("%s: no prompt after %d bytes of output", ErrTimeout, st.bytes)
	if st.pagers > 0 {
		msg += fmt.Sprintf(" (%d pager prompts answered)", st.pagers)
	}
	return &wrapped{msg: msg, err: ErrTimeout}
}

// wrapped is an error with its own message that still matches err.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// readChunk is the most one read of the session takes.
const readChunk = 32 << 10

// readBufs holds the buffers output is read into, so that thousands of
// backups do not each allocate and grow their own; buffers past
// maxPooledRead are left to the collector.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const maxPooledRead = 1 << 20

// poisonReleased makes releaseRead overwrite what it releases, so that a
// test sees any use of a buffer after its release (tests only).
var poisonReleased = false

// releaseRead returns a buffer readToPrompt returned once nothing refers
// to it any more.
func releaseRead(b []byte) {
	if cap(b) > maxPooledRead {
		return
	}
	if poisonReleased {
		b = b[:cap(b)]
		for i := range b {
			b[i] = 0xff
		}
	}
	b = b[:0]
	readBufs.Put(&b)
}

// readToPrompt reads until a prompt ends the output, answering pagers on
// the way (and, during login, the PreLogin questions), and returns
// everything read before and including the prompt. The caller hands the
// result to releaseRead when done with it.
func (s *Session) readToPrompt(ctx context.Context, answers []Answer, limit int) ([]byte, error) {
	out, _, err := s.read(ctx, readMode{answers: answers, limit: limit})
	return out, err
}

// readMode is what a read looks for besides the prompt. The zero mode
// (plus answers and a limit) is the read of a show command; the other
// fields serve the write session (write.go).
type readMode struct {
	answers []Answer
	limit   int
	// write: the read follows a line sent to change something. A prompt
	// that is a variant of the learned one (isVariant) ends it at once,
	// answers are only given once the echo has ended, and a question asked
	// again after its last allowed answer fails the read (ErrQuestion).
	write bool
	// ready, when set, ends the read at a line after the echo that it
	// matches (the device's invitation to type a block).
	ready *regexp.Regexp
	// writing, until it delivers, holds back every end of the read: a
	// block is still being sent, and the device's echo of it is read
	// meanwhile so that neither side waits for the other. What it
	// delivers is the sender's error.
	writing <-chan error
}

// readEnd is how a read ended.
type readEnd int

const (
	endPrompt readEnd = iota
	endReady
)

// read is readToPrompt with the write session's options.
func (s *Session) read(ctx context.Context, m readMode) ([]byte, readEnd, error) {
	out := (*readBufs.Get().(*[]byte))[:0]
	var candidateSince time.Time
	var st readState
	answered := make([]int, len(m.answers))
	// While no prompt is known yet, a line that looks like one is probed:
	// an empty command makes a real prompt print itself again at once,
	// which is much faster than waiting for the device to fall silent.
	probeAt, probe := -1, ""
	scanned := 0 // bytes of out already searched for m.ready
	for {
		if m.writing != nil {
			select {
			case err := <-m.writing:
				m.writing = nil
				if err != nil {
					return out, endPrompt, fmt.Errorf("send text: %w", closedErr(err))
				}
			default:
			}
		}
		if len(out) > 0 && m.writing == nil {
			if m.ready != nil && s.readyLine(out, &scanned, m.ready) {
				return out, endReady, nil
			}
			tail := lastLine(out)
			sawNewline := bytes.IndexByte(out, '\n') >= 0
			switch {
			case probeAt >= 0 && len(out) > probeAt && bytes.IndexByte(out[probeAt:], '\n') >= 0 &&
				s.normPrompt(tail) == probe && s.d.Prompt.MatchString(tail):
				return out, endPrompt, nil
			case s.prompt != "" && sawNewline && s.normPrompt(tail) == s.normPrompt(s.prompt) &&
				(s.d.PromptVolatile == nil || s.d.Prompt.MatchString(tail)):
				return out, endPrompt, nil
			case s.d.Pager != nil && s.isPager(tail):
				out = s.dropPager(out, tail)
				if _, err := s.conn.Write([]byte(s.d.PagerAnswer)); err != nil {
					return out, endPrompt, fmt.Errorf("answer pager: %w", s.writeErr(err))
				}
				st.pagers++
				candidateSince = time.Time{}
				continue
			case (!m.write || sawNewline) && s.answer(tail, m.answers, answered):
				out = out[:bytes.LastIndexByte(out, '\n')+1]
				candidateSince = time.Time{}
				continue
			case s.refused(tail, m.answers, answered):
				return out, endPrompt, ErrLoginRefused
			case m.write && sawNewline && s.askedAgain(tail, m.answers, answered):
				return out, endPrompt, ErrQuestion
			case m.write && sawNewline && s.d.Prompt.MatchString(tail) && s.isVariant(tail):
				return out, endPrompt, nil
			case s.d.Prompt.MatchString(tail) ||
				(s.prompt != "" && strings.HasSuffix(s.normPrompt(tail), s.normPrompt(s.prompt))):
				// A line that looks like a prompt, or ends like the learned
				// one after stray bytes, counts once the device falls silent.
				if candidateSince.IsZero() {
					candidateSince = time.Now()
				} else if time.Since(candidateSince) >= quietPeriod {
					s.quietEnds++
					return out, endPrompt, nil
				} else if s.prompt == "" && probeAt < 0 && time.Since(candidateSince) >= probeDelay {
					if _, err := s.conn.Write([]byte(s.d.LineEnd)); err != nil {
						return out, endPrompt, fmt.Errorf("probe prompt: %w", s.writeErr(err))
					}
					probeAt, probe = len(out), s.normPrompt(tail)
				}
			default:
				candidateSince = time.Time{}
			}
		}
		if len(out) > m.limit {
			return out, endPrompt, ErrOutputTooLarge
		}
		if ctx.Err() != nil {
			st.bytes = len(out)
			return out, endPrompt, st.timeout()
		}
		step := time.Now().Add(100 * time.Millisecond)
		if dl, ok := ctx.Deadline(); ok && dl.Before(step) {
			step = dl
		}
		if err := s.conn.SetReadDeadline(step); err != nil {
			return out, endPrompt, fmt.Errorf("%w: %w", ErrClosed, err)
		}
		// Read straight into out: no copy through a buffer of our own.
		out = slices.Grow(out, readChunk)
		n, err := s.conn.Read(out[len(out) : len(out)+readChunk])
		out = out[:len(out)+n]
		if n > 0 {
			candidateSince = time.Time{}
		}
		if err != nil && !isTimeout(err) {
			return out, endPrompt, fmt.Errorf("%w after %d bytes of output: %w", ErrClosed, len(out), err)
		}
	}
}

// isPager reports a pager prompt at the end of the last line: alone on
// it, or after text when the device printed it in an unexpected place
// (TNSR 23.06 ends a line of the configuration with "--More--"). The
// prompt itself is short; the line may be a long one.
func (s *Session) isPager(tail string) bool {
	if len(tail) <= maxPagerLine {
		return s.d.Pager.MatchString(tail)
	}
	loc := s.d.Pager.FindStringIndex(tail)
	return loc != nil && loc[1] == len(tail) && loc[1]-loc[0] <= maxPagerLine
}

// dropPager removes the pager prompt at the end of out before its key is
// sent. A prompt alone on its line goes with the line. A prompt after
// text on the line is blanked where it stands, byte for byte, so the text
// stays and the cursor column is the one the device counts from: the
// wipe it sends after the key (backspaces, spaces, backspaces) then
// erases blanks, as on a terminal, not the text before them.
func (s *Session) dropPager(out []byte, tail string) []byte {
	start := bytes.LastIndexByte(out, '\n') + 1
	loc := s.d.Pager.FindStringIndex(tail)
	if loc == nil || strings.TrimSpace(tail[:loc[0]]) == "" {
		return out[:start]
	}
	prompt := tail[loc[0]:loc[1]]
	at := bytes.LastIndex(out[start:], []byte(prompt))
	if at < 0 {
		// The prompt's bytes are interleaved with escapes: the line goes
		// as a whole, as before.
		return out[:start]
	}
	blank := out[start+at : start+at+len(prompt)]
	for i := range blank {
		blank[i] = ' '
	}
	return out
}

// answer sends the reply to a PreLogin question on the last line.
func (s *Session) answer(tail string, answers []Answer, answered []int) bool {
	for i, a := range answers {
		limit := maxAnswers
		if a.sendsCredential() {
			limit = 1
		}
		if answered[i] < limit && a.Match.MatchString(tail) {
			answered[i]++
			send := strings.NewReplacer(UsernamePlaceholder, s.username, PasswordPlaceholder, s.password).Replace(a.Send)
			_, _ = s.conn.Write([]byte(strings.ReplaceAll(send, "\n", s.d.LineEnd)))
			return true
		}
	}
	return false
}

// refused reports a credential question asked again after its answer.
func (s *Session) refused(tail string, answers []Answer, answered []int) bool {
	for i, a := range answers {
		if a.sendsCredential() && answered[i] > 0 && a.Match.MatchString(tail) {
			return true
		}
	}
	return false
}

func (s *Session) writeErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// Start waits for the first prompt after login (answering the PreLogin
// questions), raises privilege with enablePassword when the platform needs
// it, and turns paging off.
func (s *Session) Start(ctx context.Context, enablePassword string) error {
	out, err := s.readToPrompt(ctx, s.d.PreLogin, maxLoginOutput)
	if err != nil {
		return fmt.Errorf("waiting for the first prompt: %w", err)
	}
	s.prompt = lastLine(out)
	releaseRead(out)
	if s.needsEnable(enablePassword) {
		if err := s.enable(ctx, enablePassword); err != nil {
			return err
		}
	}
	for _, cmd := range s.d.PagingOff {
		if _, err := s.Run(ctx, cmd); err != nil && !errors.Is(err, ErrRejected) {
			return fmt.Errorf("turning paging off (%s): %w", cmd, err)
		}
	}
	return nil
}

func (s *Session) needsEnable(password string) bool {
	switch {
	case s.d.Enable == "":
		return false
	case s.d.EnableWithPasswordOnly:
		return password != ""
	default:
		return s.d.Privileged == nil || !s.d.Privileged.MatchString(s.prompt)
	}
}

func enableErr(reason string) error {
	return &wrapped{msg: ErrEnable.Error() + ": " + reason, err: ErrEnable}
}

func (s *Session) enable(ctx context.Context, password string) error {
	if _, err := s.conn.Write([]byte(s.d.Enable + s.d.LineEnd)); err != nil {
		return fmt.Errorf("%w: %w", ErrEnable, s.writeErr(err))
	}
	s.prompt = "" // the prompt changes; learn it again
	buf := make([]byte, 4096)
	var out, all []byte
	sentUser, sentPassword := false, false
	for {
		if len(out) > 0 {
			tail := lastLine(out)
			switch {
			case s.d.EnableUserPrompt != nil && s.d.EnableUserPrompt.MatchString(tail):
				if sentUser {
					return enableErr("the enable username or password was rejected")
				}
				if _, err := s.conn.Write([]byte(s.username + s.d.LineEnd)); err != nil {
					return fmt.Errorf("%w: %w", ErrEnable, s.writeErr(err))
				}
				sentUser, out = true, nil
				continue
			case s.d.PasswordPrompt != nil && s.d.PasswordPrompt.MatchString(tail):
				if sentPassword {
					return enableErr("the enable password was rejected")
				}
				if password == "" {
					return enableErr("the device asks for an enable password and none is set for it")
				}
				if _, err := s.conn.Write([]byte(password + s.d.LineEnd)); err != nil {
					return fmt.Errorf("%w: %w", ErrEnable, s.writeErr(err))
				}
				sentPassword, out = true, nil
				continue
			case s.d.Prompt.MatchString(tail):
				if !sentPassword && s.d.EnableWithPasswordOnly && s.d.CommandError != nil &&
					slices.ContainsFunc(CleanLines(all), s.d.CommandError.MatchString) {
					// The device rejects the command itself without asking
					// for a password (VRP V8 logs users in at their level):
					// the login level is all there is; carry on with it.
					s.prompt = tail
					return nil
				}
				if s.d.EnableFailed != nil && s.d.EnableFailed.Match(all) {
					if sentPassword {
						return enableErr("the enable password was rejected")
					}
					return enableErr("the device refused to raise the privilege level")
				}
				if s.d.Privileged != nil && !s.d.Privileged.MatchString(tail) {
					return enableErr("the prompt shows no privileged mode afterwards")
				}
				s.prompt = tail
				return nil
			}
		}
		if len(all) > maxEnableOutput {
			return enableErr("the device printed too much without a prompt")
		}
		if ctx.Err() != nil {
			return &wrapped{msg: ErrEnable.Error() + ": " + ErrTimeout.Error() + " (no prompt after the enable command)", err: errors.Join(ErrEnable, ErrTimeout)}
		}
		step := time.Now().Add(100 * time.Millisecond)
		if dl, ok := ctx.Deadline(); ok && dl.Before(step) {
			step = dl
		}
		if err := s.conn.SetReadDeadline(step); err != nil {
			return fmt.Errorf("%w: %w", ErrClosed, err)
		}
		n, err := s.conn.Read(buf)
		out = append(out, buf[:n]...)
		all = append(all, buf[:n]...)
		if err != nil && !isTimeout(err) {
			return fmt.Errorf("%w: %w: %w", ErrEnable, ErrClosed, err)
		}
	}
}

// Run sends one command and returns its output: no echo, no prompt, no
// pager debris, decoded to UTF-8, "\n" line endings.
func (s *Session) Run(ctx context.Context, cmd string) (string, error) {
	if _, err := s.conn.Write([]byte(cmd + s.d.LineEnd)); err != nil {
		return "", fmt.Errorf("send %s: %w", cmd, s.writeErr(err))
	}
	raw, err := s.readToPrompt(ctx, nil, s.maxOutput)
	if err != nil {
		return "", fmt.Errorf("%s: %w", cmd, err)
	}
	// output copies what it keeps (the decoded text, the prompt).
	defer releaseRead(raw)
	return s.output(raw, cmd)
}

// output turns what a command printed, up to and including the prompt,
// into its output.
func (s *Session) output(raw []byte, cmd string) (string, error) {
	lines, plain, err := s.outputLines(raw, true)
	if err != nil {
		return "", err
	}
	if len(lines) > 0 && s.isEcho(lines[0], cmd) {
		lines = lines[1:]
	}
	return finish(s.d, cmd, lines, plain)
}

// outputLines decodes and cleans what a command printed. When it ends in
// a prompt, the prompt is learned and dropped with the PromptLines above
// it. The echo is the caller's to remove.
func (s *Session) outputLines(raw []byte, prompted bool) (lines []string, plain bool, err error) {
	if t := lastLine(raw); prompted && s.d.Prompt.MatchString(t) {
		s.prompt = t
	}
	text, err := Decode(s.encoding, raw)
	if err != nil {
		return nil, false, err
	}
	lines, plain = cleanText(text)
	if !prompted {
		if strings.TrimSpace(lines[len(lines)-1]) == "" {
			lines = lines[:len(lines)-1]
		}
		return lines, plain, nil
	}
	lines = lines[:len(lines)-1] // the prompt
	for i := 0; i < maxPromptLines && len(lines) > 0 && s.d.PromptLines != nil &&
		s.d.PromptLines.MatchString(strings.TrimSpace(lines[len(lines)-1])); i++ {
		lines = lines[:len(lines)-1]
	}
	return lines, plain, nil
}

// isEcho reports whether line is the device echoing cmd, possibly after
// the prompt it redrew.
func (s *Session) isEcho(line, cmd string) bool {
	line, cmd = strings.TrimSpace(line), strings.TrimSpace(cmd)
	rest, found := strings.CutSuffix(line, cmd)
	if !found {
		return false
	}
	rest = strings.TrimSpace(rest)
	return rest == "" || rest == s.prompt || s.d.Prompt.MatchString(rest)
}

// finish checks a command's cleaned output lines and joins them; plain
// lines (no control characters, as cleanText found) need no sanitizing.
func finish(d Dialogue, cmd string, lines []string, plain bool) (string, error) {
	for i, l := range lines {
		if plain {
			break
		}
		l, binary := sanitize(l)
		if binary {
			return "", fmt.Errorf("%s: %w", cmd, ErrBinaryOutput)
		}
		lines[i] = l
	}
	if d.CommandError != nil && nonEmpty(lines) <= maxRejectionLines &&
		slices.ContainsFunc(lines, d.CommandError.MatchString) {
		return "", fmt.Errorf("%s: %w", cmd, ErrRejected)
	}
	return strings.Join(lines, "\n"), nil
}

func nonEmpty(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

// sanitize drops the control characters text can harmlessly carry (bell,
// form feed, shift in/out, a stray escape, delete) and reports the ones
// that only binary data or line noise produce.
func sanitize(line string) (string, bool) {
	if !hasControl(line) {
		return line, false
	}
	binary := false
	line = strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || !isControl(r):
			return r
		case r == 0x07, r == 0x0b, r == 0x0c, r == 0x0e, r == 0x0f, r == 0x1b, r == 0x7f:
			return -1
		default:
			binary = true
			return -1
		}
	}, line)
	return line, binary
}

func isControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }

// hasControl is strings.ContainsFunc(line, isControl) byte by byte: the
// control characters are ASCII, and no byte of a multi-byte UTF-8
// sequence (nor an invalid byte) is below 0x80.
func hasControl(line string) bool {
	for i := 0; i < len(line); i++ {
		if c := line[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

// Execer runs one command per request, as SSH exec does, copying what it
// prints to out; an error from out.Write stops the command and is
// returned.
type Execer interface {
	Exec(ctx context.Context, cmd string, out io.Writer) error
}

// ExecSession collects with one request per command: there is no prompt,
// echo or pager to remove.
type ExecSession struct {
	e         Execer
	d         Dialogue
	maxOutput int
	encoding  string
}

// NewExecSession collects over e; maxOutput caps one command's output.
func NewExecSession(e Execer, d Dialogue, maxOutput int) *ExecSession {
	return &ExecSession{e: e, d: d, maxOutput: maxOutput, encoding: "utf-8"}
}

// SetEncoding sets the character set the device prints in.
func (s *ExecSession) SetEncoding(name string) error {
	if _, _, err := charset(name); err != nil {
		return err
	}
	s.encoding = name
	return nil
}

// Run runs cmd and returns its output decoded to UTF-8 with "\n" line
// endings.
func (s *ExecSession) Run(ctx context.Context, cmd string) (string, error) {
	w := &capWriter{max: s.maxOutput}
	err := s.e.Exec(ctx, cmd, w)
	switch {
	case errors.Is(err, ErrOutputTooLarge):
		return "", fmt.Errorf("%s: %w", cmd, ErrOutputTooLarge)
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s: %w", cmd, &wrapped{
			msg: fmt.Sprintf("%s: the command had not finished after %d bytes of output", ErrTimeout, len(w.buf)),
			err: ErrTimeout})
	case err != nil:
		return "", fmt.Errorf("%s: %w: %w", cmd, ErrClosed, err)
	}
	text, err := Decode(s.encoding, w.buf)
	if err != nil {
		return "", err
	}
	lines, plain := cleanText(text)
	return finish(s.d, cmd, lines, plain)
}

// capWriter collects output up to max bytes.
type capWriter struct {
	buf []byte
	max int
}

func (w *capWriter) Write(p []byte) (int, error) {
	if len(w.buf)+len(p) > w.max {
		return 0, ErrOutputTooLarge
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}
