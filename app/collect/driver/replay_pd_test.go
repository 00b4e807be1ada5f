package driver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/app/devsim"
)

// Nokia SR OS, Ciena SAOS, Huawei SmartAX, ZTE ZXROS, SonicWall SonicOS,
// WatchGuard Fireware and Extreme VOSS.
//
// Of these only Ciena SAOS 10 has a public recording of a real device
// (Oxidized's saos10#Ciena-CN5171_saos-10-09-02-0181-RS3); the others are
// proven on the simulator (app/devsim/persona_pd.go, written from the
// vendors' documentation) and on the scripted sessions below, which are
// written from the vendors' documentation too and are not counted as
// captures.

func init() {
	// Ciena SAOS 10 on a CN5171. The pager never showed in the recording
	// (paging was off); SAOS 10's "--More--" is forced on instead.
	addCaptures(capture{file: "saos10_Ciena-CN5171_saos-10-09-02-0181-RS3", platform: "ciena_saos", pager: "--More--",
		wantLines: []string{
			`system config hostname "LAB-CN5171-1" description "5171"`,
			`rib vrf "default" ipv4 "0.0.0.0/0" next-hop "10.10.10.33"`,
			`| Hostname | LAB-CN5171-1 |`,
		}})
}

// TestCienaNoiseOnCapture: the SAOS noise rules take no line of the
// configuration the CN5171 printed (it prints no creation stamp), so
// nothing real is ever ignored.
func TestCienaNoiseOnCapture(t *testing.T) {
	rec := loadRecording(t, "saos10_Ciena-CN5171_saos-10-09-02-0181-RS3")
	var lines []string
	for _, st := range rec.steps {
		if st.sent == DefaultCommands("ciena_saos")+"\n" {
			lines = CleanLines([]byte(st.reply))
		}
	}
	if len(lines) < 100 {
		t.Fatalf("the recording has no %q", DefaultCommands("ciena_saos"))
	}
	for _, l := range lines {
		for _, re := range NoiseRules("ciena_saos") {
			if re.MatchString(l) {
				t.Errorf("noise rule %s takes the configuration line %q", re, l)
			}
		}
	}
}

// pdScript is a scripted session: what the device prints after login,
// then each command line it expects with its reply (echo, output, next
// prompt), as a recording holds them.
func pdScript(init string, steps ...string) recording {
	rec := recording{initPrompt: strings.ReplaceAll(init, "\n", "\r\n")}
	for i := 0; i+1 < len(steps); i += 2 {
		rec.steps = append(rec.steps, step{steps[i] + "\n", strings.ReplaceAll(steps[i+1], "\n", "\r\n")})
	}
	return rec
}

// pdRun plays rec over loopback TCP (with the pager forced on when o
// says so) against the production dialogue of platform, starts the
// session and runs cmds; it returns each command's output or error.
func pdRun(t *testing.T, platform string, rec recording, o replayOptions, cmds ...string) ([]string, []error) {
	t.Helper()
	d, ok := DialogueFor(platform)
	if !ok {
		t.Fatalf("no platform %s", platform)
	}
	client, server := tcpPair(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); rec.replay(server, o) }()
	defer func() { client.Close(); wg.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := NewSession(client, d, 1<<20)
	if err := s.Start(ctx, ""); err != nil {
		t.Fatalf("start: %v", err)
	}
	outs, errs := make([]string, len(cmds)), make([]error, len(cmds))
	for i, c := range cmds {
		outs[i], errs[i] = s.Run(ctx, c)
	}
	return outs, errs
}

// srosConfig is the head of a classic admin display-config (from the SR
// OS classic CLI guide), long enough to be paged.
var srosConfig = func() string {
	var b strings.Builder
	b.WriteString("# TiMOS-B-21.10.R1 both/x86_64 Nokia 7750 SR Copyright (c) 2000-2021 Nokia.\n")
	b.WriteString("# Generated THU NOV 25 10:11:12 2026 UTC\n\nexit all\nconfigure\n    system\n        name \"PE1\"\n    exit\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "    port 1/1/%d\n        no shutdown\n    exit\n", i)
	}
	b.WriteString("exit all\n\n# Finished THU NOV 25 10:11:13 2026 UTC")
	return b.String()
}()

