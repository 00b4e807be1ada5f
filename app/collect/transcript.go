package collect

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"backupd/app/collect/transport"
)

// Transcript records what a session sent and received, for an operator
// trying a platform definition against a device, or for the record of a
// restore. It is bounded: past Max bytes it records nothing more and says
// so. The passwords of the target are replaced by Mask wherever they
// appear in what Segments returns, and every line goes through MaskLine;
// the recorded bytes themselves never leave the process.
type Transcript struct {
	// Max bounds the recorded bytes (0 = DefaultTranscriptMax).
	Max int
	// MaskLine, when set, masks the configuration secrets of one line
	// (the device's redact masker): every line of what Segments returns,
	// sent, received or noted, goes through it. A line the transport
	// delivered in pieces is put together first, so a secret split
	// between two reads is masked whole. It is called with the
	// transcript's lock held, never concurrently.
	MaskLine func(line string) string

	mu        sync.Mutex
	segs      []rawSegment
	size      int
	truncated bool
	secrets   []string
	block     *heldBlock
}

// heldBlock is the state of a block of text being sent (Shell.SendText):
// what is written is not recorded (a note counts the lines), and what the
// device prints is held until the block ends, without the device's echo
// of the block: the lines equal to the sent ones, in their order, are
// dropped as they arrive, so the echo of a large block takes no room.
type heldBlock struct {
	sent    []string
	next    int    // the sent line whose echo comes next
	echoed  int    // lines of echo dropped
	partial []byte // the line being received
	kept    []byte // the rest, up to the transcript's bound
	dropped bool   // kept reached the bound
}

// take holds back what the device printed during a block; at the end,
// the unfinished line too.
func (b *heldBlock) take(p []byte, limit int, end bool) {
	b.partial = append(b.partial, p...)
	for len(b.partial) > 0 {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 && !end {
			return
		}
		line := b.partial
		if i >= 0 {
			line = b.partial[:i+1]
		}
		b.partial = b.partial[len(line):]
		if b.next < len(b.sent) && strings.TrimSpace(string(line)) == strings.TrimSpace(b.sent[b.next]) {
			b.next++
			b.echoed++
			continue
		}
		if room := limit - len(b.kept); room < len(line) {
			line, b.dropped = line[:max(room, 0)], true
		}
		b.kept = append(b.kept, line...)
	}
	b.partial = nil
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
	t.mu.Lock()
	defer t.mu.Unlock()
	if b := t.block; b != nil {
		if !sent {
			b.take(p, t.max(), false)
		}
		return
	}
	t.addLocked(kind, p)
}

func (t *Transcript) max() int {
	if t.Max <= 0 {
		return DefaultTranscriptMax
	}
	return t.Max
}

func (t *Transcript) add(kind string, p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addLocked(kind, p)
}

func (t *Transcript) addLocked(kind string, p []byte) {
	if len(p) == 0 {
		return
	}
	max := t.max()
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

// beginBlock starts holding back a block of text being sent.
func (t *Transcript) beginBlock(sent []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.block = &heldBlock{sent: sent}
}

// endBlock records a block of text as a note of its size and what the
// device printed meanwhile, without its echo. Call it once nothing writes
// any more; with nothing written (the block was refused before it was
// sent), it records nothing.
func (t *Transcript) endBlock(written bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.block
	t.block = nil
	if b == nil || !written {
		return
	}
	b.take(nil, t.max(), true)
	t.addLocked(SegmentNote, fmt.Appendf(nil, "[sent %d lines]\n", len(b.sent)))
	t.addLocked(SegmentReceived, b.kept)
	if b.echoed > 0 {
		t.addLocked(SegmentNote, fmt.Appendf(nil, "[the device's echo of %d lines is not recorded]\n", b.echoed))
	}
	if b.dropped {
		t.truncated = true
	}
}

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
	// With MaskLine, a line a segment ends without finishing moves to the
	// next segment of its kind, whole lines are masked.
	carry := map[string][]byte{}
	for i, s := range t.segs {
		b := s.b
		if t.MaskLine != nil {
			b = append(append([]byte(nil), carry[s.kind]...), b...)
			carry[s.kind] = nil
			if t.moreOf(s.kind, i+1) {
				cut := bytes.LastIndexByte(b, '\n') + 1
				b, carry[s.kind] = b[:cut], b[cut:]
			}
			if len(b) == 0 {
				continue
			}
			b = t.maskLines(b)
		}
		out = append(out, Segment{Kind: s.kind, Text: t.maskLocked(visible(b))})
	}
	return out, t.truncated
}

// moreOf reports a segment of kind at from or after.
func (t *Transcript) moreOf(kind string, from int) bool {
	for _, s := range t.segs[from:] {
		if s.kind == kind {
			return true
		}
	}
	return false
}

// maskLines runs MaskLine on every line of b, without its "\r\n" or "\n".
func (t *Transcript) maskLines(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i+1]
		}
		b = b[len(line):]
		text := string(line)
		end := ""
		for _, e := range []string{"\r\n", "\n"} {
			if strings.HasSuffix(text, e) {
				text, end = strings.TrimSuffix(text, e), e
				break
			}
		}
		out = append(append(out, t.maskLine(text)...), end...)
	}
	return out
}

// maxPromptPrefix bounds the prompt maskLine looks for before a line.
const maxPromptPrefix = 80

// maskLine is MaskLine for a line that may start with the device's
// prompt: a device prints the echo of a line sent after its prompt
// ("R1(config)#snmp-server community …"), and a rule that matches from a
// line's start would not see it. So the rest after a prompt-like start
// (no spaces, ending in # > $ % or ]) is masked on its own as well.
func (t *Transcript) maskLine(line string) string {
	m := t.MaskLine(line)
	for k := 0; k < min(len(m), maxPromptPrefix); k++ {
		c := m[k]
		if c == ' ' || c == '\t' {
			break
		}
		if strings.IndexByte("#>$%]", c) < 0 {
			continue
		}
		rest := strings.TrimLeft(m[k+1:], " ")
		if masked := t.MaskLine(rest); masked != rest {
			return m[:len(m)-len(rest)] + masked
		}
	}
	return m
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
