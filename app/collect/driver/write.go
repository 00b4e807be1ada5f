package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Writing to a device: configuration lines sent one after another, the
// questions some commands ask, and a block of text typed in one go (a
// whole configuration after Junos's "load override terminal").
//
// A read command ends at the prompt learned at login; any other line that
// looks like a prompt only counts once the device has been quiet for
// quietPeriod, as a configuration can hold such lines. Writing changes
// the prompt on purpose and often ("R1#" → "R1(config)#" →
// "R1(config-router)#"), and a restore sends hundreds of lines: waiting
// 400 ms at each change would dominate it. So after a line is sent, a
// last line that matches the platform's Prompt and is a variant of the
// learned prompt (the same device name, another mode) ends the output at
// once, provided the echo of the line has ended (a newline came). This is
// no weaker than the learned prompt ending a show command at once: both
// trust a whole last line shaped like this device's prompt, and the
// output of a configuration line is short. A prompt that is not a variant
// (the hostname itself changed) still ends the output after quietPeriod,
// and becomes the learned prompt.

// Errors of the write session.
var (
	// ErrQuestion: the device asked a question again after it got every
	// answer allowed for it.
	ErrQuestion = errors.New("the device asked the same question again after its answers")
	// ErrUnencodable: a line holds a character the device's character set
	// has no code for.
	ErrUnencodable = errors.New("the line holds a character the device's character set cannot represent")
	// ErrControl: a line holds a control character (only a block's end
	// bytes may).
	ErrControl = errors.New("the line holds a control character")
)

// maxStemStrip bounds the opening marks removed before a prompt's name
// ("<", "[", "[~").
const maxStemStrip = 3

// promptStem is the part of a prompt that names the device: after at most
// maxStemStrip opening marks, the leading run of letters, digits and
// _ . - @ /. "R1(config-if)#" → "R1", "admin@vmx1#" → "admin@vmx1",
// "vyos@vyos:~$" → "vyos@vyos", "[~HUAWEI-GigabitEthernet0/0/1]" →
// "HUAWEI-GigabitEthernet0/0/1".
func promptStem(p string) string {
	for i := 0; i < maxStemStrip && p != "" && strings.IndexByte("<[({~*!", p[0]) >= 0; i++ {
		p = p[1:]
	}
	end := 0
	for end < len(p) && isNameByte(p[end]) {
		end++
	}
	return p[:end]
}

func isNameByte(c byte) bool {
	return isAlnum(c) || strings.IndexByte("_.-@/", c) >= 0
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isVariant reports whether tail is the learned prompt in another mode:
// its name starts with the learned prompt's name, followed by nothing or
// by a mark that is not part of a longer name ("R1(config)#" and
// "[HUAWEI-ospf-1]" are variants of "R1#" and "<HUAWEI>"; "R10#" is not a
// variant of "R1#"). A name shorter than two characters is too weak a
// sign: such prompts wait for quiet as before.
func (s *Session) isVariant(tail string) bool {
	learned := promptStem(s.normPrompt(s.prompt))
	if len(learned) < 2 {
		return false
	}
	rest, ok := strings.CutPrefix(promptStem(s.normPrompt(tail)), learned)
	return ok && (rest == "" || !isAlnum(rest[0]) && rest[0] != '_')
}

// askedAgain reports a question whose answer was given as often as
// allowed and that is asked once more.
func (s *Session) askedAgain(tail string, answers []Answer, answered []int) bool {
	for i, a := range answers {
		limit := maxAnswers
		if a.sendsCredential() {
			limit = 1
		}
		if answered[i] >= limit && a.Match.MatchString(tail) {
			return true
		}
	}
	return false
}

// readyLine looks for a line matching ready after the first line (the
// echo), in the complete lines not searched yet and in the last one.
func (s *Session) readyLine(out []byte, scanned *int, ready *regexp.Regexp) bool {
	first := bytes.IndexByte(out, '\n')
	if first < 0 {
		return false
	}
	start := max(*scanned, first+1)
	end := bytes.LastIndexByte(out, '\n')
	if end >= start {
		for _, l := range clean(out[start : end+1]) {
			if ready.MatchString(strings.TrimSpace(l)) {
				return true
			}
		}
		*scanned = end + 1
	}
	return ready.MatchString(lastLine(out))
}

// QuietEnds is how many reads of the session a prompt ended only after
// the device had been quiet for the quiet period (400 ms): the cost a
// write session is built to avoid.
func (s *Session) QuietEnds() int { return s.quietEnds }

// closedErr marks a failed write as a lost session: the caller must tell
// it apart from a device that refused a line.
func closedErr(err error) error {
	if errors.Is(err, ErrClosed) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrClosed, err)
}

