package collect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/app/collect/driver"
	"backupd/app/collect/transport"
	"backupd/app/devsim"
	"backupd/app/redact"
	"backupd/app/secret"
)

// openShell runs OpenShell, failing the test if it does not return within
// hangGuard; the shell is closed at cleanup.
func openShell(t *testing.T, tg Target) (*Shell, error) {
	t.Helper()
	type result struct {
		s   *Shell
		err error
	}
	done := make(chan result, 1)
	go func() { s, err := OpenShell(context.Background(), tg); done <- result{s, err} }()
	select {
	case r := <-done:
		if r.s != nil {
			t.Cleanup(func() { r.s.Close() })
		}
		return r.s, r.err
	case <-time.After(hangGuard):
		t.Fatalf("OpenShell(%s %s) did not return within %s", tg.Platform, tg.Method, hangGuard)
		return nil, nil
	}
}

func mustOpen(t *testing.T, tg Target) *Shell {
	t.Helper()
	s, err := openShell(t, tg)
	if err != nil {
		t.Fatalf("OpenShell: %v (reason %s)", err, Reason(err))
	}
	return s
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

// TestShellConfigures logs in to a simulated IOS device over SSH and
// telnet, through its enable password, enters configuration mode, sends
// configuration lines, leaves, and reads the configuration back: every
// line ends at its prompt at once (no read waited for the device to fall
// quiet), and the device saw each line exactly once.
func TestShellConfigures(t *testing.T) {
	for _, method := range []string{"ssh", "telnet"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			d := startDevice(t, devsim.Options{Platform: "cisco_ios", EnablePassword: enablePassword})
			s := mustOpen(t, target(t, d, method))
			switch {
			case method == "ssh" && !bytes.Equal(s.HostKey(), d.HostKey().Marshal()):
				t.Error("the host key is not the device's")
			case method == "telnet" && s.HostKey() != nil:
				t.Error("telnet returned a host key")
			}
			if s.Prompt() != "R1#" {
				t.Fatalf("prompt after login %q", s.Prompt())
			}
			ctx := testCtx(t)
			before := d.Stats().Commands
			out, err := s.Send(ctx, "configure terminal", nil)
			if err != nil || out != "Enter configuration commands, one per line.  End with CNTL/Z." || s.Prompt() != "R1(config)#" {
				t.Fatalf("configure terminal: %q, %v, prompt %q", out, err, s.Prompt())
			}
			const lines = 40
			for i := range lines {
				if out, err := s.Send(ctx, fmt.Sprintf("interface Loopback%d", i), nil); err != nil || out != "" {
					t.Fatalf("line %d: %q, %v", i, out, err)
				}
			}
			if _, err := s.Send(ctx, "end", nil); err != nil || s.Prompt() != "R1#" {
				t.Fatalf("end: %v, prompt %q", err, s.Prompt())
			}
			if n := d.Stats().Commands - before; n != lines+2 {
				t.Errorf("the device handled %d commands, want %d", n, lines+2)
			}
			if n := s.sess.QuietEnds(); n != 0 {
				t.Errorf("%d reads waited %s for quiet", n, "400ms")
			}
			text, err := s.Run(ctx, "show running-config")
			if err != nil || !strings.Contains(text, "hostname R1") || strings.HasSuffix(text, "\n") {
				t.Fatalf("show running-config: %d bytes, %v", len(text), err)
			}
			if want, _ := d.LastOutput("show running-config"); !strings.Contains(want, text[len(text)-200:]) {
				t.Error("Run's output is not the device's configuration")
			}
		})
	}
}

// TestShellModes: sub-mode prompts (config-if, config-router) end every
// line at once and Prompt follows them.
func TestShellModes(t *testing.T) {
	r := startModeRouter(t)
	s := mustOpen(t, r.target(t))
	ctx := testCtx(t)
	for _, step := range []struct{ line, prompt string }{
		{"configure terminal", "R1(config)#"},
		{"interface GigabitEthernet0/1", "R1(config-if)#"},
		{" description uplink", "R1(config-if)#"},
		{"exit", "R1(config)#"},
		{"router bgp 65000", "R1(config-router)#"},
		{" neighbor 192.0.2.1 remote-as 65001", "R1(config-router)#"},
		{"end", "R1#"},
	} {
		if _, err := s.Send(ctx, step.line, nil); err != nil || s.Prompt() != step.prompt {
			t.Fatalf("%q: %v, prompt %q, want %q", step.line, err, s.Prompt(), step.prompt)
		}
	}
	if n := s.sess.QuietEnds(); n != 0 {
		t.Errorf("%d reads waited for quiet", n)
	}
}

