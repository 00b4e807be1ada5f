package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

func TestDialogueForEveryPlatform(t *testing.T) {
	for _, id := range IDs() {
		d, ok := DialogueFor(id)
		if !ok {
			t.Errorf("%s: no dialogue", id)
			continue
		}
		if d.Prompt == nil {
			t.Errorf("%s: no prompt pattern", id)
		}
		if d.Enable != "" && d.PasswordPrompt == nil {
			t.Errorf("%s: enable without a password question", id)
		}
	}
	d, _ := DialogueFor("cisco_ios")
	d.PagingOff[0] = "changed"
	if again, _ := DialogueFor("cisco_ios"); again.PagingOff[0] != "terminal length 0" {
		t.Error("DialogueFor hands out the table's own slices")
	}
}

// TestPrompts checks each platform's prompt pattern against prompts of
// real devices (as the session sees them: escapes resolved, trailing
// spaces trimmed) and against banner and configuration lines that must not
// be taken for one.
func TestPrompts(t *testing.T) {
	for _, c := range []struct {
		platform string
		yes, no  []string
	}{
		{"cisco_ios",
			[]string{"R1>", "R1#", "R1(config)#", "R1(config-if)#", "core-sw.dc1(config-router-af)#", "SW_01#"},
			[]string{"Building configuration...", "!", "#", "banner motd #", "*** Authorised access only # monitored ***", "% Invalid input", "Password:", "R1 #"}},
		{"cisco_xr", []string{"RP/0/RSP0/CPU0:XR-PE1#", "RP/0/RP0/CPU0:ios(config-if)#"}, []string{"Building configuration..."}},
		{"cisco_asa", []string{"asa>", "asa#", "asa/pri/act#", "fw01/admin(config)#"}, []string{": Saved", "ASA Version 9.16(4)"}},
		{"cisco_nxos", []string{"N9K-1#", "TEST-12345#", "N9K-1(config-if)#"}, []string{"!Command: show running-config"}},
		{"arista_eos", []string{"leaf1>", "leaf1#", "leaf1(config-if-Et1)#", "leaf1(s1)#"}, []string{"! device: leaf1 (DCS-7050SX3-48YC8, EOS-4.30.2F)"}},
		{"huawei_vrp", []string{"<HUAWEI>", "[HUAWEI]", "[HUAWEI-GigabitEthernet0/0/1]", "<Core Switch 1>"}, []string{"#", " sysname HUAWEI", "return", "<>", "Password:"}},
		{"huawei_vrpv8", []string{"<HUAWEI>", "[~HUAWEI]", "[*HUAWEI-Vlanif10]"}, []string{"!Software Version V800R021C10SPC600"}},
		{"h3c_comware", []string{"<H3C>", "[H3C]", "[H3C-vlan10]", "RBM_P<H3C>", "RBM_S[H3C]"}, []string{" version 7.1.070, Release 6635P07"}},
		{"hp_comware", []string{"<HPE>", "[HPE-GigabitEthernet1/0/1]"}, []string{"******************************************************************************"}},
		{"hp_procurve", []string{"HP-2920>", "HP-2920#", "HP-2920(config)#", "HP-2920(eth-1)#", "Core Switch#"}, []string{"Press any key to continue", "; J9727A Configuration Editor; Created on release #WB.16.10.0012"}},
		{"aruba_aoscx", []string{"TEST-SW1235#", "switch(config-if)#", "switch>"}, []string{"Current configuration:", "!Version ArubaOS-CX PL.10.10.1090"}},
		{"ruijie_os", []string{"Ruijie>", "Ruijie#", "Ruijie(config)#"}, []string{"Building configuration..."}},
		{"dell_os10", []string{"OS10#", "OS10(config)#", "OS10(conf-if-eth1/1/1)#"}, []string{"-*      Dell EMC Network Operating System (OS10)          *-"}},
		{"juniper_junos", []string{"admin@srx>", "oxidized@SRX-300#", "root@mx960-re0>"}, []string{"{master:0}", "[edit]", "version 22.4R3-S2.11;", "}"}},
		{"juniper_screenos", []string{"ssg5->", "ssg5(M)->", "fw(trust-vr)->"}, []string{"set vrouter trust-vr sharable", "exit"}},
		{"fortinet", []string{"FGT #", "FGT (global) #", "OXI-FW121 (global) #", "FGT-primary (root) #", "FGT $"}, []string{"#config-version=FGT60F-7.4.8-FW-build2795-250523:opmode=0:vdom=0:user=admin", "config system global", "end"}},
		{"paloalto_panos", []string{"admin@PA-VM>", "admin@PA-VM#", "admin@PA-220(active)>", "admin@fw1(passive-primary)>"}, []string{"config {", "[edit]"}},
		{"mikrotik_routeros", []string{"[admin@MikroTik] >", "[admin@MikroTik] /interface>", "[admin@CHR-01] <SAFE>"}, []string{"/interface ethernet", "# software id = XX-XX", "set [ find default-name=ether1 ] disable-running-check=no"}},
		{"extreme_exos", []string{"X440G2.1 #", "* X440G2.25 #", "Slot-1 Stack.3 #", "X440G2.7 >"}, []string{"#", "# Module devmgr configuration.", "configure snmp sysName \"X440G2\""}},
		{"vyos", []string{"vyos@vyos:~$", "vyos@vyos#", "admin@edge-1:~$"}, []string{"set interfaces ethernet eth0 address '10.16.0.1/24'", "[edit]"}},
		{"linux", []string{"admin@host:~$", "[root@web01 ~]#", "host:~ #", "$", "#"}, []string{"127.0.0.1\tlocalhost", "Welcome to Ubuntu 22.04.4 LTS (GNU/Linux 5.15.0-105-generic x86_64)"}},
	} {
		d, ok := DialogueFor(c.platform)
		if !ok {
			t.Fatalf("no dialogue for %s", c.platform)
		}
		for _, p := range c.yes {
			if !d.Prompt.MatchString(p) {
				t.Errorf("%s: prompt %q not recognised", c.platform, p)
			}
		}
		for _, p := range c.no {
			if d.Prompt.MatchString(p) {
				t.Errorf("%s: %q taken for a prompt", c.platform, p)
			}
		}
	}
}

