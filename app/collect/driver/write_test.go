package driver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPromptVariant(t *testing.T) {
	for _, c := range []struct {
		learned, tail string
		want          bool
	}{
		{"R1#", "R1(config)#", true},
		{"R1(config)#", "R1(config-router)#", true},
		{"R1(config-if)#", "R1#", true},
		{"admin@vmx1>", "admin@vmx1#", true},
		{"vyos@vyos:~$", "vyos@vyos#", true},
		{"<HUAWEI>", "[HUAWEI]", true},
		{"<HUAWEI>", "[~HUAWEI-GigabitEthernet0/0/1]", true},
		{"RP/0/RSP0/CPU0:XR-PE1#", "RP/0/RSP0/CPU0:XR-PE1(config)#", true},
		{"R1#", "R10#", false},
		{"R1#", "R1_b#", false},
		{"R1#", "R2(config)#", false},
		{"R1#", "hostname R1", false},
		{"r#", "r(config)#", false}, // too short a name to trust
		{"", "R1#", false},
	} {
		s := &Session{prompt: c.learned}
		if got := s.isVariant(c.tail); got != c.want {
			t.Errorf("isVariant(%q after %q) = %v, want %v", c.tail, c.learned, got, c.want)
		}
	}
}

// modeDevice is a scripted IOS-like command line over TCP with the modes
// a restore walks through, each with its own prompt, and a few commands
// that ask questions or take a block of text.
type modeDevice struct {
	conn net.Conn
	r    *bufio.Reader
	host string
	mode string // "", "config", "config-if", "config-router"

	mu  sync.Mutex
	got []string // the lines received outside blocks; answers as "answer:…"
}

func (d *modeDevice) record(l string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, l)
}

func (d *modeDevice) received() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.got...)
}

const invalid = "                ^\r\n% Invalid input detected at '^' marker.\r\n\r\n"

func (d *modeDevice) prompt() string {
	if d.mode == "" {
		return d.host + "#"
	}
	return d.host + "(" + d.mode + ")#"
}

func (d *modeDevice) write(s string) { _, _ = d.conn.Write([]byte(s)) }

// line reads one line and echoes it.
func (d *modeDevice) line() (string, bool) {
	l, err := d.r.ReadString('\n')
	if err != nil {
		return "", false
	}
	l = strings.TrimRight(l, "\r\n")
	d.write(l + "\r\n")
	return l, true
}

func (d *modeDevice) serve() {
	defer d.conn.Close()
	d.write("\r\n" + d.prompt())
	for range 10000 {
		cmd, ok := d.line()
		if !ok {
			return
		}
		d.record(cmd)
		switch f := strings.Fields(cmd); {
		case len(f) == 0:
		case cmd == "configure terminal":
			d.mode = "config"
			d.write("Enter configuration commands, one per line.  End with CNTL/Z.\r\n")
		case cmd == "end":
			d.mode = ""
		case cmd == "exit" && d.mode == "config":
			d.mode = ""
		case cmd == "exit" && d.mode != "":
			d.mode = "config"
		case f[0] == "interface" && d.mode != "":
			d.mode = "config-if"
		case f[0] == "router" && d.mode != "":
			d.mode = "config-router"
		case f[0] == "hostname" && len(f) == 2 && d.mode != "":
			d.host = f[1]
		case cmd == "copy running-config startup-config":
			d.write("Destination filename [startup-config]? ")
			a, ok := d.line()
			if !ok {
				return
			}
			d.record("answer:" + a)
			d.write("Building configuration...\r\n[OK]\r\n")
		case cmd == "nag":
			for range 10 {
				d.write("Are you sure? [yes/no]: ")
				a, ok := d.line()
				if !ok {
					return
				}
				d.record("answer:" + a)
			}
		case cmd == "load override terminal":
			d.write("[Type ^D at a new line to end input]\r\n")
			if !d.block() {
				return
			}
			d.write("load complete\r\n")
		case cmd == "drop":
			return
		case d.mode == "":
			d.write(invalid)
		}
		d.write(d.prompt())
	}
}

