package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"time"
)

// Conn is the interactive stream a session talks over; the SSH and telnet
// transports provide it.
type Conn interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	SetReadDeadline(t time.Time) error
}

// Dialogue is how a platform's command line behaves.
type Dialogue struct {
	// Prompt matches a command prompt, tested against the last line of
	// output (cleaned of escapes), e.g. `^[\w.-]+[>#]$`.
	Prompt *regexp.Regexp
	// Pager matches a pager prompt on the last line, e.g. `--More--`.
	Pager *regexp.Regexp
	// PagerAnswer is sent to a pager prompt (default " ").
	PagerAnswer string
	// PagingOff are sent once after login; their output is ignored.
	PagingOff []string
	// Enable raises privilege ("enable", "super"); empty when the login
	// lands in privileged mode.
	Enable string
	// Privileged matches a prompt that needs no Enable.
	Privileged *regexp.Regexp
	// PasswordPrompt matches the enable password question.
	PasswordPrompt *regexp.Regexp
	// LineEnd ends every command (default "\n").
	LineEnd string
}

// Errors a session reports; callers classify failures by them.
var (
	ErrTimeout        = errors.New("timed out waiting for the device")
	ErrOutputTooLarge = errors.New("device output exceeds the size limit")
	ErrEnable         = errors.New("enable failed: the enable password was rejected or is missing")
)

// quietPeriod is how long a line that merely looks like a prompt (but is
// not the prompt learned at login) must stand with no more output before
// it counts as one; a configuration line ending in '#' must not end a
// command early.
const quietPeriod = 400 * time.Millisecond

// Session drives one device's command line.
type Session struct {
	conn      Conn
	d         Dialogue
	prompt    string // the exact prompt, learned after login and enable
	maxOutput int
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
	return &Session{conn: conn, d: d, maxOutput: maxOutput}
}

// Prompt is the prompt learned so far.
func (s *Session) Prompt() string { return s.prompt }

// lastLine is the cleaned text after the last newline of raw.
func lastLine(raw []byte) string {
	i := bytes.LastIndexByte(raw, '\n')
	lines := CleanLines(raw[i+1:])
	return strings.TrimSpace(lines[len(lines)-1])
}

// readToPrompt reads until a prompt ends the output, answering pagers on
// the way, and returns everything read before and including the prompt.
func (s *Session) readToPrompt(ctx context.Context) ([]byte, error) {
	var out []byte
	buf := make([]byte, 32*1024)
	var candidateSince time.Time
	for {
		if len(out) > 0 {
			tail := lastLine(out)
			switch {
			case s.prompt != "" && tail == s.prompt:
				return out, nil
			case s.d.Pager != nil && s.d.Pager.MatchString(tail):
				out = out[:bytes.LastIndexByte(out, '\n')+1]
				if _, err := s.conn.Write([]byte(s.d.PagerAnswer)); err != nil {
					return out, fmt.Errorf("answer pager: %w", err)
				}
				candidateSince = time.Time{}
			case s.d.Prompt.MatchString(tail):
				if candidateSince.IsZero() {
					candidateSince = time.Now()
				} else if time.Since(candidateSince) >= quietPeriod {
					return out, nil
				}
			default:
				candidateSince = time.Time{}
			}
		}
		if len(out) > s.maxOutput {
			return out, ErrOutputTooLarge
		}
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("%w (last output: %q)", ErrTimeout, truncate(lastLine(out), 80))
		}
		step := time.Now().Add(100 * time.Millisecond)
		if dl, ok := ctx.Deadline(); ok && dl.Before(step) {
			step = dl
		}
		if err := s.conn.SetReadDeadline(step); err != nil {
			return out, err
		}
		n, err := s.conn.Read(buf)
		out = append(out, buf[:n]...)
		if n > 0 {
			candidateSince = time.Time{}
		}
		if err != nil && !isTimeout(err) {
			return out, fmt.Errorf("read: %w", err)
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Start waits for the first prompt after login, raises privilege with
// enablePassword when the platform needs it, and turns paging off.
func (s *Session) Start(ctx context.Context, enablePassword string) error {
	out, err := s.readToPrompt(ctx)
	if err != nil {
		return fmt.Errorf("waiting for the first prompt: %w", err)
	}
	s.prompt = lastLine(out)
	if s.d.Enable != "" && (s.d.Privileged == nil || !s.d.Privileged.MatchString(s.prompt)) {
		if err := s.enable(ctx, enablePassword); err != nil {
			return err
		}
	}
	for _, cmd := range s.d.PagingOff {
		if _, err := s.Run(ctx, cmd); err != nil {
			return fmt.Errorf("turning paging off (%s): %w", cmd, err)
		}
	}
	return nil
}

func (s *Session) enable(ctx context.Context, password string) error {
	if _, err := s.conn.Write([]byte(s.d.Enable + s.d.LineEnd)); err != nil {
		return err
	}
	s.prompt = "" // the prompt changes; learn it again
	buf := make([]byte, 4096)
	var out []byte
	sentPassword := false
	for {
		tail := lastLine(out)
		if s.d.PasswordPrompt != nil && s.d.PasswordPrompt.MatchString(tail) {
			if sentPassword {
				return ErrEnable
			}
			if _, err := s.conn.Write([]byte(password + s.d.LineEnd)); err != nil {
				return err
			}
			sentPassword = true
			out = nil
			continue
		}
		if s.d.Prompt.MatchString(tail) {
			if s.d.Privileged != nil && !s.d.Privileged.MatchString(tail) {
				return ErrEnable
			}
			s.prompt = tail
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrEnable, ErrTimeout)
		}
		step := time.Now().Add(100 * time.Millisecond)
		if dl, ok := ctx.Deadline(); ok && dl.Before(step) {
			step = dl
		}
		_ = s.conn.SetReadDeadline(step)
		n, err := s.conn.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil && !isTimeout(err) {
			return fmt.Errorf("enable: read: %w", err)
		}
	}
}

// Run sends one command and returns its output: no echo, no prompt, no
// pager debris, "\n" line endings.
func (s *Session) Run(ctx context.Context, cmd string) (string, error) {
	if _, err := s.conn.Write([]byte(cmd + s.d.LineEnd)); err != nil {
		return "", fmt.Errorf("send %q: %w", cmd, err)
	}
	raw, err := s.readToPrompt(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w", cmd, err)
	}
	lines := CleanLines(raw)
	last := strings.TrimSpace(lines[len(lines)-1])
	if s.prompt == "" || s.d.Prompt.MatchString(last) {
		s.prompt = last
	}
	lines = lines[:len(lines)-1] // the prompt
	if len(lines) > 0 && strings.HasSuffix(strings.TrimSpace(lines[0]), strings.TrimSpace(cmd)) {
		lines = lines[1:] // the echo
	}
	return strings.Join(lines, "\n"), nil
}