// TestPagers checks the pager patterns against the pager prompts real
// devices print (after cleanup), and that ordinary lines are left alone.
func TestPagers(t *testing.T) {
	for _, c := range []struct {
		platform string
		yes      []string
	}{
		{"cisco_ios", []string{"--More--"}},
		{"cisco_nxos", []string{"--More--"}},
		{"dell_os10", []string{"--more--"}},
		{"cisco_asa", []string{"<--- More --->"}},
		{"huawei_vrp", []string{"---- More ----"}},
		{"h3c_comware", []string{"---- More ----"}},
		{"hp_procurve", []string{"-- MORE --, next page: Space, next line: Enter, quit: Control-C"}},
		{"aruba_aoscx", []string{"-- MORE --, next page: Space, next line: Enter, quit: q"}},
		{"juniper_junos", []string{"---(more)---", "---(more 54%)---"}},
		{"juniper_screenos", []string{"--- more ---"}},
		{"fortinet", []string{"--More--"}},
		{"paloalto_panos", []string{"lines 1-24"}},
		{"extreme_exos", []string{"Press <SPACE> to continue or <Q> to quit:"}},
		{"vyos", []string{":"}},
		{"mikrotik_routeros", []string{"-- [Q quit|D dump|down]"}},
	} {
		d, _ := DialogueFor(c.platform)
		for _, p := range c.yes {
			if d.Pager == nil || !d.Pager.MatchString(p) {
				t.Errorf("%s: pager %q not recognised", c.platform, p)
			}
		}
		for _, line := range []string{"interface GigabitEthernet0/1", " description more-uplinks", "end", "!"} {
			if d.Pager != nil && d.Pager.MatchString(line) {
				t.Errorf("%s: %q taken for a pager", c.platform, line)
			}
		}
	}
}