// block reads and echoes lines until Ctrl-D at the start of one.
func (d *modeDevice) block() bool {
	for range 1 << 20 {
		c, err := d.r.ReadByte()
		if err != nil {
			return false
		}
		if c == 0x04 {
			return true
		}
		_ = d.r.UnreadByte()
		if _, ok := d.line(); !ok {
			return false
		}
	}
	return false
}

func modeSession(t *testing.T) (*Session, *modeDevice) {
	t.Helper()
	client, server := tcpPair(t)
	// Small socket buffers, as over a slow link: a block larger than them
	// stalls unless its echo is read while it is sent.
	for _, c := range []net.Conn{client, server} {
		tc := c.(*net.TCPConn)
		if err := tc.SetReadBuffer(16 << 10); err != nil {
			t.Fatal(err)
		}
		if err := tc.SetWriteBuffer(16 << 10); err != nil {
			t.Fatal(err)
		}
	}
	dev := &modeDevice{conn: server, r: bufio.NewReader(server), host: "R1"}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); dev.serve() }()
	t.Cleanup(func() { client.Close(); wg.Wait() })
	s := NewSession(client, Dialogue{Prompt: ciscoPrompt, CommandError: ciscoError}, 1<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if s.Prompt() != "R1#" {
		t.Fatalf("prompt %q", s.Prompt())
	}
	return s, dev
}

// TestLineFollowsModes: every mode change a configuration walks through
// ends the line's output at once (no read waits for the device to fall
// quiet); a prompt that is not a variant of the learned one (a new
// hostname) is still taken, after the quiet period, and learned.
func TestLineFollowsModes(t *testing.T) {
	s, _ := modeSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, step := range []struct{ line, out, prompt string }{
		{"configure terminal", "Enter configuration commands, one per line.  End with CNTL/Z.", "R1(config)#"},
		{"interface Gi0/1", "", "R1(config-if)#"},
		{" description uplink #1", "", "R1(config-if)#"},
		{"exit", "", "R1(config)#"},
		{"router bgp 65000", "", "R1(config-router)#"},
		{"end", "", "R1#"},
		{"configure terminal", "Enter configuration commands, one per line.  End with CNTL/Z.", "R1(config)#"},
	} {
		lines, err := s.Line(ctx, step.line, nil)
		if err != nil {
			t.Fatalf("%q: %v", step.line, err)
		}
		if got := strings.Join(lines, "\n"); got != step.out || s.Prompt() != step.prompt {
			t.Fatalf("%q: output %q, prompt %q; want %q, %q", step.line, got, s.Prompt(), step.out, step.prompt)
		}
	}
	if n := s.QuietEnds(); n != 0 {
		t.Fatalf("%d reads waited for the device to fall quiet", n)
	}
	if _, err := s.Line(ctx, "hostname R9", nil); err != nil {
		t.Fatal(err)
	}
	if s.Prompt() != "R9(config)#" || s.QuietEnds() != 1 {
		t.Fatalf("after a new hostname: prompt %q, %d quiet ends; want R9(config)#, 1", s.Prompt(), s.QuietEnds())
	}
	if _, err := s.Line(ctx, "interface Gi0/2", nil); err != nil || s.Prompt() != "R9(config-if)#" || s.QuietEnds() != 1 {
		t.Fatalf("then: prompt %q, %d quiet ends, %v", s.Prompt(), s.QuietEnds(), err)
	}
	// The read path is unchanged: a show command ending in another mode's
	// prompt waits for quiet, as it always did.
	if _, err := s.Run(ctx, "end"); err != nil || s.Prompt() != "R9#" || s.QuietEnds() != 2 {
		t.Fatalf("Run: prompt %q, %d quiet ends, %v", s.Prompt(), s.QuietEnds(), err)
	}
}

