package devsim

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// step is one line typed and what must follow it.
type step struct{ send, expect string }

// cliCase describes a platform from the outside, as an operator would write
// it down: the prompts, how to get privileges and switch paging off.
type cliCase struct {
	platform       string
	enablePassword string
	firstPrompt    string // after login
	enable         []step
	prompt         string // privileged prompt, with what precedes it on the wire
	echoSuffix     string
	pagingOff      []step
	pager          string // "" for a platform without a pager
	erase          string
	pageLines      int // lines per screen before the pager prompt
	command        string
	invalid        string // the platform's answer to an unknown command
	exit           string // ends the session ("exit" if empty)
}

var cliCases = []cliCase{
	{
		platform: "cisco_ios", enablePassword: "s3cret",
		firstPrompt: "R1>",
		enable:      []step{{"enable\n", "Password: "}, {"wrong\n", "% Access denied"}, {"enable\n", "Password: "}, {"s3cret\n", "R1#"}},
		prompt:      "R1#", echoSuffix: "\r\n",
		pagingOff: []step{{"terminal length 0\n", "R1#"}, {"terminal width 511\n", "R1#"}},
		pager:     " --More-- ", erase: "\b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\b", pageLines: 23,
		command: "show running-config",
		invalid: "bogus-command\r\n   ^\r\n% Invalid input detected at '^' marker.",
	},
	{
		platform:    "cisco_nxos",
		firstPrompt: "\rN9K-1# ", prompt: "\rN9K-1# ", echoSuffix: "\r\r\n",
		pagingOff: []step{{"terminal length 0\n", "\rN9K-1# "}},
		pager:     "--More--", erase: "\r\x1b[K", pageLines: 23,
		command: "show running-config",
		invalid: "% Invalid command at '^' marker.",
	},
	{
		platform: "huawei_vrp", enablePassword: "sup3r",
		firstPrompt: "<HUAWEI>",
		enable:      []step{{"super\n", "Password:"}, {"sup3r\n", "Now user privilege is 3 level"}, {"", "<HUAWEI>"}},
		prompt:      "<HUAWEI>", echoSuffix: "\r\n",
		pagingOff: []step{{"screen-length 0 temporary\n", "Info: The configuration takes effect"}, {"", "<HUAWEI>"}},
		pager:     "  ---- More ----", erase: "\x1b[16D                \x1b[16D", pageLines: 24,
		command: "display current-configuration",
		invalid: "\r\n        ^\r\nError: Unrecognized command found at '^' position.",
		exit:    "quit",
	},
	{
		platform:    "juniper_junos",
		firstPrompt: "\r\nadmin@srx> ", prompt: "\r\nadmin@srx> ", echoSuffix: "\r\n",
		pagingOff: []step{{"set cli screen-length 0\n", "Screen length set to 0\r\n\r\nadmin@srx> "}},
		pager:     "---(more)---", erase: "\r            \r", pageLines: 23,
		command: "show configuration | display omit",
		invalid: "unknown command.",
	},
	{
		platform:    "fortinet",
		firstPrompt: "\r\nFGT # ", prompt: "\r\nFGT # ", echoSuffix: "\r\r\n",
		pagingOff: []step{
			{"config system console\n", "FGT (console) # "},
			{"set output standard\n", "FGT (console) # "},
			{"end\n", "\r\nFGT # "},
		},
		pager: "--More-- ", erase: "\r         \r", pageLines: 24,
		command: "show",
		invalid: "Unknown action 0\r\nCommand fail. Return code -1",
	},
	{
		platform:    "mikrotik_routeros",
		firstPrompt: "[admin@MikroTik] > ", prompt: "[admin@MikroTik] > ", echoSuffix: "\r\n",
		command: "/export show-sensitive",
		invalid: "bad command name bogus-command (line 1 column 1)",
		exit:    "/quit",
	},
	{
		platform:    "paloalto_panos",
		firstPrompt: "admin@PA-220> ", prompt: "admin@PA-220> ", echoSuffix: "\r\n",
		pagingOff: []step{{"set cli pager off\n", "admin@PA-220> "}},
		pager:     "lines 1-24 ", erase: "\r\x1b[K", pageLines: 24,
		command: "show config running",
		invalid: "Unknown command: bogus-command",
	},
	{
		platform:    "aruba_aoscx",
		firstPrompt: "switch# ", prompt: "switch# ", echoSuffix: "\r\n",
		pagingOff: []step{{"no page\n", "switch# "}},
		pager:     "-- MORE --, next page: Space, next line: Enter, quit: q", erase: "\r\x1b[K", pageLines: 23,
		command: "show running-config",
		invalid: "Invalid input: bogus-command",
	},
}