// TestCommandErrors checks the rejection patterns on what real devices
// print for an unknown command or a missing privilege.
func TestCommandErrors(t *testing.T) {
	for _, c := range []struct {
		platform string
		yes, no  []string
	}{
		{"cisco_ios", []string{"% Invalid input detected at '^' marker.", "% Incomplete command.", "% Ambiguous command:  \"sh\"", "Command authorization failed."},
			[]string{" description % Invalid input", "Building configuration..."}},
		{"cisco_nxos", []string{"% Invalid command at '^' marker.", "% Permission denied for the role"}, nil},
		{"cisco_asa", []string{"ERROR: % Invalid input detected at '^' marker."}, nil},
		{"dell_os10", []string{"% Error: Unrecognized command."}, nil},
		{"huawei_vrp", []string{"Error: Unrecognized command found at '^' position.", "Error: Wrong parameter found at '^' position."}, []string{" info-center loghost 10.1.1.1"}},
		{"h3c_comware", []string{" % Unrecognized command found at '^' position.", " % Incomplete command found at '^' position."}, nil},
		{"hp_procurve", []string{"Invalid input: shwo"}, nil},
		{"aruba_aoscx", []string{"Invalid input: shwo"}, nil},
		{"fortinet", []string{"command parse error before 'psu'", "Command fail. Return code -61"}, []string{"    set comments \"Command fail\""}},
		{"paloalto_panos", []string{"Unknown command: shwo", "Invalid syntax."}, nil},
		{"juniper_junos", []string{"syntax error, expecting <command>.", "error: permission denied", "unknown command.", "sh: show: not found", "-sh: show: command not found"},
			[]string{"    syslog {", "            description \"not found\";"}},
		{"mikrotik_routeros", []string{"bad command name expor (line 1 column 2)", "expected end of command (line 1 column 9)"}, nil},
		{"extreme_exos", []string{"%% Invalid input detected at '^' marker."}, nil},
		{"vyos", []string{"  Invalid command: [shwo]"}, nil},
	} {
		d, _ := DialogueFor(c.platform)
		for _, l := range c.yes {
			if !d.CommandError.MatchString(l) {
				t.Errorf("%s: rejection %q not recognised", c.platform, l)
			}
		}
		for _, l := range c.no {
			if d.CommandError.MatchString(l) {
				t.Errorf("%s: %q taken for a rejection", c.platform, l)
			}
		}
	}
}

// scripted plays a device from an inline script over loopback TCP (see
// recording.replay) and returns a session on it with the production
// dialogue of platform.
func scripted(t *testing.T, platform, init string, steps ...step) *Session {
	t.Helper()
	d, ok := DialogueFor(platform)
	if !ok {
		t.Fatalf("no dialogue for %s", platform)
	}
	client, server := tcpPair(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); recording{initPrompt: init, steps: steps}.replay(server, replayOptions{}) }()
	t.Cleanup(func() { client.Close(); wg.Wait() })
	return NewSession(client, d, 1<<20)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestProductionIOSDialogue: banner with '#', a user-level login, enable
// with a password, a device that rejects one of the paging commands, the
// pager, and a configuration whose lines end in '#' and '>'.
func TestProductionIOSDialogue(t *testing.T) {
	d, _ := DialogueFor("cisco_ios")
	s := sessionWith(t, fakeIOS{enablePassword: "s3cret", config: iosConfig, chunk: 5}, d)
	ctx := testCtx(t)
	if err := s.Start(ctx, "s3cret"); err != nil {
		t.Fatal(err)
	}
	if s.Prompt() != "R1#" {
		t.Fatalf("prompt %q", s.Prompt())
	}
	out, err := s.Run(ctx, "show running-config")
	if err != nil || out != iosConfig {
		t.Fatalf("output %q, %v", out, err)
	}
	if _, err := s.Run(ctx, "show nothing"); !errors.Is(err, ErrRejected) {
		t.Errorf("unknown command: err = %v, want ErrRejected", err)
	}

	s = sessionWith(t, fakeIOS{enablePassword: "s3cret", config: iosConfig}, d)
	if err := s.Start(ctx, ""); !errors.Is(err, ErrEnable) || !strings.Contains(err.Error(), "none is set") {
		t.Errorf("no enable password: err = %v", err)
	}
}