// TestLineAnswers: a question is answered; one asked again after its
// answers fails at once with ErrQuestion; a rejected line comes back as
// output for the caller to judge.
func TestLineAnswers(t *testing.T) {
	s, dev := modeSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	answer := []Answer{{Match: regexp.MustCompile(`\[startup-config\]\?$`), Send: "\n"}}
	lines, err := s.Line(ctx, "copy running-config startup-config", answer)
	if err != nil || strings.Join(lines, "|") != "|Building configuration...|[OK]" {
		t.Fatalf("copy: %q, %v", lines, err)
	}
	lines, err = s.Line(ctx, "show nothing", nil)
	if err != nil || !anyLine(ciscoError, lines) {
		t.Fatalf("rejected line: %q, %v", lines, err)
	}
	yes := []Answer{{Match: regexp.MustCompile(`\[yes/no\]:$`), Send: "yes\n"}}
	start := len(dev.received())
	if _, err := s.Line(ctx, "nag", yes); !errors.Is(err, ErrQuestion) {
		t.Fatalf("nag: %v, want ErrQuestion", err)
	}
	// The device asked a fourth time after reading the third answer.
	if got := dev.received()[start:]; strings.Join(got, "|") != "nag|answer:yes|answer:yes|answer:yes" {
		t.Errorf("the device received %q", got)
	}
	if s.QuietEnds() != 0 {
		t.Errorf("%d quiet ends", s.QuietEnds())
	}
}