// runCLI drives a logged-in command line through the case: privileges,
// the pager while it is on, paging off, then the configuration, which
// must arrive exactly as the device rendered it.
func runCLI(t *testing.T, d *Device, c cliCase, w interface{ Write([]byte) (int, error) }, e *expecter) {
	t.Helper()
	e.must(t, c.firstPrompt)
	for _, s := range c.enable {
		send(t, w, s.send)
		e.must(t, s.expect)
	}

	send(t, w, "bogus-command\n")
	if out := e.must(t, c.prompt); !strings.Contains(out, c.invalid) {
		t.Errorf("unknown command answered %q, want %q", out, c.invalid)
	}

	if c.pager != "" {
		send(t, w, c.command+"\n")
		page := e.must(t, c.pager)
		body := strings.TrimPrefix(page[:len(page)-len(c.pager)], c.command+c.echoSuffix)
		if got := strings.Count(body, "\r\n"); got != c.pageLines {
			t.Errorf("first screen has %d lines, want %d", got, c.pageLines)
		}
		send(t, w, " ")
		e.must(t, c.erase)
		e.must(t, c.pager)
		send(t, w, "q")
		e.must(t, c.erase)
		e.must(t, c.prompt)
	}

	for _, s := range c.pagingOff {
		if s.send != "" {
			send(t, w, s.send)
		}
		e.must(t, s.expect)
	}
	send(t, w, c.command+"\n")
	out := e.must(t, c.prompt)
	shown, ok := d.LastOutput(c.command)
	if !ok {
		t.Fatal("device did not record the configuration")
	}
	if want := c.command + c.echoSuffix + crlf(shown) + c.prompt; out != want {
		t.Errorf("configuration output differs from what the device rendered:\n got %q\nwant %q", tail(out), tail(want))
	}
	if c.pager != "" && strings.Contains(out, c.pager) {
		t.Error("pager prompt in output with paging off")
	}
	if len(shown) < MinConfigSize*85/100 {
		t.Errorf("configuration only %d bytes", len(shown))
	}
}