// TestNokiaSROSDialects: the same definition backs up a classic-only node,
// a mixed-mode node whose session lands in the MD-CLI (two-line prompt,
// switched to the classic engine with /!classic-cli), and, with a template
// command, a node in pure model-driven mode whose context line "[/]" must
// not end up in the output.
func TestNokiaSROSDialects(t *testing.T) {
	cfg := srosConfig
	want := strings.Join(CleanLines([]byte(cfg)), "\n")
	classicPager := replayOptions{pager: "Press any key to continue (Q to quit)", pageLines: 20}
	t.Run("classic", func(t *testing.T) {
		rec := pdScript("\nSR OS Software\n\nA:PE1# ",
			"environment more false", "environment more false\n            ^\nError: Bad command.\nA:PE1# ",
			"/!classic-cli", "/!classic-cli\n^\nError: Bad command.\nA:PE1# ",
			"environment no more", "environment no more\nA:PE1# ",
			"admin display-config", "admin display-config\n"+cfg+"\n\n*A:PE1# ")
		outs, errs := pdRun(t, "nokia_sros", rec, classicPager, "admin display-config")
		if errs[0] != nil || outs[0] != want+"\n" {
			t.Fatalf("err %v, output differs:\n%q\nwant\n%q", errs[0], outs[0], want+"\n")
		}
	})
	t.Run("mixed", func(t *testing.T) {
		rec := pdScript("\nSR OS Software\n\n[/]\nA:admin@PE1# ",
			"environment more false", "environment more false\n\n[/]\nA:admin@PE1# ",
			"/!classic-cli", "/!classic-cli\nA:PE1# ",
			"environment no more", "environment no more\nA:PE1# ",
			"admin display-config", "admin display-config\n"+cfg+"\n\nA:PE1# ")
		outs, errs := pdRun(t, "nokia_sros", rec, classicPager, "admin display-config")
		if errs[0] != nil || outs[0] != want+"\n" {
			t.Fatalf("err %v, output differs:\n%q", errs[0], outs[0])
		}
	})
	t.Run("model-driven", func(t *testing.T) {
		md := "    configure {\n        system {\n            name \"PE1\"\n        }\n    }"
		rec := pdScript("\n[/]\nA:admin@PE1# ",
			"environment more false", "environment more false\n\n[/]\nA:admin@PE1# ",
			"/!classic-cli", "/!classic-cli\nMINOR: CLI #2069: Classic CLI engine not authorized\n\n[/]\nA:admin@PE1# ",
			"environment no more", "environment no more\n            ^^\nMINOR: MGMT_CORE #2201: Unknown element - 'no'\n\n[/]\nA:admin@PE1# ",
			"admin display-config", "admin display-config\n      ^^^^^^^^^^^^^^\nMINOR: MGMT_CORE #2201: Unknown element - 'display-config'\n\n[/]\nA:admin@PE1# ",
			"admin show configuration", "admin show configuration\n"+md+"\n\n[/]\nA:admin@PE1# ")
		outs, errs := pdRun(t, "nokia_sros", rec, replayOptions{}, "admin display-config", "admin show configuration")
		if !errors.Is(errs[0], ErrRejected) {
			t.Errorf("admin display-config on a model-driven node: err = %v, want ErrRejected", errs[0])
		}
		if errs[1] != nil || outs[1] != md+"\n" {
			t.Fatalf("admin show configuration: err %v, output %q", errs[1], outs[1])
		}
	})
}