// TestShellDialog: a question is answered and the command completes; a
// question asked again after its answers fails at once, as a protocol
// error, not as a rejected line.
func TestShellDialog(t *testing.T) {
	r := startModeRouter(t)
	tr := &Transcript{}
	tg := r.target(t)
	tg.Transcript = tr
	s := mustOpen(t, tg)
	ctx := testCtx(t)
	sure := []driver.Answer{{Match: regexp.MustCompile(`Enter Y if you are sure you want to proceed\. \? \[no\]:$`), Send: "Y\n"}}
	out, err := s.Dialog(ctx, "configure replace flash:restore.cfg", sure, nil)
	if err != nil || !strings.HasSuffix(out, "Total number of passes: 1\nRollback Done") {
		t.Fatalf("configure replace: %q, %v", out, err)
	}
	if got := r.received(); got[len(got)-1] != "answer:Y" {
		t.Errorf("the device's last line was %q, want the answer Y", got[len(got)-1])
	}
	confirm := []driver.Answer{{Match: regexp.MustCompile(`\[confirm\]$`), Send: "y\n"}}
	start := time.Now()
	_, err = s.Dialog(ctx, "nag", confirm, nil)
	var lineErr *LineError
	if !errors.Is(err, driver.ErrQuestion) || Reason(err) != ReasonProtocol || errors.As(err, &lineErr) || errors.Is(err, driver.ErrClosed) {
		t.Fatalf("nag: %v (reason %s)", err, Reason(err))
	}
	if took := time.Since(start); took > tg.Timeouts.Command {
		t.Errorf("the repeated question took %s: it waited for the timeout", took)
	}
	if n := strings.Count(strings.Join(r.received(), "\n"), "answer:y"); n != 3 {
		t.Errorf("the question was answered %d times, want 3", n)
	}
	if _, err := s.Dialog(ctx, "nag", []driver.Answer{{Send: "y"}}, nil); err == nil {
		t.Error("an answer without a question was taken")
	}
}