func TestSSHShell(t *testing.T) {
	for _, c := range cliCases {
		t.Run(c.platform, func(t *testing.T) {
			d := startDevice(t, Options{Platform: c.platform, EnablePassword: c.enablePassword, ConfigSize: MinConfigSize})
			_, w, e := sshShell(t, d)
			runCLI(t, d, c, w, e)
			if s := d.Stats(); s.Logins != 1 || s.ConfigShows < 1 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

func TestTelnetShell(t *testing.T) {
	login := map[string]struct{ user, pass, failed string }{
		"cisco_ios":         {"\r\nUser Access Verification\r\n\r\nUsername: ", "Password: ", "% Login invalid\r\n\r\nUsername: "},
		"huawei_vrp":        {"Username:", "Password:", "Error: Local authentication is rejected.\r\n\r\nUsername:"},
		"juniper_junos":     {"login: ", "Password:", "Login incorrect\r\nlogin: "},
		"fortinet":          {"FGT login: ", "Password: ", "Login incorrect\r\nFGT login: "},
		"mikrotik_routeros": {"Login: ", "Password: ", "Login failed, incorrect username or password\r\n\r\nLogin: "},
	}
	for _, c := range cliCases {
		l, ok := login[c.platform]
		if !ok {
			continue
		}
		t.Run(c.platform, func(t *testing.T) {
			d := startDevice(t, Options{Platform: c.platform, EnablePassword: c.enablePassword, TelnetAddr: "127.0.0.1:0", ConfigSize: MinConfigSize})
			conn, e := dialTelnet(t, d)
			negotiation := e.must(t, "\xff\xfd\x1f")
			if negotiation != "\xff\xfb\x01\xff\xfb\x03\xff\xfd\x1f" {
				t.Errorf("option negotiation %q", negotiation)
			}
			e.must(t, l.user)
			// The client's option answers, arriving in the middle of the
			// name, must not reach the line (nor its echo).
			send(t, conn, "ad\xff\xfd\x01\xff\xfd\x03\xff\xfb\x1f\xff\xfa\x1f\x00\x50\x00\x18\xff\xf0min\r\n")
			if echo := e.must(t, "admin"+c.echoSuffix); echo != "admin"+c.echoSuffix {
				t.Errorf("username echoed as %q", echo)
			}
			e.must(t, l.pass)
			send(t, conn, "not-the-password\r\n")
			e.must(t, l.failed)
			send(t, conn, "admin\r\x00")
			e.must(t, l.pass)
			send(t, conn, "admin\r\n")
			// Telnet clients end lines with CR LF.
			runCLI(t, d, c, crlfWriter{conn}, e)
			if s := d.Stats(); s.Logins != 1 || s.FailedLogins != 1 {
				t.Errorf("stats %+v", s)
			}
			exit := c.exit
			if exit == "" {
				exit = "exit"
			}
			send(t, conn, exit+"\r\n")
			if _, err := e.waitEnd(wait); err != nil {
				t.Error(err)
			}
		})
	}
}

// crlfWriter turns the test's "\n" into the CR LF a telnet client sends.
type crlfWriter struct {
	w interface{ Write([]byte) (int, error) }
}

func (c crlfWriter) Write(p []byte) (int, error) {
	if _, err := c.w.Write([]byte(strings.ReplaceAll(string(p), "\n", "\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func TestSSHExec(t *testing.T) {
	for _, tc := range []struct {
		platform, command, nl string
	}{
		{"juniper_junos", "show configuration | display omit", "\n"},
		{"mikrotik_routeros", "/export show-sensitive", "\n"},
		{"cisco_ios", "show running-config", "\r\n"},
		{"huawei_vrp", "display current-configuration", "\r\n"},
	} {
		t.Run(tc.platform, func(t *testing.T) {
			// An enable password does not stop exec requests.
			d := startDevice(t, Options{Platform: tc.platform, EnablePassword: "x", ConfigSize: MinConfigSize})
			client, err := ssh.Dial("tcp", d.SSHAddr(), clientConfig(d, "admin", "admin"))
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			sess, err := client.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			out, err := sess.Output(tc.command)
			if err != nil {
				t.Fatalf("exec: %v", err)
			}
			shown, _ := d.LastOutput(tc.command)
			if want := strings.ReplaceAll(shown, "\n", tc.nl); string(out) != want || len(shown) == 0 {
				t.Errorf("exec output differs: got %d bytes, want %d", len(out), len(want))
			}

			sess, err = client.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			out, err = sess.Output("bogus-command")
			var exit *ssh.ExitError
			if !errors.As(err, &exit) || exit.ExitStatus() != 1 {
				t.Errorf("unknown command: err %v", err)
			}
			if len(out) == 0 {
				t.Error("unknown command printed nothing")
			}
		})
	}
}

func TestSSHKeyboardInteractive(t *testing.T) {
	d := startDevice(t, Options{Platform: "hp_comware", Username: "ops", Password: "pw-1"})
	cfg := clientConfig(d, "ops", "")
	var asked []string
	cfg.Auth = []ssh.AuthMethod{ssh.KeyboardInteractive(func(name, instruction string, questions []string, echos []bool) ([]string, error) {
		asked = append(asked, questions...)
		answers := make([]string, len(questions))
		for i := range answers {
			answers[i] = "pw-1"
		}
		return answers, nil
	})}
	client, err := ssh.Dial("tcp", d.SSHAddr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	client.Close()
	if len(asked) != 1 || asked[0] != "Password: " {
		t.Errorf("questions %q", asked)
	}
}

func TestSSHBanner(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_xe"})
	cfg := clientConfig(d, "admin", "admin")
	var banner string
	cfg.BannerCallback = func(m string) error { banner = m; return nil }
	client, err := ssh.Dial("tcp", d.SSHAddr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	client.Close()
	if !strings.Contains(banner, "Authorised access only") || !strings.Contains(banner, "\r\n") {
		t.Errorf("banner %q", banner)
	}
	if v := string(client.ServerVersion()); v != "SSH-2.0-Cisco-1.25" {
		t.Errorf("server version %q", v)
	}
}

func TestHostKeyStableAndRotated(t *testing.T) {
	opts := Options{Platform: "arista_eos", Hostname: "leaf9", Seed: 3}
	d := startDevice(t, opts)
	twin := startDevice(t, opts)
	old := d.HostKey()
	if string(old.Marshal()) != string(twin.HostKey().Marshal()) {
		t.Error("the same device identity got a different host key")
	}
	cfg := clientConfig(d, "admin", "admin") // pins the current key
	client, err := ssh.Dial("tcp", d.SSHAddr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	client.Close()

	if err := d.RotateHostKey(); err != nil {
		t.Fatal(err)
	}
	if string(d.HostKey().Marshal()) == string(old.Marshal()) {
		t.Fatal("rotation kept the key")
	}
	if _, err := ssh.Dial("tcp", d.SSHAddr(), cfg); err == nil || !strings.Contains(err.Error(), "host key mismatch") {
		t.Errorf("pinned old key: err %v, want a host key mismatch", err)
	}
}

// Every personality, driven from its own table entry: login, paging off,
// the default configuration command, over SSH and exec. The hand-written
// cases above pin the wire format; this one keeps every table entry
// working end to end.
func TestEveryPersonalityOverSSH(t *testing.T) {
	for _, platform := range Platforms() {
		t.Run(platform, func(t *testing.T) {
			d := startDevice(t, Options{Platform: platform, ConfigSize: MinConfigSize, Personality: unpaged(platform)})
			p := d.Personality()
			n := 1
			prompt := func() string {
				return p.PromptPrefix + crlf(strings.NewReplacer("{host}", d.Hostname(), "{user}", "admin", "{ctx}", "", "{n}", strconv.Itoa(n)).Replace(p.EnablePrompt))
			}
			_, w, e := sshShell(t, d)
			if p.ShellLogin {
				e.must(t, crlf(strings.ReplaceAll(p.LoginUserPrompt[strings.LastIndex(p.LoginUserPrompt, "\n")+1:], "{host}", d.Hostname())))
				send(t, w, "admin\n")
				e.must(t, p.LoginPasswordPrompt)
				send(t, w, "admin\n")
			}
			if p.PressAnyKey != "" {
				e.must(t, p.PressAnyKey)
				send(t, w, " ")
			}
			e.must(t, prompt())
			for _, cmd := range p.PagingOff {
				send(t, w, cmd+"\n")
				n++
				e.must(t, prompt())
			}
			cmd := p.ConfigCommands[0]
			if path, file := strings.CutPrefix(cmd, scpPrefix); file {
				// A file (APC's config.ini) is not typed: SCP gets it.
				got, refusal, _ := scpGet(t, d, path)
				if shown, _ := d.LastOutput(cmd); got != shown || len(shown) == 0 {
					t.Errorf("scp %s: %d bytes (%q), want the %d shown", path, len(got), refusal, len(shown))
				}
			} else {
				send(t, w, cmd+"\n")
				n++
				out := e.must(t, prompt())
				shown, _ := d.LastOutput(cmd)
				if want := cmd + p.echoSuffix() + crlf(shown) + prompt(); out != want || len(shown) == 0 {
					t.Errorf("output differs:\n got %q\nwant %q", tail(out), tail(want))
				}
			}

			client, err := ssh.Dial("tcp", d.SSHAddr(), clientConfig(d, "admin", "admin"))
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			sess, err := client.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			if out, err := sess.Output(p.VersionCommands[0]); err != nil || len(out) == 0 {
				t.Errorf("exec %q: %v, %d bytes", p.VersionCommands[0], err, len(out))
			}
		})
	}
}

// unpaged is, for a platform that pages and has no paging-off command
// (Netgate TNSR), its personality without the pager, so that a test can
// read one reply whole; nil for the others. Such platforms' pager is
// proven by the collector's runs (TestCollectEveryPlatform).
func unpaged(platform string) *Personality {
	p, ok := Lookup(platform)
	if !ok || p.Pager == "" || len(p.PagingOff) > 0 {
		return nil
	}
	p.Pager = ""
	return &p
}
