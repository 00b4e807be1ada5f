package devsim

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	// errQuit ends a session normally (exit, logout).
	errQuit = errors.New("devsim: session ended")
	// errDisconnect drops the connection abruptly.
	errDisconnect = errors.New("devsim: disconnect")
	// errHung ends a session after a deliberate hang.
	errHung = errors.New("devsim: hung")
)

// Bounds on what one session will do.
const (
	maxLineLen          = 4096
	maxCommandsPerShell = 100000
	enableAttempts      = 1
)

// session is one command-line session over SSH or telnet. It runs on one
// goroutine: it reads the client's keys and writes the device's output.
type session struct {
	d    *Device
	p    *Personality
	ctx  context.Context
	in   *bufio.Reader
	out  io.Writer
	conn net.Conn // for idle deadlines
	// hang blocks until the client or the device goes away.
	hang func()

	user     string
	isExec   bool   // an SSH exec request: no prompt, no echo, no pager
	nl       string // line ending of output
	priv     bool
	config   bool
	ctxName  string // FortiOS sub-context
	paging   bool
	counter  int
	skipLF   bool
	rng      *rand.Rand
	dripUsed time.Duration

	// wmu keeps writes whole: a device message (the Junos rollback
	// broadcast) may arrive from another goroutine.
	wmu sync.Mutex
	// id and since name an interactive session's terminal; junos is its
	// Junos configuration mode.
	id    int
	since time.Time
	junos *junosEdit
	vyos  *vyosEdit
	eos   *eosEdit
	ios   *iosEdit
}

func (d *Device) newSession(ctx context.Context, in io.Reader, out io.Writer, conn net.Conn, hang func()) *session {
	return &session{
		d:      d,
		p:      &d.p,
		ctx:    ctx,
		in:     bufio.NewReaderSize(in, 1024),
		out:    out,
		conn:   conn,
		hang:   hang,
		nl:     "\r\n",
		priv:   d.p.EnableCommand == "" || d.opts.EnablePassword == "",
		paging: d.p.Pager != "",
		rng:    rand.New(rand.NewPCG(d.model.seed, uint64(d.connections.Load()))),
	}
}

// touch moves the idle deadline before waiting for the client.
func (s *session) touch() {
	if s.conn != nil {
		s.conn.SetReadDeadline(time.Now().Add(s.d.opts.IdleTimeout))
	}
}