// Line sends one line and returns what the device printed for it, up to
// its prompt, which may have changed: without the echo, the prompt and
// the PromptLines above it, decoded and cleaned as a command's output.
// Questions on the way are answered from answers, each at most three
// times (a credential once); a question asked again after that fails with
// ErrQuestion rather than waiting for the timeout. Nothing decides here
// whether the device accepted the line: that is the caller's reading of
// the output. No error holds the line.
func (s *Session) Line(ctx context.Context, line string, answers []Answer) ([]string, error) {
	b, err := s.encode(line)
	if err != nil {
		return nil, err
	}
	if _, err := s.conn.Write(append(b, s.d.LineEnd...)); err != nil {
		return nil, fmt.Errorf("send a line: %w", closedErr(err))
	}
	raw, _, err := s.read(ctx, readMode{answers: answers, limit: s.maxOutput, write: true})
	if err != nil {
		return nil, err
	}
	defer releaseRead(raw)
	lines, err := s.writeOutput(raw, true)
	if err != nil {
		return nil, err
	}
	if len(lines) > 0 && s.isEcho(lines[0], line) {
		lines = lines[1:]
	}
	return lines, nil
}

// Expect sends one line and reads until a line of the output matches
// ready (the device's invitation to type a block: Junos's "[Type ^D at a
// new line to end input]"), or the prompt comes back instead (the device
// refused the line: prompted is true). The lines returned are the output
// up to that point (the invitation included) without the echo.
func (s *Session) Expect(ctx context.Context, line string, ready *regexp.Regexp) (lines []string, prompted bool, err error) {
	b, err := s.encode(line)
	if err != nil {
		return nil, false, err
	}
	if _, err := s.conn.Write(append(b, s.d.LineEnd...)); err != nil {
		return nil, false, fmt.Errorf("send a line: %w", closedErr(err))
	}
	raw, end, err := s.read(ctx, readMode{limit: s.maxOutput, write: true, ready: ready})
	if err != nil {
		return nil, false, err
	}
	defer releaseRead(raw)
	lines, err = s.writeOutput(raw, end == endPrompt)
	if err != nil {
		return nil, false, err
	}
	if len(lines) > 0 && s.isEcho(lines[0], line) {
		lines = lines[1:]
	}
	return lines, end == endPrompt, nil
}

// textChunk is how much of a block one write sends.
const textChunk = 16 << 10

// Text types lines, each followed by the line end, then end byte for byte
// (Ctrl-D, 0x04, ends Junos's terminal input), and returns what the
// device printed up to its prompt, without its echo of the lines and of
// end (dropEndEcho), so that a refusal quotes the device's answer. The
// block is sent from a goroutine while the echo is read: a device echoes
// as it reads, and a block larger than the buffers between the two would
// otherwise leave both sides waiting. When Text fails the block may be
// half sent, and the device waits for the rest: Text closes the
// connection (conn must be an io.Closer), and the session is over.
func (s *Session) Text(ctx context.Context, lines []string, end []byte) ([]string, error) {
	closer, ok := s.conn.(io.Closer)
	if !ok {
		return nil, errors.New("driver: sending a block needs a connection that can be closed")
	}
	var block []byte
	for _, l := range lines {
		b, err := s.encode(l)
		if err != nil {
			return nil, err
		}
		block = append(append(block, b...), s.d.LineEnd...)
	}
	block = append(block, end...)
	sent := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var err error
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("driver: sending a block panicked: %v", r)
			}
			sent <- err
		}()
		for b := block; len(b) > 0 && err == nil; {
			n := min(len(b), textChunk)
			_, err = s.conn.Write(b[:n])
			b = b[n:]
		}
	}()
	// The echo comes on top of what the device says itself.
	raw, _, err := s.read(ctx, readMode{limit: s.maxOutput + 2*len(block), write: true, writing: sent})
	if err != nil {
		// A sender still writing fails at once on the closed connection.
		_ = closer.Close()
		<-finished
		return nil, err
	}
	<-finished
	defer releaseRead(raw)
	out, err := s.writeOutput(raw, true)
	if err != nil {
		return nil, err
	}
	return dropEndEcho(dropEcho(out, lines), end), nil
}