// TestCienaSAOS6 backs up a SAOS 6 device with the template command
// `configuration show`: SAOS 10's paging command is refused, the asterisk
// the prompt gains once the configuration is unsaved does not stop the
// session from recognising it, and the pager is answered.
func TestCienaSAOS6(t *testing.T) {
	var cfg strings.Builder
	cfg.WriteString("! CONFIGURATION SHOW\n!\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&cfg, "port set port %d description \"uplink-%d\"\n", i, i)
	}
	cfg.WriteString("!\n! END OF CONFIG FILE\n!")
	rec := pdScript("\nSAOS is True Carrier Ethernet TM software.\n\nSW-3930> ",
		"set session more off", "set session more off\nSHELL PARSER FAILURE: 'set' - invalid input\nSW-3930> ",
		"system shell session set more off", "system shell session set more off\nSW-3930> ",
		"configuration show", "configuration show\n"+cfg.String()+"\nSW-3930*> ")
	outs, errs := pdRun(t, "ciena_saos", rec, replayOptions{pager: "Press any key to continue (Q to quit)", pageLines: 20}, "configuration show")
	if want := strings.Join(CleanLines([]byte(cfg.String())), "\n"); errs[0] != nil || outs[0] != want {
		t.Fatalf("err %v, output %q", errs[0], outs[0])
	}
}

// TestFirewareLogonDisclaimer: a Firebox with a Logon Disclaimer asks for
// its acceptance before the first prompt (XTM 11.9.3 and later); the
// session accepts it and backs up.
func TestFirewareLogonDisclaimer(t *testing.T) {
	xml := "<?xml version=\"1.0\"?>\n<profile>\n  <system-parameters>\n  </system-parameters>\n</profile>"
	rec := pdScript("\nAuthorised access only.\nI have read and accept the Logon Disclaimer message. (yes or no)? ",
		"yes", "yes\n--\n-- WatchGuard Fireware OS Version 12.10.3\n--\nWG#",
		"export config to console", "export config to console\n"+xml+"\nWG#")
	outs, errs := pdRun(t, "watchguard_fireware", rec, replayOptions{}, "export config to console")
	if errs[0] != nil || outs[0] != xml {
		t.Fatalf("err %v, output %q", errs[0], outs[0])
	}
}

// TestPDPrompts: the prompts each platform prints match its prompt
// pattern (Oxidized's examples for SonicOS and Fireware, the CN5171
// recording for SAOS 10, the vendors' guides for the rest), and lines of
// their configurations that end in '>' or '#' do not.
func TestPDPrompts(t *testing.T) {
	for id, c := range map[string]struct{ yes, no []string }{
		"nokia_sros": {
			yes: []string{"A:PE1#", "*A:PE1#", "B:PE1#", "A:PE1>config>router#", "A:admin@PE1#", "*A:pe-1.lab#"},
			no:  []string{"#", "exit all", "# Generated THU NOV 25 10:11:12 2026 UTC", "        name \"PE1\"", "echo \"System Configuration\""},
		},
		"ciena_saos": {
			yes: []string{"LAB-CN5171-1>", "SW-3930*>", "5160>"},
			no:  []string{"exit", "system config hostname \"LAB-CN5171-1\" description \"5171\"", "! END OF CONFIG FILE"},
		},
		"huawei_smartax": {
			yes: []string{"MA5800-X7>", "MA5800-X7#", "MA5800-X7(config)#", "MA5800-X7(config-if-gpon-0/1)#"},
			no:  []string{"#", "[global-config]", "  <global-config>", " sysname MA5800-X7", "return"},
		},
		"zte_zxros": {
			yes: []string{"ZXR10>", "ZXR10#", "ZXR10(config)#", "ZXR10(config-if-gei-0/1/0/1)#"},
			no:  []string{"!<if-intf>", "!</if-intf>", "$", "end"},
		},
		"sonicwall_sonicos": {
			yes: []string{"admin@012345>", "admin@host-with-minus>", "admin@C0EAE4123456>", "config(C0EAE4123456)#"},
			no:  []string{"exit", "    firewall-name fw1", "administration"},
		},
		"watchguard_fireware": {
			yes: []string{"[FAULT]WG<managed-by-wsm><master>>", "WG<managed-by-wsm><master>>", "WG<managed-by-wsm>>",
				"[FAULT]WG<non-master>>", "[FAULT]WG>", "WG>", "WG#", "WG(config)#"},
			no: []string{"</profile>", "<profile>", "  </system-parameters>", "<?xml version=\"1.0\"?>"},
		},
		"extreme_voss": {
			yes: []string{"VSP-8284:1>", "VSP-8284:1#", "VSP-8284:1(config)#", "VSP-8284:1(config-if)#"},
			no:  []string{"#", "# SYSTEM CONFIGURATION", "end", "config terminal"},
		},
	} {
		d, ok := DialogueFor(id)
		if !ok {
			t.Errorf("no platform %s", id)
			continue
		}
		for _, p := range c.yes {
			if !d.Prompt.MatchString(p) {
				t.Errorf("%s: prompt %q not recognised", id, p)
			}
		}
		for _, l := range c.no {
			if d.Prompt.MatchString(l) {
				t.Errorf("%s: configuration line %q taken for a prompt", id, l)
			}
		}
	}
}