// write sends raw bytes, a few at a time in slow-drip mode.
func (s *session) write(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.conn != nil {
		s.conn.SetWriteDeadline(time.Now().Add(s.d.opts.IdleTimeout))
	}
	if !s.d.has(FailSlowDrip) {
		s.d.writes.Add(1)
		_, err := s.out.Write(b)
		return err
	}
	for len(b) > 0 {
		k := min(1+s.rng.IntN(s.d.opts.DripChunk), len(b))
		if _, err := s.out.Write(b[:k]); err != nil {
			return err
		}
		s.d.writes.Add(1)
		b = b[k:]
		if len(b) > 0 && s.dripUsed < s.d.opts.DripBudget {
			if err := sleepCtx(s.ctx, s.d.opts.DripDelay); err != nil {
				return err
			}
			s.dripUsed += s.d.opts.DripDelay
		}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// lines converts "\n" text to the session's line ending.
func (s *session) lines(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if s.nl == "\n" {
		return text
	}
	return strings.ReplaceAll(text, "\n", s.nl)
}

// text sends personality text: line endings converted, then encoded.
func (s *session) text(t string) error {
	if t == "" {
		return nil
	}
	return s.write(s.d.enc(s.lines(s.expand(t))))
}

// plain sends device text that may hold anything (configuration
// statements, file names): line endings converted, then encoded, with no
// placeholders filled.
func (s *session) plain(t string) error {
	if t == "" {
		return nil
	}
	return s.write(s.d.enc(s.lines(t)))
}

// expand fills the {host}, {user}, {ctx}, {n} and {time} placeholders.
func (s *session) expand(t string) string {
	if !strings.Contains(t, "{") {
		return t
	}
	return strings.NewReplacer(
		"{host}", s.d.opts.Hostname,
		"{user}", s.user,
		"{ctx}", s.ctxName,
		"{n}", strconv.Itoa(s.counter+1),
		"{time}", s.d.opts.Clock().UTC().Format("2006-01-02 15:04:05"),
	).Replace(t)
}

func (s *session) promptText() string {
	switch {
	case s.config && s.junos != nil:
		return s.d.junosPendingLine() + s.expand(s.p.ConfigPrompt)
	case s.config && s.eos != nil:
		return s.eosPrompt()
	case s.config && s.ios != nil:
		return s.iosPrompt()
	case s.config:
		return s.expand(s.p.ConfigPrompt)
	case s.priv:
		return s.expand(s.p.EnablePrompt)
	default:
		return s.expand(s.p.UserPrompt)
	}
}

func (s *session) prompt() error {
	if s.p.PromptPrefix != "" {
		if err := s.write([]byte(s.p.PromptPrefix)); err != nil {
			return err
		}
	}
	return s.text(s.promptText())
}

// readLine reads one line, echoing it when echo is set (not for
// passwords). Echo is sent as the keys arrive, batched per read.
func (s *session) readLine(echo bool) (string, error) {
	var line, pending []byte
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		err := s.write(pending)
		pending = pending[:0]
		return err
	}
	for len(line) < maxLineLen {
		if s.in.Buffered() == 0 {
			if err := flush(); err != nil {
				return "", err
			}
			s.touch()
		}
		c, err := s.in.ReadByte()
		if err != nil {
			return "", err
		}
		if s.skipLF {
			s.skipLF = false
			if c == '\n' || c == 0 {
				continue
			}
		}
		switch {
		case c == '\r' || c == '\n':
			s.skipLF = c == '\r'
			if err := flush(); err != nil {
				return "", err
			}
			end := "\r\n"
			if echo {
				end = s.p.echoSuffix()
			}
			return string(line), s.write([]byte(end))
		case c == 0x08 || c == 0x7f:
			if len(line) > 0 {
				line = line[:len(line)-1]
				if echo {
					pending = append(pending, "\b \b"...)
				}
			}
		case c == 0x03: // Ctrl-C drops the line
			line = line[:0]
			if echo {
				pending = append(pending, "^C"...)
			}
		case c == 0x1a: // Ctrl-Z leaves configuration mode
			if err := flush(); err != nil {
				return "", err
			}
			return "\x1a", s.write([]byte("^Z\r\n"))
		case c >= 0x20 || c == '\t':
			line = append(line, c)
			if echo {
				pending = append(pending, c)
			}
		}
	}
	return string(line), flush()
}

// readUntilEOT reads the lines of a terminal load up to a Ctrl-D at the
// start of a line, echoing them, and echoes the Ctrl-D as "^D". Input
// beyond limit bytes is read and dropped, so that the Ctrl-D is still
// found.
func (s *session) readUntilEOT(limit int) (string, error) {
	var all, line, pending []byte
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		err := s.write(pending)
		pending = pending[:0]
		return err
	}
	for {
		if s.in.Buffered() == 0 {
			if err := flush(); err != nil {
				return "", err
			}
			s.touch()
		}
		c, err := s.in.ReadByte()
		if err != nil {
			return "", err
		}
		if s.skipLF {
			s.skipLF = false
			if c == '\n' || c == 0 {
				continue
			}
		}
		switch {
		case c == 0x04 && len(line) == 0:
			if err := flush(); err != nil {
				return "", err
			}
			return string(all), s.write([]byte("^D"))
		case c == '\r' || c == '\n':
			s.skipLF = c == '\r'
			if len(all)+len(line) < limit {
				all = append(append(all, line...), '\n')
			}
			line = line[:0]
			pending = append(pending, "\r\n"...)
		case c == 0x08 || c == 0x7f:
			if len(line) > 0 {
				line = line[:len(line)-1]
				pending = append(pending, "\b \b"...)
			}
		case c >= 0x20 || c == '\t':
			if len(line) < maxLineLen*16 {
				line = append(line, c)
				pending = append(pending, c)
			}
		}
	}
}

// readKey waits for one key press (pager, "press any key").
func (s *session) readKey() (byte, error) {
	for i := 0; i < 2; i++ {
		if s.in.Buffered() == 0 {
			s.touch()
		}
		c, err := s.in.ReadByte()
		if err != nil {
			return 0, err
		}
		if s.skipLF && (c == '\n' || c == 0) {
			s.skipLF = false
			continue
		}
		s.skipLF = c == '\r'
		return c, nil
	}
	return '\n', nil
}

// runShell is the interactive command line after login.
func (s *session) runShell() error {
	s.d.addShell(s)
	defer s.d.removeShell(s)
	if err := s.text(s.p.MOTD); err != nil {
		return err
	}
	if s.p.PressAnyKey != "" {
		if err := s.text(s.p.PressAnyKey); err != nil {
			return err
		}
		if _, err := s.readKey(); err != nil {
			return err
		}
		if err := s.text("\n"); err != nil {
			return err
		}
	}
	for i := 0; i < maxCommandsPerShell; i++ {
		if err := s.prompt(); err != nil {
			return err
		}
		line, err := s.readLine(true)
		if err != nil {
			return err
		}
		if err := s.handle(line); err != nil {
			return err
		}
	}
	return errQuit
}