func TestHuaweiSuper(t *testing.T) {
	const config = "!Software Version V200R019C10SPC500\r\n#\r\n sysname HUAWEI\r\n#\r\nreturn\r\n"
	init := "\r\nInfo: The max number of VTY users is 10.\r\n<HUAWEI>"
	ok := []step{
		{"super\n", "super\r\nPassword:"},
		{"pw\n", "\r\nNow user privilege is 3 level, and only those commands whose level is equal to or less than this level can be used.\r\nPrivilege note: 0-VISIT, 1-MONITOR, 2-SYSTEM, 3-MANAGE\r\n<HUAWEI>"},
		{"screen-length 0 temporary\n", "screen-length 0 temporary\r\nInfo: The configuration takes effect on the current user terminal interface only.\r\n<HUAWEI>"},
		{"display current-configuration\n", "display current-configuration\r\n" + config + "<HUAWEI>"},
	}
	t.Run("super password accepted", func(t *testing.T) {
		s := scripted(t, "huawei_vrp", init, ok...)
		ctx := testCtx(t)
		if err := s.Start(ctx, "pw"); err != nil {
			t.Fatal(err)
		}
		out, err := s.Run(ctx, "display current-configuration")
		if want := strings.TrimSuffix(strings.ReplaceAll(config, "\r\n", "\n"), "\n"); err != nil || out != want {
			t.Errorf("output %q, %v", out, err)
		}
	})
	t.Run("super password rejected", func(t *testing.T) {
		s := scripted(t, "huawei_vrp", init, ok[0], step{"bad\n", "\r\nError: Failed to verify the password.\r\n<HUAWEI>"})
		if err := s.Start(testCtx(t), "bad"); !errors.Is(err, ErrEnable) {
			t.Errorf("err = %v, want ErrEnable", err)
		}
	})
	t.Run("no super password: super is not sent", func(t *testing.T) {
		s := scripted(t, "huawei_vrp", init, ok[2], ok[3])
		ctx := testCtx(t)
		if err := s.Start(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(ctx, "display current-configuration"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestProCurveLogin(t *testing.T) {
	s := scripted(t, "hp_procurve",
		"\x1b[2J\x1b[?7l\x1b[3;23r\x1b[?6l\x1b[1;1H\r\nHP J9727A 2920-24G-PoE+ Switch\r\n\r\nPress any key to continue\x1b[?25h",
		step{" ", "\x1b[2K\rHP-2920> "},
		step{"enable\n", "enable\r\nUsername: "},
		step{"manager\n", "\r\nPassword: "},
		step{"pw\n", "\r\nHP-2920# "},
		step{"no page\n", "no page\r\n\x1b[24;1HHP-2920# "},
		step{"show running-config\n", "show running-config\r\n\r\nRunning configuration:\r\n\r\nhostname \"HP-2920\"\r\n\x1b[24;1HHP-2920# "},
	)
	s.SetUsername("manager")
	ctx := testCtx(t)
	if err := s.Start(ctx, "pw"); err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx, "show running-config")
	if err != nil || out != "\nRunning configuration:\n\nhostname \"HP-2920\"" {
		t.Errorf("output %q, %v", out, err)
	}
}

func TestJunosTelnetPromptLines(t *testing.T) {
	const tail = "\r\n\r\n{master:0}\r\nadmin@mx1> "
	s := scripted(t, "juniper_junos", "\r\n--- JUNOS 22.4R3-S2.11 built 2024-05-10 20:45:39 UTC\r\n{master:0}\r\nadmin@mx1> ",
		step{"set cli screen-length 0\n", "set cli screen-length 0 \r\nScreen length set to 0" + tail},
		step{"set cli screen-width 0\n", "set cli screen-width 0 \r\nScreen width set to 0" + tail},
		step{"show configuration | display omit\n", "show configuration | display omit \r\n## Last commit: 2024-12-06 11:41:05 UTC by root\r\nversion 22.4R3-S2.11;\r\nsystem {\r\n    host-name mx1;\r\n}" + tail},
	)
	ctx := testCtx(t)
	if err := s.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx, "show configuration | display omit")
	want := "## Last commit: 2024-12-06 11:41:05 UTC by root\nversion 22.4R3-S2.11;\nsystem {\n    host-name mx1;\n}\n"
	if err != nil || out != want {
		t.Errorf("output %q, %v; want %q", out, err, want)
	}
}

// TestEXOSCounterPrompt: the prompt's command counter moves and the
// unsaved-changes mark comes and goes; each must still end the output.
func TestEXOSCounterPrompt(t *testing.T) {
	s := scripted(t, "extreme_exos", "\r\nExtremeXOS\r\n\r\nX440G2.1 # ",
		step{"disable clipaging\n", "disable clipaging\r\n\r\nX440G2.2 # "},
		step{"show configuration\n", "show configuration\r\n#\r\n# Module devmgr configuration.\r\n#\r\nconfigure snmp sysName \"X440G2\"\r\n\r\n* X440G2.3 # "},
		step{"show version\n", "show version\r\nSwitch      : 800616-00-03 1234G-56789 Rev 3.0\r\n* X440G2.4 # "},
	)
	ctx := testCtx(t)
	if err := s.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx, "show configuration")
	if want := "#\n# Module devmgr configuration.\n#\nconfigure snmp sysName \"X440G2\"\n"; err != nil || out != want {
		t.Errorf("output %q, %v", out, err)
	}
	if out, err := s.Run(ctx, "show version"); err != nil || !strings.HasPrefix(out, "Switch") {
		t.Errorf("output %q, %v", out, err)
	}
}

func TestFortiGateDisclaimer(t *testing.T) {
	s := scripted(t, "fortinet", "WARNING: authorised use only\r\n(Press 'a' to accept):",
		step{"a", "\r\nFGT # "},
		step{"show\n", "show\r\r\n#config-version=FGT60F-7.4.8\r\nconfig system global\r\n    set hostname \"FGT\"\r\n--More-- "},
		step{" ", "\r         \rend\r\n\r\nFGT # "},
	)
	ctx := testCtx(t)
	if err := s.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx, "show")
	if want := "#config-version=FGT60F-7.4.8\nconfig system global\n    set hostname \"FGT\"\nend\n"; err != nil || out != want {
		t.Errorf("output %q, %v; want %q", out, err, want)
	}
}

// TestUnixPromptWithTitle: a shell prompt that sets the xterm title.
func TestUnixPromptWithTitle(t *testing.T) {
	const prompt = "\x1b]0;admin@host: ~\x07\x1b[01;32madmin@host\x1b[00m:~$ "
	s := scripted(t, "linux", "Welcome to Ubuntu\r\n"+prompt,
		step{"cat /etc/hostname\n", "cat /etc/hostname\r\nhost\r\n" + prompt})
	ctx := testCtx(t)
	if err := s.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if s.Prompt() != "admin@host:~$" {
		t.Errorf("prompt %q", s.Prompt())
	}
	if out, err := s.Run(ctx, "cat /etc/hostname"); err != nil || out != "host" {
		t.Errorf("output %q, %v", out, err)
	}
}

// TestTimeoutQuotesNoDeviceText: a device that stops after a secret line
// must fail with a message that does not carry it.
func TestTimeoutQuotesNoDeviceText(t *testing.T) {
	const secret = "username admin secret 9 $9$nhEmQVczB7dqsO$X.HsgL6x1il0RxkOSSvyQYwucySCt7qFm4v7pqCxkKM"
	s := scripted(t, "cisco_ios", "R1#",
		step{"terminal length 0\n", "terminal length 0\r\nR1#"},
		step{"terminal width 511\n", "terminal width 511\r\nR1#"},
		step{"show running-config\n", "show running-config\r\n" + secret},
		step{"never\n", ""})
	ctx := testCtx(t)
	if err := s.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	_, err := s.Run(short, "show running-config")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "$9$") {
		t.Errorf("timeout message quotes the device: %v", err)
	}
	if want := fmt.Sprintf("no prompt after %d bytes of output", len("show running-config\r\n"+secret)); !strings.Contains(err.Error(), want) {
		t.Errorf("timeout message does not say how far the output got: %v", err)
	}
}