// pdPlatforms are this file's platforms with their default command.
var pdPlatforms = []string{"nokia_sros", "ciena_saos", "huawei_smartax", "zte_zxros", "sonicwall_sonicos", "watchguard_fireware", "extreme_voss"}

// TestPDNoiseSimulator shows two backups of an unchanged simulated device,
// an hour apart, on each platform: where the text differs (Nokia's
// Generated/Finished stamps, VOSS's header date) the platform's noise rules
// make the two equal, and a real change (the device mutated) still shows.
func TestPDNoiseSimulator(t *testing.T) {
	for _, id := range pdPlatforms {
		t.Run(id, func(t *testing.T) {
			now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
			var mu sync.Mutex
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); now = now.Add(time.Hour); return now }
			d, err := devsim.NewDevice(devsim.Options{Platform: id, Seed: 7, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			cmd := DefaultCommands(id)
			first, _ := d.Show(cmd)
			second, ok := d.Show(cmd)
			if !ok {
				t.Fatalf("the simulator does not answer %q", cmd)
			}
			rules := NoiseRules(id)
			if applyNoise(rules, first) != applyNoise(rules, second) {
				t.Errorf("two backups of an unchanged device differ after the noise rules")
			}
			volatile := map[string]bool{"nokia_sros": true, "extreme_voss": true}[id]
			if (first != second) != volatile {
				t.Errorf("raw backups differ: %v, want %v", first != second, volatile)
			}
			d.Mutate(42)
			third, _ := d.Show(cmd)
			if applyNoise(rules, third) == applyNoise(rules, second) {
				t.Errorf("a real change disappears under the noise rules")
			}
		})
	}
}