// handle runs one command line in the shell; the device hangs up after
// it when the line matches Options.DisconnectAfter.
func (s *session) handle(line string) error {
	err := s.handleLine(line)
	if re := s.d.opts.DisconnectAfter; err == nil && re != nil && re.MatchString(strings.TrimSpace(line)) {
		return errDisconnect
	}
	return err
}

func (s *session) handleLine(line string) error {
	cmd := strings.TrimSpace(line)
	if cmd == "" {
		return nil
	}
	s.d.commands.Add(1)
	s.counter++
	p := s.p

	switch p.Platform {
	case "juniper_junos":
		if handled, err := s.junosLine(cmd); handled {
			return err
		}
	case "vyos":
		if handled, err := s.vyosLine(cmd); handled {
			return err
		}
	case "arista_eos":
		// Indentation is kept: it places a line in its mode.
		if handled, err := s.eosLine(line); handled {
			return err
		}
	case "cisco_ios", "cisco_nxos":
		if handled, err := s.iosLine(line); handled {
			return err
		}
	}
	if s.config {
		if cmd == "\x1a" {
			s.config = false
			return nil
		}
		if _, ok := findCommand(p, cmd, p.ConfigExit); ok {
			s.config = false
			return s.text(p.ConfigExitReply)
		}
		if strings.HasPrefix(cmd, "do ") {
			return s.exec(strings.TrimPrefix(cmd, "do "))
		}
		if re := s.d.opts.RejectLines; re != nil && re.MatchString(cmd) {
			return s.invalid(cmd)
		}
		// Configuration lines are accepted without comment.
		return nil
	}
	if cmd == "\x1a" {
		return nil
	}
	if name, ok := p.Contexts[strings.Join(strings.Fields(cmd), " ")]; ok {
		s.ctxName = name
		return nil
	}
	if s.ctxName != "" && (cmd == "end" || cmd == "abort") {
		s.ctxName = ""
		return nil
	}
	if _, ok := findCommand(p, cmd, p.ExitCommands); ok {
		return errQuit
	}
	if p.EnableCommand != "" {
		if _, ok := findCommand(p, cmd, []string{p.EnableCommand}); ok {
			return s.enable()
		}
	}
	if _, ok := findCommand(p, cmd, p.ConfigEnter); ok {
		if p.ConfigNeedsPrivilege && !s.priv {
			return s.invalid(cmd)
		}
		s.config = true
		return s.text(p.ConfigEnterReply)
	}
	return s.exec(cmd)
}

// exec answers an exec-mode command: paging settings, fixed replies,
// configuration and version commands. Exec requests use it directly.
func (s *session) exec(cmd string) error {
	p := s.p
	switch p.Platform {
	case "cisco_xe":
		if handled, err := s.xeExec(cmd); handled {
			return err
		}
	case "mikrotik_routeros":
		if handled, err := s.rosExec(cmd); handled {
			return err
		}
	}
	if c, ok := findCommand(p, cmd, p.PagingOff); ok {
		if !s.d.has(FailEndlessPager) {
			s.paging = false
		}
		return s.text(p.Replies[c])
	}
	for c, reply := range p.Replies {
		if matchWords(strings.Fields(cmd), strings.Fields(c), p.Abbreviations) {
			return s.text(reply)
		}
	}
	// A file (scp:<path>) is not a command: only SCP gets it.
	if c, ok := findCommand(p, cmd, p.ConfigCommands); ok && !isFileCommand(c) {
		if p.ConfigNeedsPrivilege && !s.priv {
			return s.invalid(cmd)
		}
		text, _ := s.d.Show(cmd)
		return s.output(text, true)
	}
	if _, ok := findCommand(p, cmd, p.VersionCommands); ok {
		return s.output(s.d.versionText(), false)
	}
	return s.invalid(cmd)
}

// errUnknownCommand marks an exec request that got the platform's error.
var errUnknownCommand = errors.New("devsim: unknown command")

// invalid prints the platform's error for an unknown command, with the
// caret under the first word it does not know.
func (s *session) invalid(cmd string) error {
	words := strings.Fields(cmd)
	bad, offset := words[0], strings.Index(cmd, words[0])
	if len(words) > 1 && s.knownVerb(words[0]) {
		bad = words[1]
		offset = strings.Index(cmd[len(words[0]):], words[1]) + len(words[0])
	}
	caret := s.caretAt(offset)
	msg := strings.NewReplacer("{caret}", caret, "{cmd}", cmd, "{word}", bad).Replace(s.p.InvalidInput)
	if err := s.text(msg); err != nil {
		return err
	}
	if s.isExec {
		return errUnknownCommand
	}
	return nil
}