// TestShellText: a block is typed after the device's invitation, ended by
// a raw Ctrl-D; the transcript notes its size instead of its lines, and
// the device's echo of them; an error line in the answer is a LineError
// that names the block, not its lines.
func TestShellText(t *testing.T) {
	r := startModeRouter(t)
	tr := &Transcript{}
	tg := r.target(t)
	tg.Transcript = tr
	s := mustOpen(t, tg)
	ctx := testCtx(t)
	ready := regexp.MustCompile(`^\[Type \^D at a new line to end input\]$`)
	junosErr := regexp.MustCompile(`^error:`)
	const secretLine = "system { root-authentication { encrypted-password \"$6$Bl0ck-Secr3t\"; } }"
	block := "system { host-name r1; }\n" + secretLine + "\ninterfaces { lo0 { unit 0; } }\n"
	out, err := s.Expect(ctx, "load override terminal", ready, junosErr)
	if err != nil || out != "[Type ^D at a new line to end input]" {
		t.Fatalf("Expect: %q, %v", out, err)
	}
	out, err = s.SendText(ctx, block, []byte{0x04}, junosErr)
	if err != nil || out != "load complete" {
		t.Fatalf("SendText: %q, %v", out, err)
	}
	if _, err := s.Expect(ctx, "load override terminal", ready, junosErr); err != nil {
		t.Fatal(err)
	}
	out, err = s.SendText(ctx, "bogus\n"+secretLine, []byte{0x04}, junosErr)
	var lineErr *LineError
	if !errors.As(err, &lineErr) || !errors.Is(err, driver.ErrRejected) || out != "error: syntax error: bogus\nload complete (1 errors)" {
		t.Fatalf("a refused block: %q, %v", out, err)
	}
	if msg := err.Error(); msg != "the device rejected the text of 2 lines: error: syntax error: bogus" {
		t.Errorf("message %q", msg)
	}
	// A block larger than the transcript: its echo takes no room.
	if _, err := s.Expect(ctx, "load override terminal", ready, junosErr); err != nil {
		t.Fatal(err)
	}
	var large strings.Builder
	for i := 0; large.Len() <= DefaultTranscriptMax; i++ {
		fmt.Fprintf(&large, "interfaces { ge-0/0/%d { description \"a line of a large block\"; } }\n", i)
	}
	if out, err := s.SendText(ctx, large.String(), []byte{0x04}, junosErr); err != nil || out != "load complete" {
		t.Fatalf("a large block: %q, %v", out, err)
	}
	// The invitation not given: the prompt came back.
	_, err = s.Expect(ctx, "show nothing", ready, nil)
	if !errors.As(err, &lineErr) || lineErr.Line != "show nothing" {
		t.Fatalf("Expect refused: %v", err)
	}
	// Raw control bytes only in end.
	if _, err := s.SendText(ctx, "a\x1ab", nil, nil); !errors.Is(err, driver.ErrControl) || errors.Is(err, driver.ErrClosed) {
		t.Fatalf("a control byte in the text: %v", err)
	}
	if _, err := s.Send(ctx, "end\rreload", nil); !errors.Is(err, driver.ErrControl) {
		t.Fatalf("a control byte in a line: %v", err)
	}
	if _, err := s.Send(ctx, "configure terminal", nil); err != nil || s.Prompt() != "R1(config)#" {
		t.Fatalf("after the refusals: %v, %q", err, s.Prompt())
	}
	segs, truncated := tr.Segments()
	if truncated {
		t.Error("the transcript was cut: the echo of the large block took room")
	}
	var all, notes strings.Builder
	for _, seg := range segs {
		all.WriteString(seg.Text)
		if seg.Kind == SegmentNote {
			notes.WriteString(seg.Text)
		}
	}
	if strings.Contains(all.String(), "Bl0ck-Secr3t") || strings.Contains(all.String(), "host-name r1") {
		t.Errorf("the transcript holds the block:\n%s", all.String())
	}
	for _, want := range []string{"[sent 3 lines]", "[the device's echo of 3 lines is not recorded]", "[sent 2 lines]"} {
		if !strings.Contains(notes.String(), want) {
			t.Errorf("the transcript's notes lack %q:\n%s", want, notes.String())
		}
	}
	if n := strings.Count(all.String(), "load complete\n"); n != 2 {
		t.Errorf("the transcript shows %d answers \"load complete\", want 2", n)
	}
}

// TestShellLineError: a line the device rejects comes back with its
// output and a *LineError naming the line, secrets masked, and the
// device's first error line; a caller's pattern replaces the platform's.
func TestShellLineError(t *testing.T) {
	d := startDevice(t, devsim.Options{Platform: "cisco_ios"})
	s := mustOpen(t, target(t, d, "ssh"))
	ctx := testCtx(t)
	out, err := s.Send(ctx, "show nonsense", nil)
	var lineErr *LineError
	if !errors.As(err, &lineErr) || !errors.Is(err, driver.ErrRejected) || errors.Is(err, driver.ErrClosed) {
		t.Fatalf("show nonsense: %v", err)
	}
	if !strings.Contains(out, "% Invalid input detected at '^' marker.") || lineErr.Output != out || lineErr.Line != "show nonsense" {
		t.Errorf("output %q, error %+v", out, lineErr)
	}
	if msg := err.Error(); msg != "the device rejected `show nonsense`: % Invalid input detected at '^' marker." {
		t.Errorf("message %q", msg)
	}
	const hash = "$1$mERr$hx5rVt7rPNoS4wqbXKX7m0"
	line := "username admin secret 5 " + hash
	_, err = s.Send(ctx, line, nil)
	if !errors.As(err, &lineErr) || lineErr.Line != line {
		t.Fatalf("%v", err)
	}
	if msg := err.Error(); strings.Contains(msg, hash) || !strings.Contains(msg, "username admin secret 5 <secret>") {
		t.Errorf("message %q", msg)
	}
	// The caller's pattern: the banner of configuration mode is an error.
	_, err = s.Send(ctx, "configure terminal", regexp.MustCompile(`^Enter configuration`))
	if !errors.As(err, &lineErr) || s.Prompt() != "R1(config)#" {
		t.Fatalf("caller's pattern: %v", err)
	}
	// In configuration mode the device accepts everything silently.
	if _, err := s.Send(ctx, line, nil); err != nil {
		t.Fatalf("accepted line: %v", err)
	}
}