// TestPDNoiseLines: each noise rule takes the lines it is meant for and
// leaves the configuration lines around them alone.
func TestPDNoiseLines(t *testing.T) {
	for _, c := range []struct {
		platform string
		noise    []string
		config   []string
	}{
		{"nokia_sros",
			[]string{"# Generated THU NOV 25 10:11:12 2026 UTC", "# Finished TUE FEB 09 14:10:30 2021 UTC",
				"# TiMOS-B-20.10.R3 both/x86_64 Nokia 7750 SR Copyright (c) 2000-2021 Nokia.",
				"# Built on Wed Jan 27 13:21:10 PST 2021 by builder in /builds/c/2010B/R3/panos/main/sros"},
			[]string{"# Configuration format version 20.10 revision 0", "        description \"# Generated THU NOV 25\"",
				"echo \"System Configuration\"", "        name \"PE1\""}},
		{"ciena_saos",
			[]string{"! Created: Fri Jun 27 12:26:32 2025", "! On terminal: /dev/pts/0"},
			[]string{"system config hostname \"LAB-CN5171-1\" description \"5171\" ", "exit", "! END OF CONFIG FILE"}},
		{"huawei_smartax",
			[]string{"[MA5800V100R019: 8101]", "[MA5600V800R013: 3101]"},
			[]string{"[global-config]", "  <global-config>", " sysname MA5800-X7"}},
		{"sonicwall_sonicos",
			[]string{`system-time "06/27/2025 12:26:32.123"`, `    system-uptime "3 Days, 4 Hours, 5 Minutes"`, "checksum 1234567"},
			[]string{"    firewall-name fw1", `address-object ipv4 "system-time"`, "    comment \"checksum 12\""}},
		{"extreme_voss",
			[]string{"# Wed Nov 25 10:11:12 2026 UTC", "# Tue Nov  3 09:00:00 2026", "# software version     : 8.10.0.0"},
			[]string{"# box type             : VSP-8284XSQ", "# SYSTEM CONFIGURATION", "prompt \"VSP-8284\""}},
	} {
		rules := NoiseRules(c.platform)
		hit := func(l string) bool {
			return slices.ContainsFunc(rules, func(re *regexp.Regexp) bool { return re.MatchString(l) })
		}
		for _, l := range c.noise {
			if !hit(l) {
				t.Errorf("%s: %q is not noise", c.platform, l)
			}
		}
		for _, l := range c.config {
			if hit(l) {
				t.Errorf("%s: configuration line %q is taken for noise", c.platform, l)
			}
		}
	}
}

// TestEnableWithoutPassword: SmartAX and VOSS raise the login to "#" with
// `enable` without asking a password (the simulator always asks one); the
// session carries on with no enable password set, answers the device's
// own pager, and removes SmartAX's cursor-left escapes.
func TestEnableWithoutPassword(t *testing.T) {
	var body strings.Builder
	for i := 1; i <= 45; i++ {
		fmt.Fprintf(&body, " vlan %d smart\n", 100+i)
	}
	cases := []struct {
		platform, pager string
		rec             recording
		cmd, want       string
	}{
		{"huawei_smartax", "---- More ( Press 'Q' to break ) ----",
			pdScript("\n  Huawei Integrated Access Software (MA5800).\n\nMA5800-X7>",
				"enable", "enable\n\nMA5800-X7#",
				"undo smart", "undo smart\n\nMA5800-X7#",
				"undo interactive", "undo interactive\n\nMA5800-X7#",
				"infoswitch cli OFF", "infoswitch cli OFF\n\nMA5800-X7#",
				"scroll", "scroll \x1b[1D\n\nMA5800-X7#",
				"display current-configuration", "display current-configuration\n[MA5800V100R019: 8101]\n#\n[global-config]\n  <global-config>\n"+body.String()+"#\nreturn\n\nMA5800-X7#"),
			"display current-configuration", "[MA5800V100R019: 8101]\n#\n[global-config]\n  <global-config>\n" + body.String() + "#\nreturn\n"},
		{"extreme_voss", "----More (q=Quit, space/return=Continue, ^P=Toggle on/off)----",
			pdScript("\nVSP-8284:1>",
				"enable", "enable\nVSP-8284:1#",
				"terminal more disable", "terminal more disable\nVSP-8284:1#",
				"show running-config", "show running-config\nPreparing to Display Configuration...\n#\n# Wed Nov 25 10:11:12 2026 UTC\n#\n"+body.String()+"end\nVSP-8284:1#"),
			"show running-config", "Preparing to Display Configuration...\n#\n# Wed Nov 25 10:11:12 2026 UTC\n#\n" + body.String() + "end"},
	}
	for _, c := range cases {
		t.Run(c.platform, func(t *testing.T) {
			outs, errs := pdRun(t, c.platform, c.rec, replayOptions{pager: c.pager, pageLines: 20}, c.cmd)
			if errs[0] != nil || outs[0] != c.want {
				t.Fatalf("err %v, output differs:\n%q\nwant\n%q", errs[0], outs[0], c.want)
			}
		})
	}
}