// caretAt is a line with a '^' under position offset of the command
// just typed, behind the prompt.
func (s *session) caretAt(offset int) string {
	if s.isExec {
		return strings.Repeat(" ", offset) + "^"
	}
	prompt := s.promptText()
	if i := strings.LastIndex(prompt, "\n"); i >= 0 {
		prompt = prompt[i+1:]
	}
	return strings.Repeat(" ", len([]rune(prompt))+offset) + "^"
}

func (s *session) knownVerb(w string) bool {
	for _, list := range [][]string{s.p.ConfigCommands, s.p.VersionCommands, s.p.PagingOff} {
		for _, c := range list {
			f := strings.Fields(c)
			if len(f) > 1 && matchWords([]string{w}, f[:1], s.p.Abbreviations) {
				return true
			}
		}
	}
	return false
}

// enable runs the enable / super dialogue.
func (s *session) enable() error {
	if s.priv {
		return nil
	}
	for i := 0; i < enableAttempts; i++ {
		if err := s.text(s.p.EnablePasswordPrompt); err != nil {
			return err
		}
		pw, err := s.readLine(false)
		if err != nil {
			return err
		}
		if pw == s.d.opts.EnablePassword {
			s.priv = true
			return s.text(s.p.EnableReply)
		}
	}
	return s.text(s.p.EnableFailed)
}

// output sends a command's answer: paged when the pager is on, with the
// failure modes that act on output applied.
func (s *session) output(text string, isConfig bool) error {
	failMid := isConfig && (s.d.has(FailHangMidOutput) || s.d.has(FailDisconnectMidOutput))
	if failMid {
		text = text[:len(text)/2]
	}
	var err error
	if s.paging && s.p.Pager != "" && !s.isExec {
		err = s.paged(text)
	} else {
		err = s.chunk(text)
	}
	if err != nil || !failMid {
		return err
	}
	if s.d.has(FailDisconnectMidOutput) {
		return errDisconnect
	}
	s.hang()
	return errHung
}

// chunk sends a piece of output, with garbage interleaved in that mode.
func (s *session) chunk(text string) error {
	if text == "" {
		return nil
	}
	b := s.d.enc(s.lines(text))
	if s.d.has(FailGarbage) {
		b = s.garble(b)
	}
	return s.write(b)
}

// garble interleaves runs of random binary bytes (never CR, LF, ESC or
// backspace, so the line structure survives) every few hundred bytes.
func (s *session) garble(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/20+8)
	for i := 0; i < len(b); {
		k := min(16+s.rng.IntN(240), len(b)-i)
		out = append(out, b[i:i+k]...)
		i += k
		for j := 1 + s.rng.IntN(4); j > 0; j-- {
			if s.rng.IntN(2) == 0 {
				out = append(out, byte(0x80+s.rng.IntN(0x7f)))
			} else {
				out = append(out, byte(s.rng.IntN(8)))
			}
		}
	}
	return out
}

// paged shows text a screen at a time. Space shows the next screen, Enter
// one more line, q or Ctrl-C stops. With FailEndlessPager the text starts
// over when it ends and keys that stop are ignored, up to EndlessPages.
func (s *session) paged(text string) error {
	all := strings.SplitAfter(text, "\n")
	if all[len(all)-1] == "" {
		all = all[:len(all)-1]
	}
	endless := s.d.has(FailEndlessPager)
	per := s.p.pageLines() - 1
	step := per
	next := 0
	for pages := 0; ; pages++ {
		if endless && pages >= s.d.opts.EndlessPages {
			return errDisconnect
		}
		var page strings.Builder
		for k := 0; k < step && (next < len(all) || endless); k++ {
			if next >= len(all) {
				next = 0
			}
			page.WriteString(all[next])
			next++
		}
		if err := s.chunk(page.String()); err != nil {
			return err
		}
		if next >= len(all) && !endless {
			return nil
		}
		if err := s.write([]byte(s.p.Pager)); err != nil {
			return err
		}
		key, err := s.readKey()
		if err != nil {
			return err
		}
		if err := s.write([]byte(s.p.PagerErase)); err != nil {
			return err
		}
		switch {
		case (key == 'q' || key == 'Q' || key == 0x03) && !endless:
			return nil
		case key == '\r' || key == '\n':
			step = 1
		default:
			step = per
		}
	}
}