func TestBinaryOutput(t *testing.T) {
	s := scripted(t, "cisco_ios", "R1#",
		step{"show running-config\n", "show running-config\r\nhostname R1\x02\x05\r\n\x07end\r\nR1#"})
	ctx := testCtx(t)
	if err := s.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, "show running-config"); !errors.Is(err, ErrBinaryOutput) {
		t.Errorf("err = %v, want ErrBinaryOutput", err)
	}
}

// FuzzHostileOutput feeds arbitrary bytes to the prompt detection and the
// output cleanup of every platform: a device must never make them panic,
// and what comes out is valid UTF-8 without carriage returns or escapes.
func FuzzHostileOutput(f *testing.F) {
	for _, seed := range []string{
		"show run\r\r\nhostname R1\r\n\x1b[7m--More--\x1b[m\r\x1b[K!\r\nR1#",
		"\x1b]0;title\x07user@host:~$ ",
		"  ---- More ----\x1b[42D                                          \x1b[42D sysname HUAWEI\r\n<HUAWEI>",
		"\xff\xfe\x00\x01\x02\x1b[\x1b]\x08\x08\r\r\n\n* X440G2.5 # ",
		"\x1b[99999999999D\x1b[0K\x01\x01",
		"abc\x1b[5C\x1b[2K\x1b[3G\x1b[1Kx\x1b[J\x1b[99999C\x1b[D minimum-re \blative\r\n\x1b[?1h\x1b=r1 [standalone: master] #",
	} {
		f.Add([]byte(seed))
	}
	ids := IDs()
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, id := range ids {
			d, _ := DialogueFor(id)
			s := NewSession(nil, d, 1<<20)
			s.prompt = lastLine(raw)
			s.normPrompt(s.prompt)
			for _, enc := range []string{"utf-8", "gbk"} {
				s.encoding = enc
				out, err := s.output(raw, "show running-config")
				if err != nil {
					continue
				}
				if !utf8.ValidString(out) || strings.ContainsAny(out, "\r\x1b") {
					t.Fatalf("%s/%s: output %q", id, enc, out)
				}
			}
		}
	})
}