// TestShellSessionLost: a device that drops the connection during a
// line, or goes away between lines, gives errors that match
// driver.ErrClosed and are not rejections, for every call after too.
func TestShellSessionLost(t *testing.T) {
	for _, method := range []string{"ssh", "telnet"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			d := startDevice(t, devsim.Options{Platform: "cisco_ios", Failures: []devsim.Failure{devsim.FailDisconnectMidOutput}})
			s := mustOpen(t, target(t, d, method))
			ctx := testCtx(t)
			if _, err := s.Send(ctx, "configure terminal", nil); err != nil {
				t.Fatal(err)
			}
			_, err := s.Send(ctx, "do show running-config", nil)
			var lineErr *LineError
			if !errors.Is(err, driver.ErrClosed) || errors.As(err, &lineErr) || Reason(err) != ReasonProtocol {
				t.Fatalf("dropped mid-line: %v (reason %s)", err, Reason(err))
			}
			if !strings.Contains(err.Error(), "the device closed the connection while sending a line; whether the device applied it is unknown") {
				t.Errorf("message %q", err)
			}
			for _, call := range []func() error{
				func() error { _, err := s.Send(ctx, "end", nil); return err },
				func() error { _, err := s.Run(ctx, "show version"); return err },
			} {
				if err := call(); !errors.Is(err, driver.ErrClosed) {
					t.Errorf("after the drop: %v", err)
				}
			}
		})
	}
	t.Run("device gone", func(t *testing.T) {
		t.Parallel()
		d := startDevice(t, devsim.Options{Platform: "cisco_ios"})
		s := mustOpen(t, target(t, d, "ssh"))
		ctx := testCtx(t)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Send(ctx, "configure terminal", nil); !errors.Is(err, driver.ErrClosed) {
			t.Fatalf("after the device went away: %v", err)
		}
		if err := s.Upload(ctx, "flash:x.cfg", []byte("x"), 0); !errors.Is(err, driver.ErrClosed) {
			t.Fatalf("upload after the device went away: %v", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		t.Parallel()
		d := startDevice(t, devsim.Options{Platform: "cisco_ios"})
		s := mustOpen(t, target(t, d, "ssh"))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Send(testCtx(t), "end", nil); !errors.Is(err, driver.ErrClosed) {
			t.Fatalf("after Close: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
}

// TestShellUpload writes a file to the simulated device over SCP beside
// the open shell; the transcript says what was written, never the data.
// Telnet has no SCP; the device's refusal is quoted; paths are checked.
func TestShellUpload(t *testing.T) {
	d := startDevice(t, devsim.Options{Platform: "cisco_ios"})
	tr := &Transcript{}
	tg := target(t, d, "ssh")
	tg.Transcript = tr
	s := mustOpen(t, tg)
	ctx := testCtx(t)
	data := []byte("hostname R1\nsnmp-server community Upl0ad-Secr3t RO\nend\n")
	if err := s.Upload(ctx, "flash:restore.cfg", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok := d.File("flash:restore.cfg"); !ok || !bytes.Equal(got, data) {
		t.Fatalf("the device kept %q, %v", got, ok)
	}
	if _, err := s.Send(ctx, "configure terminal", nil); err != nil {
		t.Fatalf("the shell after the upload: %v", err)
	}
	segs, _ := tr.Segments()
	var all strings.Builder
	for _, seg := range segs {
		all.WriteString(seg.Text)
	}
	if strings.Contains(all.String(), "Upl0ad-Secr3t") || !strings.Contains(all.String(), fmt.Sprintf("[scp] scp -t flash:restore.cfg\n[scp] sent %d bytes\n", len(data))) {
		t.Errorf("transcript:\n%s", all.String())
	}

	big := bytes.Repeat([]byte("snmp-server community Upl0ad-Secr3t RO\n"), devsim.MaxUpload/30)
	err := s.Upload(ctx, "flash:big.cfg", big, 0)
	var refused *transport.SCPError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "upload to `flash:big.cfg`: the device refused the file: scp: flash:big.cfg: No space left on device") {
		t.Fatalf("too large for the device: %v", err)
	}
	if strings.Contains(err.Error(), "Upl0ad-Secr3t") {
		t.Errorf("the error quotes the data: %v", err)
	}
	for _, c := range []struct{ path, want string }{
		{"flash:", "must end in a file name"},
		{"a b.cfg", "unusable scp path"},
		{"x;reload", "unusable scp path"},
	} {
		if err := s.Upload(ctx, c.path, data, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v", c.path, err)
		}
	}
	if err := s.Upload(ctx, "flash:huge.cfg", make([]byte, transport.MaxSCPUpload+1), 0); !errors.Is(err, transport.ErrFileTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := s.Send(ctx, "end", nil); err != nil {
		t.Fatalf("the shell after the refusals: %v", err)
	}

	ts := mustOpen(t, target(t, d, "telnet"))
	if err := ts.Upload(ctx, "flash:restore.cfg", data, 0); err == nil || !strings.Contains(err.Error(), "needs ssh") {
		t.Errorf("over telnet: %v", err)
	}
}

// TestShellTranscriptMasks: with the device's redact masker as MaskLine,
// a secret in a line sent, in the device's echo of it (after its prompt)
// and in the configuration it prints never appears in the transcript,
// nor does the login password.
func TestShellTranscriptMasks(t *testing.T) {
	d := startDevice(t, devsim.Options{Platform: "cisco_ios", EnablePassword: enablePassword})
	key := make([]byte, 32)
	key[0] = 1
	sealer, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	masker := redact.NewKeyring(sealer).Device(7, "cisco_ios")
	tr := &Transcript{MaskLine: masker.Text}
	tg := target(t, d, "ssh")
	tg.Transcript = tr
	s := mustOpen(t, tg)
	ctx := testCtx(t)
	const community = "Sent-Secr3t-Community"
	for _, line := range []string{"configure terminal", "snmp-server community " + community + " RO", "end"} {
		if _, err := s.Send(ctx, line, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Run(ctx, "show running-config"); err != nil {
		t.Fatal(err)
	}
	segs, _ := tr.Segments()
	var sent, received strings.Builder
	for _, seg := range segs {
		switch seg.Kind {
		case SegmentSent:
			sent.WriteString(seg.Text)
		case SegmentReceived:
			received.WriteString(seg.Text)
		}
	}
	for _, secret := range append(d.Secrets(), community, loginPassword, enablePassword) {
		if strings.Contains(sent.String(), secret) || strings.Contains(received.String(), secret) {
			t.Errorf("the transcript shows %q", secret)
		}
	}
	mark := masker.Mark(community)
	if !strings.Contains(sent.String(), "snmp-server community "+mark+" RO") ||
		!strings.Contains(received.String(), "R1(config)#snmp-server community "+mark+" RO") {
		t.Errorf("the masked line is missing:\nsent:\n%s\nreceived:\n%s", sent.String(), received.String())
	}
}

// TestTranscriptMaskJoinsPieces: a line that reached the transcript in
// pieces, with other records between them, is masked whole.
func TestTranscriptMaskJoinsPieces(t *testing.T) {
	tr := &Transcript{MaskLine: func(l string) string {
		return regexp.MustCompile(`^(snmp-server community )\S+`).ReplaceAllString(l, "${1}<secret>")
	}}
	tr.record(false, []byte("R1(config)#"))
	tr.record(true, []byte("snmp-server community Spl1t-Secr3t RO\n"))
	tr.record(false, []byte("snmp-server comm"))
	tr.note("[a note]\n")
	tr.record(false, []byte("unity Spl1t-Se"))
	tr.record(true, []byte(" "))
	tr.record(false, []byte("cr3t RO\r\nR1(config)#"))
	segs, _ := tr.Segments()
	var all strings.Builder
	for _, seg := range segs {
		all.WriteString(seg.Kind + ": " + seg.Text + "\n")
	}
	if strings.Contains(all.String(), "Spl1t") || strings.Count(all.String(), "snmp-server community <secret> RO") != 2 {
		t.Errorf("segments:\n%s", all.String())
	}
}

// TestOpenShellLoginFailures: a login that fails is an *Error classified
// as Collect's.
func TestOpenShellLoginFailures(t *testing.T) {
	d := startDevice(t, devsim.Options{Platform: "cisco_ios", EnablePassword: enablePassword})
	other := startDevice(t, devsim.Options{Platform: "cisco_ios", Hostname: "R2"})
	for _, c := range []struct {
		name   string
		tweak  func(*Target)
		reason string
	}{
		{"wrong password", func(tg *Target) { tg.Password = "wrong" }, ReasonAuth},
		{"wrong enable password", func(tg *Target) { tg.EnablePassword = "wrong" }, ReasonEnable},
		{"host key changed", func(tg *Target) { tg.PinnedHostKey = other.HostKey().Marshal() }, ReasonHostKeyChanged},
		{"unknown platform", func(tg *Target) { tg.Platform = "nonesuch" }, ReasonProtocol},
		{"unknown method", func(tg *Target) { tg.Method = "rsh" }, ReasonProtocol},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg := target(t, d, "ssh")
			c.tweak(&tg)
			s, err := openShell(t, tg)
			if s != nil || Reason(err) != c.reason {
				t.Fatalf("err %v (reason %q), want %q", err, Reason(err), c.reason)
			}
			checkMessage(t, err, d)
		})
	}
	// Pinned right, the login goes through.
	tg := target(t, d, "ssh")
	tg.PinnedHostKey = d.HostKey().Marshal()
	mustOpen(t, tg)
}

// BenchmarkShellSend sends configuration lines to the simulator over SSH
// (every twentieth pair leaves and re-enters configuration mode, so the
// prompt changes), and for a yardstick runs show commands on the same
// session. It reports the median time per line and per show command.
func BenchmarkShellSend(b *testing.B) {
	d, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", SSHAddr: "127.0.0.1:0", ConfigSize: devsim.MinConfigSize})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	host, port, _ := strings.Cut(d.SSHAddr(), ":")
	var p int
	fmt.Sscan(port, &p)
	s, err := OpenShell(context.Background(), Target{Platform: "cisco_ios", Host: host, Port: p, Username: d.Username(), Password: d.Password()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var lines, shows []time.Duration
	b.ResetTimer()
	for range b.N {
		if _, err := s.Send(ctx, "configure terminal", nil); err != nil {
			b.Fatal(err)
		}
		for i := range 200 {
			line := fmt.Sprintf("interface Loopback%d", i)
			if i%20 == 19 {
				line = "end"
			} else if i%20 == 0 && i > 0 {
				line = "configure terminal"
			}
			start := time.Now()
			if _, err := s.Send(ctx, line, nil); err != nil {
				b.Fatal(err)
			}
			lines = append(lines, time.Since(start))
		}
		// The last line, the 200th, was "end".
		for range 20 {
			start := time.Now()
			if _, err := s.Run(ctx, "show version"); err != nil {
				b.Fatal(err)
			}
			shows = append(shows, time.Since(start))
		}
	}
	b.StopTimer()
	var total time.Duration
	for _, d := range lines {
		total += d
	}
	b.ReportMetric(float64(median(lines).Nanoseconds()), "ns/line")
	b.ReportMetric(float64(total.Nanoseconds()/int64(len(lines))), "mean-ns/line")
	b.ReportMetric(float64(median(shows).Nanoseconds()), "ns/show")
	b.ReportMetric(float64(s.sess.QuietEnds()), "quiet-ends")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
