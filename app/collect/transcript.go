package collect

import (
	"context"
	"io"
	"strings"
	"sync"
	"time"

	"backupd/app/collect/transport"
)

// Transcript records what a session sent and received, for an operator
// trying a platform definition against a device. It is bounded: past Max
// bytes it records nothing more and says so. The passwords of the target
// are replaced by Mask wherever they appear in what Segments returns; the
// recorded bytes themselves never leave the process.
type Transcript struct {
	// Max bounds the recorded bytes (0 = DefaultTranscriptMax).
	Max int

	mu        sync.Mutex
	segs      []rawSegment
	size      int
	truncated bool
	secrets   []string
}

// DefaultTranscriptMax is the default bound of a transcript.
const DefaultTranscriptMax = 256 << 10

// Mask replaces a password in a transcript.
const Mask = "********"

// Segment is a run of bytes in one direction.
type Segment struct {
	// Kind is SegmentSent (by backupd), SegmentReceived (from the
	// device) or SegmentNote (what backupd did below the stream: the SSH
	// login, an exec request).
	Kind string
	Text string
}

// Kinds of Segment.
const (
	SegmentSent     = "sent"
	SegmentReceived = "received"
	SegmentNote     = "note"
)

type rawSegment struct {
	kind string
	b    []byte
}

func (t *Transcript) record(sent bool, p []byte) {
	kind := SegmentReceived
	if sent {
		kind = SegmentSent
	}
	t.add(kind, p)
}

func (t *Transcript) add(kind string, p []byte) {
	if len(p) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	max := t.Max
	if max <= 0 {
		max = DefaultTranscriptMax
	}
	if t.size+len(p) > max {
		p = p[:max-t.size]
		t.truncated = true
	}
	if len(p) == 0 {
		return
	}
	t.size += len(p)
	if n := len(t.segs); n > 0 && t.segs[n-1].kind == kind {
		t.segs[n-1].b = append(t.segs[n-1].b, p...)
		return
	}
	t.segs = append(t.segs, rawSegment{kind: kind, b: append([]byte(nil), p...)})
}

// note records a line of backupd's own (an exec request, the SSH login,
// which happens below the stream).
func (t *Transcript) note(s string) { t.add(SegmentNote, []byte(s)) }

func (t *Transcript) setSecrets(secrets ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range secrets {
		if s != "" {
			t.secrets = append(t.secrets, s)
		}
	}
	// The longest first, so that a password holding another is masked
	// whole.
	for i := 1; i < len(t.secrets); i++ {
		for j := i; j > 0 && len(t.secrets[j]) > len(t.secrets[j-1]); j-- {
			t.secrets[j], t.secrets[j-1] = t.secrets[j-1], t.secrets[j]
		}
	}
}

// Segments returns the transcript as text (invalid UTF-8 and control
// bytes other than newline and tab shown as escapes), with the passwords
// masked, and whether it was cut at Max.
func (t *Transcript) Segments() ([]Segment, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Segment, 0, len(t.segs))
	for _, s := range t.segs {
		out = append(out, Segment{Kind: s.kind, Text: t.maskLocked(visible(s.b))})
	}
	return out, t.truncated
}

// MaskSecrets replaces the target's passwords in s (the captured text
// shown beside the transcript).
func (t *Transcript) MaskSecrets(s string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.maskLocked(s)
}

func (t *Transcript) maskLocked(s string) string {
	for _, secret := range t.secrets {
		s = strings.ReplaceAll(s, secret, Mask)
	}
	return s
}

// visible shows b as text: CR LF as a line end, other control bytes and
// invalid UTF-8 as escapes (\r, \x1b), so terminal sequences show rather
// than act.
func visible(b []byte) string {
	var sb strings.Builder
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
			sb.WriteRune(r)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == 0xFFFD && (len(s) < i+3 || s[i:i+3] != "\uFFFD"):
			sb.WriteString(`\x` + hex2(s[i]))
		case r < 0x20 || r == 0x7f:
			sb.WriteString(`\x` + hex2(byte(r)))
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

func hex2(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}

// recordingConn records a transport stream. It keeps the bytes a telnet
// login hands back (Unread) itself, so they are recorded once.
type recordingConn struct {
	transport.Conn
	t       *Transcript
	pending []byte
}

func (c *recordingConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	n, err := c.Conn.Read(p)
	c.t.record(false, p[:n])
	return n, err
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.t.record(true, p)
	return c.Conn.Write(p)
}

func (c *recordingConn) SetReadDeadline(d time.Time) error {
	return c.Conn.SetReadDeadline(d)
}

// Unread gives back bytes already read (and recorded) to be read again.
func (c *recordingConn) Unread(b []byte) {
	c.pending = append(append([]byte(nil), b...), c.pending...)
}

// recordingExec records exec requests and their output.
type recordingExec struct {
	e interface {
		Exec(ctx context.Context, cmd string, out io.Writer) error
	}
	t *Transcript
}

func (r recordingExec) Exec(ctx context.Context, cmd string, out io.Writer) error {
	r.t.note("[exec] " + cmd + "\n")
	return r.e.Exec(ctx, cmd, io.MultiWriter(recordingWriter{r.t}, out))
}

type recordingWriter struct{ t *Transcript }

func (w recordingWriter) Write(p []byte) (int, error) {
	w.t.record(false, p)
	return len(p), nil
}