// dropEndEcho removes the device's echo of end from out: a terminal
// echoes control bytes in caret notation (Junos prints "^D" for the
// Ctrl-D that ends its terminal input), at the start of the line after
// the echoed block, on a line of its own or right before the device's
// first answer ("^Dload complete"). Only that first caret echo goes;
// what follows it on its line is the device's and stays.
func dropEndEcho(out []string, end []byte) []string {
	echo := caretEcho(end)
	if echo == "" {
		return out
	}
	for i, l := range out {
		rest, ok := strings.CutPrefix(strings.TrimLeft(l, " \t"), echo)
		if !ok {
			continue
		}
		if strings.TrimSpace(rest) == "" {
			return append(out[:i], out[i+1:]...)
		}
		out[i] = rest
		return out
	}
	return out
}

// caretEcho is how a terminal echoes end: control bytes in caret
// notation (0x04 as "^D", 0x7f as "^?"), other bytes as they are; ""
// for an end of no control byte, which is echoed (if at all) as text the
// caller sent and is left alone.
func caretEcho(end []byte) string {
	var b strings.Builder
	control := false
	for _, c := range end {
		switch {
		case c < 0x20:
			control = true
			b.WriteByte('^')
			b.WriteByte(c + '@')
		case c == 0x7f:
			control = true
			b.WriteString("^?")
		default:
			b.WriteByte(c)
		}
	}
	if !control {
		return ""
	}
	return b.String()
}

// dropEcho removes the device's echo of sent from out: the lines equal
// to the sent ones, in their order, once each.
func dropEcho(out, sent []string) []string {
	kept := out[:0]
	next := 0
	for _, l := range out {
		if next < len(sent) && strings.TrimSpace(l) == strings.TrimSpace(sent[next]) {
			next++
			continue
		}
		kept = append(kept, l)
	}
	return kept
}

// writeOutput is outputLines with the control characters checked: binary
// bytes in the answer to a write are an error, as in a command's output.
func (s *Session) writeOutput(raw []byte, prompted bool) ([]string, error) {
	lines, plain, err := s.outputLines(raw, prompted)
	if err != nil {
		return nil, err
	}
	if plain {
		return lines, nil
	}
	for i, l := range lines {
		l, binary := sanitize(l)
		if binary {
			return nil, ErrBinaryOutput
		}
		lines[i] = l
	}
	return lines, nil
}

// encode turns a line into the device's character set. A line must not
// hold a control character other than tab (a carriage return would end
// it early, Ctrl-Z leave configuration mode) nor a character the set
// cannot represent: the single-byte sets write those as Ctrl-Z.
func (s *Session) encode(line string) ([]byte, error) {
	for i := 0; i < len(line); i++ {
		if c := line[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return nil, ErrControl
		}
	}
	if !utf8.ValidString(line) {
		return nil, ErrUnencodable
	}
	cs, sb, err := charset(s.encoding)
	switch {
	case err != nil:
		return nil, err
	case sb != nil:
		b := sb.Encode(line)
		if sb.Decode(b) != line {
			return nil, ErrUnencodable
		}
		return b, nil
	case cs != nil:
		b, err := cs.NewEncoder().Bytes([]byte(line))
		if err != nil {
			return nil, ErrUnencodable
		}
		return b, nil
	}
	return []byte(line), nil
}