func anyLine(re *regexp.Regexp, lines []string) bool {
	for _, l := range lines {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// TestTextBlock: a block much larger than the socket buffers, echoed line
// by line by the device, goes through without either side stalling; the
// echo is removed from what comes back.
func TestTextBlock(t *testing.T) {
	s, dev := modeSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ready := regexp.MustCompile(`^\[Type \^D at a new line to end input\]$`)
	if lines, prompted, err := s.Expect(ctx, "show nothing", ready); err != nil || !prompted || !anyLine(ciscoError, lines) {
		t.Fatalf("refused Expect: %q, %v, %v", lines, prompted, err)
	}
	lines, prompted, err := s.Expect(ctx, "load override terminal", ready)
	if err != nil || prompted || strings.Join(lines, "|") != "[Type ^D at a new line to end input]" {
		t.Fatalf("Expect: %q, prompted %v, %v", lines, prompted, err)
	}
	var block []string
	for i := 0; len(block) < 3000; i++ {
		block = append(block, fmt.Sprintf("interfaces { ge-0/0/%d { description \"link %d of a long block\"; } }", i, i))
	}
	start := len(dev.received())
	out, err := s.Text(ctx, block, []byte{0x04})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out, "|"); got != "load complete" {
		t.Fatalf("output %q", got[:min(len(got), 300)])
	}
	if s.Prompt() != "R1#" || s.QuietEnds() != 0 {
		t.Errorf("prompt %q, %d quiet ends", s.Prompt(), s.QuietEnds())
	}
	if _, err := s.Line(ctx, "configure terminal", nil); err != nil || s.Prompt() != "R1(config)#" {
		t.Fatalf("after the block: %q, %v", s.Prompt(), err)
	}
	if n := len(dev.received()) - start; n != 1 {
		t.Errorf("the device saw %d commands after the block, want 1", n)
	}
}

// TestDropEndEcho: the echo of the Ctrl-D that ends a block goes, on a
// line of its own or glued to the device's first answer, and every line
// of the device's own stays.
func TestDropEndEcho(t *testing.T) {
	for _, c := range []struct {
		name string
		out  []string
		end  []byte
		want string
	}{
		{"glued to the answer", []string{"^Dterminal:4:(13) syntax error: host-name", "load complete (1 errors)"}, []byte{0x04},
			"terminal:4:(13) syntax error: host-name|load complete (1 errors)"},
		{"a line of its own", []string{"^D", "error: syntax error", "load complete (1 errors)"}, []byte{0x04},
			"error: syntax error|load complete (1 errors)"},
		{"not echoed", []string{"load complete"}, []byte{0x04}, "load complete"},
		{"only the first", []string{"^D", "^D is what ended it"}, []byte{0x04}, "^D is what ended it"},
		{"no control byte", []string{"END", "ok"}, []byte("END"), "END|ok"},
		{"no end", []string{"^Dok"}, nil, "^Dok"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := strings.Join(dropEndEcho(c.out, c.end), "|"); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestWriteLost: a connection the device drops is ErrClosed, for the line
// that lost it and every line after.
func TestWriteLost(t *testing.T) {
	s, _ := modeSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Line(ctx, "drop", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("drop: %v", err)
	}
	var err error
	for range 5 { // a write may still land in the socket buffer once
		if _, err = s.Line(ctx, "end", nil); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("after the drop: %v", err)
	}
}

// TestWriteRefusesUnsendable: control characters and characters the
// device's set cannot hold are refused before anything is sent.
func TestWriteRefusesUnsendable(t *testing.T) {
	s, dev := modeSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.SetEncoding("latin-1"); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"end\rreload", "description \x1a", "description 5€", "bad \xff"} {
		if _, err := s.Line(ctx, line, nil); err == nil || strings.Contains(err.Error(), "description") {
			t.Errorf("%q: err %v", line, err)
		}
	}
	if _, err := s.Text(ctx, []string{"ok", "no\x04"}, nil); err == nil {
		t.Error("a block with a control character was sent")
	}
	if _, err := s.Line(ctx, "configure terminal", nil); err != nil {
		t.Fatal(err)
	}
	if got := dev.received(); len(got) != 2 || got[1] != "configure terminal" {
		t.Fatalf("the device received %q", got)
	}
}

// TestLineJunosModes: Junos's configuration mode prints "[edit]" on a
// line above its prompt; the prompt's mode mark changes (> to #), which
// ends each line at once, and "[edit]" is not output.
func TestLineJunosModes(t *testing.T) {
	s := scripted(t, "juniper_junos", "\r\n--- JUNOS 21.4R3.15 Kernel 64-bit\r\nadmin@vmx1> ",
		step{"set cli screen-length 0\n", "set cli screen-length 0 \r\nScreen length set to 0\r\n\r\nadmin@vmx1> "},
		step{"set cli screen-width 0\n", "set cli screen-width 0 \r\nScreen width set to 0\r\n\r\nadmin@vmx1> "},
		step{"configure private\n", "configure private \r\nwarning: uncommitted changes will be discarded on exit\r\nEntering configuration mode\r\n\r\n[edit]\r\nadmin@vmx1# "},
		step{"set system host-name vmx1\n", "set system host-name vmx1 \r\n\r\n[edit]\r\nadmin@vmx1# "},
		step{"set bogus\n", "set bogus \r\n        ^\r\nsyntax error.\r\n\r\n[edit]\r\nadmin@vmx1# "},
		step{"exit configuration-mode\n", "exit configuration-mode \r\nExiting configuration mode\r\n\r\nadmin@vmx1> "},
	)
	ctx := testCtx(t)
	if err := s.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ line, out, prompt string }{
		{"configure private", "warning: uncommitted changes will be discarded on exit|Entering configuration mode", "admin@vmx1#"},
		{"set system host-name vmx1", "", "admin@vmx1#"},
		{"set bogus", "        ^|syntax error.", "admin@vmx1#"},
		{"exit configuration-mode", "Exiting configuration mode", "admin@vmx1>"},
	} {
		lines, err := s.Line(ctx, c.line, nil)
		if got := strings.TrimRight(strings.Join(lines, "|"), "|"); err != nil || got != c.out || s.Prompt() != c.prompt {
			t.Fatalf("%q: %q, %v, prompt %q; want %q, %q", c.line, got, err, s.Prompt(), c.out, c.prompt)
		}
	}
	if n := s.QuietEnds(); n != 0 {
		t.Errorf("%d reads waited for quiet", n)
	}
}
