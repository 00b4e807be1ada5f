package driver

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Recordings of real pfSense/OPNsense, TNSR, Cumulus Linux and F5 BIG-IP
// sessions (Oxidized's model test data, testdata/recordings/README.md).
// Check Point Gaia, Ubiquiti EdgeOS, Opengear and pfSense have no public
// capture: their personalities in app/devsim are written from the
// vendors' documentation and prove them on the simulator only.
func init() {
	addCaptures(
		// TNSR pages with "--More--" and wipes it with backspaces; the
		// anonymised recordings end with another host's prompt, which the
		// session takes once the device falls silent.
		capture{file: "tnsr_TNSR_24.10-3_short-config", platform: "netgate_tnsr", pager: "--More--",
			wantLines: []string{"system name tnsr-dev-24-10.example.com", "    ip dhcp-client enable", "sysctl kernel shmmax 2147483648", "    port outgoing range 4096"}},
		// 25.02, a long configuration: the pager stops "show version all"
		// too, and after the last page the device prints "--More--" once
		// more, whose answer brings only the wipe and the prompt.
		capture{file: "tnsr_TNSR_25.02-2_long-config-and-pager-at-last-line", platform: "netgate_tnsr", pager: "--More--",
			wantLines: []string{
				"                         vpp 24.10-175+tnsr-v25.02-2+jammy+D24.07",
				"    password $6$REMOVED123.REMOVED/123",
				"snmp access group-name ROGroup prefix exact model any level noauth read systemview write none",
			}},
		// 23.06 sometimes prints "--More--" at the end of a line of the
		// configuration rather than on its own line ("... read
		// systemvi--More--"), then wipes it with backspaces: the pager
		// must be answered there too, and the text before it kept.
		capture{file: "tnsr_TNSR_23.06-3_with-misplaced-pager", platform: "netgate_tnsr", pager: "--More--",
			oxidizedOutput: "tnsr_TNSR_23.06-3_with-misplaced-pager_output.txt",
			wantLines: []string{
				"snmp access group-name ROGroup prefix exact model any level noauth read systemview write none",
				"snmp access group-name ROGroup prefix exact model v2c level noauth read systemvi",
				"    global authentication-type user",
				"    harden glue",
			},
			rejected: []string{"show version all"}},
		capture{file: "tnsr_TNSR_23.11-3_short-config", platform: "netgate_tnsr", pager: "--More--",
			// 23.11 has no "show version all"; its refusal is the CLI's own
			// error ("CLI syntax error: ...: Unknown command").
			wantLines: []string{"configuration history enable", "nacm enable"}, rejected: []string{"show version all"}},
		// NVUE on an MSN2010 (5.9.2), in bash after the login banner, with
		// bash's bracketed-paste switches around each command. The
		// recording holds "nv config show --color off" (YAML) rather than
		// the default's "nv config show -o commands": same data, another
		// form; the session handling is the same.
		capture{file: "cumulus_MSN2010_5.9.2_nvue", platform: "cumulus_linux",
			wantLines: []string{"    version: Cumulus Linux 5.9.2", "        autonomous-system: 65432"}},
		// OPNsense 24.7 over exec: the whole config.xml, password hashes
		// and the web GUI's private key included, as a restore needs it.
		capture{file: "opnsense_nano_24.7", platform: "opnsense", exec: true,
			config:  "cat /conf/config.xml",
			unknown: "show: Command not found.\n",
			wantLines: []string{
				`<?xml version="1.0"?>`,
				"    <hostname>OPNsense</hostname>",
				"      <password>$2y$10$YRVoF4SgskIsrXOvOQjGieB9XqHPRra9R7d80B3BZdbY/j21TwBfS</password>",
				"</opnsense>",
			}},
		// BIG-IP tenant over exec: tmsh for the configuration, bash for
		// the files.
		capture{file: "tmos_BIG-IP-Tenant", platform: "f5_tmos", exec: true,
			config:  "tmsh -q list",
			unknown: "bash: show: command not found\n",
			wantLines: []string{
				"auth user test {",
				"    encrypted-password xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
				"ltm virtual XXX_admin {",
				"sys url-db download-schedule urldb { }",
			}},
	)
}

// TestReplayCumulusFRRWithSudo replays Cumulus VX 5.4 (FRR files read as
// root): the session raises privilege with "sudo su -" and the login
// password, as the platform's enable step does when an enable password
// is set, then reads each file. The shared replay (TestReplayCaptures)
// cannot run this recording: it starts sessions without an enable
// password.
func TestReplayCumulusFRRWithSudo(t *testing.T) {
	d, ok := DialogueFor("cumulus_linux")
	if !ok {
		t.Fatal("no dialogue for cumulus_linux")
	}
	rec := loadRecording(t, "cumulus_VX_5.4.0_frr")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client, server := tcpPair(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); rec.replay(server, replayOptions{}) }()
	defer func() { client.Close(); wg.Wait() }()

	s := NewSession(client, d, 4<<20)
	if err := s.Start(ctx, "armud"); err != nil {
		t.Fatalf("start with sudo: %v", err)
	}
	if s.Prompt() != "root@cumulus:mgmt:~#" {
		t.Fatalf("prompt after sudo = %q, want root's", s.Prompt())
	}
	if rec.steps[0].sent != "sudo su -\n" || rec.steps[1].sent != "armud\n" {
		t.Fatalf("recording starts with %q, %q; want sudo and the password", rec.steps[0].sent, rec.steps[1].sent)
	}
	files := 0
	for i := 2; i < len(rec.steps); {
		cmd := strings.TrimSuffix(rec.steps[i].sent, "\n")
		if cmd == "exit" {
			break
		}
		want, next := rec.expected(i, "")
		if strings.HasSuffix(cmd, "; echo") {
			// The recording was edited: the device echoes the command
			// without "; echo", which is then not recognised as the echo.
			want = strings.TrimSuffix(cmd, "; echo") + "\n" + want
		}
		i = next
		got, err := s.Run(ctx, cmd)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if got != want {
			t.Errorf("%s: output differs from the recording\ngot:\n%s\nwant:\n%s", cmd, got, want)
		}
		if strings.ContainsAny(got, "\r\x1b\b") || strings.Contains(got, "root@cumulus") {
			t.Errorf("%s: output keeps terminal debris or the prompt", cmd)
		}
		files++
	}
	if files < 20 {
		t.Errorf("replayed %d commands, want the recording's 21", files)
	}
}

// TestReplayCumulusSudoRefused: without an enable password the session
// does not try sudo, and with a wrong one it reports an enable failure
// rather than hanging at the password question.
func TestReplayCumulusSudoRefused(t *testing.T) {
	d, _ := DialogueFor("cumulus_linux")
	rec := loadRecording(t, "cumulus_VX_5.4.0_frr")
	// The device asks again, as sudo does after a wrong password.
	rec.steps = []step{{"sudo su -\n", "sudo su -\r\n[sudo] password for cumulus: "}, {"wrong\n", "\r\nSorry, try again.\r\n[sudo] password for cumulus: "}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, server := tcpPair(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); rec.replay(server, replayOptions{}) }()
	defer func() { client.Close(); wg.Wait() }()
	err := NewSession(client, d, 1<<20).Start(ctx, "wrong")
	if err == nil || !strings.Contains(err.Error(), ErrEnable.Error()) {
		t.Fatalf("Start with a wrong sudo password: %v, want an enable failure", err)
	}
}

// noisyLines returns the lines of text any rule of platform matches.
func noisyLines(platform string, lines []string) []string {
	var got []string
	for _, l := range lines {
		if slices.ContainsFunc(NoiseRules(platform), func(re *regexp.Regexp) bool { return re.MatchString(l) }) {
			got = append(got, l)
		}
	}
	return got
}

// Configurations the captured devices printed, with the lines the noise
// rules must match (TestNoiseRulesRecordings).
func init() {
	addNoiseRecordings(
		noiseRecording{"f5_tmos", "tmos_BIG-IP-Tenant", "tmsh -q list\n", []string{
			"    create-time 2026-09-29:00:00:00",
			"    last-update-time 2026-09-29:00:00:00",
			"    revision 4",
		}},
		noiseRecording{"opnsense", "opnsense_nano_24.7", "cat /conf/config.xml\n", []string{
			"    <username>root@192.168.100.1</username>",
			"    <time>1738069858.4778</time>",
		}},
		noiseRecording{"netgate_tnsr", "tnsr_TNSR_24.10-3_short-config", "show configuration running cli\n", nil},
		noiseRecording{"netgate_tnsr", "tnsr_TNSR_25.02-2_long-config-and-pager-at-last-line", "show configuration running cli\n", nil},
		noiseRecording{"cumulus_linux", "cumulus_MSN2010_5.9.2_nvue", "nv config show --color off\n", nil},
	)
}

// Two outputs of an unchanged device that differ only in noise, and a
// real change (TestNoiseRulesBeforeAfter).
func init() {
	addNoiseBeforeAfters(
		noiseBeforeAfter{"gaia export time", "checkpoint_gaia",
			"#\n# Configuration of gw-01\n# Language version: 15.0v1\n#\n# Exported by admin on Wed Nov 25 15:35:00 2026\n#\nset hostname gw-01\nset interface eth1 state on",
			"#\n# Configuration of gw-01\n# Language version: 15.0v1\n#\n# Exported by backup on Thu Nov  5 02:00:01 2026\n#\nset hostname gw-01\nset interface eth1 state on",
			[2]string{"set interface eth1 state on", "set interface eth1 state off"}},
		noiseBeforeAfter{"pfsense save without change", "pfsense",
			"<pfsense>\n\t<system>\n\t\t<hostname>fw1</hostname>\n\t</system>\n\t<filter>\n\t\t<rule>\n\t\t\t<type>pass</type>\n\t\t</rule>\n\t</filter>\n\t<revision>\n\t\t<time>1738069858</time>\n\t\t<description><![CDATA[admin@192.0.2.10 (Local Database): /system.php made changes]]></description>\n\t\t<username>admin@192.0.2.10 (Local Database)</username>\n\t</revision>\n\t<last_rule_upd_time>1738069858</last_rule_upd_time>\n</pfsense>",
			"<pfsense>\n\t<system>\n\t\t<hostname>fw1</hostname>\n\t</system>\n\t<filter>\n\t\t<rule>\n\t\t\t<type>pass</type>\n\t\t</rule>\n\t</filter>\n\t<revision>\n\t\t<time>1740000123</time>\n\t\t<description><![CDATA[admin@192.0.2.10 (Local Database): /system.php made changes]]></description>\n\t\t<username>admin@192.0.2.77 (Local Database)</username>\n\t</revision>\n\t<last_rule_upd_time>1740000999</last_rule_upd_time>\n</pfsense>",
			[2]string{"\t\t\t<type>pass</type>", "\t\t\t<type>block</type>"}},
		noiseBeforeAfter{"opnsense save without change", "opnsense",
			"<opnsense>\n  <system>\n    <hostname>OPNsense</hostname>\n  </system>\n  <revision>\n    <username>root@192.168.100.1</username>\n    <time>1738069858.4778</time>\n    <description>user \"oxidized\" changed</description>\n  </revision>\n</opnsense>",
			"<opnsense>\n  <system>\n    <hostname>OPNsense</hostname>\n  </system>\n  <revision>\n    <username>root@192.168.100.7</username>\n    <time>1739999999.1</time>\n    <description>user \"oxidized\" changed</description>\n  </revision>\n</opnsense>",
			[2]string{"    <hostname>OPNsense</hostname>", "    <hostname>fw2</hostname>"}},
		noiseBeforeAfter{"tmos monitor state and sync", "f5_tmos",
			"ltm pool p1 {\n    members {\n        10.0.0.1:80 {\n            address 10.0.0.1\n            state up\n        }\n    }\n}\nsys file ssl-cert a.crt {\n    checksum SHA1:1:ab\n    create-time 2026-09-29:00:00:00\n    last-update-time 2026-09-29:00:00:00\n    revision 4\n    size 1\n}",
			"ltm pool p1 {\n    members {\n        10.0.0.1:80 {\n            address 10.0.0.1\n            state down\n        }\n    }\n}\nsys file ssl-cert a.crt {\n    checksum SHA1:1:ab\n    create-time 2026-10-01:10:00:00\n    last-update-time 2026-10-01:10:00:00\n    revision 5\n    size 1\n}",
			[2]string{"    checksum SHA1:1:ab", "    checksum SHA1:1:cd"}},
	)
}

// TestNoiseRulesKeepConfigurationPC: configuration lines close to this
// family's noise match no rule: a pool member an administrator forced
// down, a revision element with text, an interface description that
// quotes the export header, a <time> that is not an epoch.
func TestNoiseRulesKeepConfigurationPC(t *testing.T) {
	for _, l := range []string{
		"            state user-down",
		"            session user-disabled",
		"    description \"revision 4\"",
		"    revision-history 4",
		"set interface eth1 comments \"# Exported by admin on Wed Nov 25 15:35:00 2026\"",
		"\t\t<time>08:00</time>",
		"\t\t<descr><![CDATA[admin@192.0.2.10]]></descr>",
		"\t\t<username>vpnuser</username>",
		"    last-modified-time 2026-09-29:00:00:00",
		"    creation-time 2026-09-29:00:00:00",
	} {
		for _, id := range IDs() {
			for _, re := range NoiseRules(id) {
				if re.SubexpIndex(MaskGroup) < 0 && re.MatchString(l) {
					t.Errorf("%s: rule %s matches configuration line %q", id, re, l)
				}
			}
		}
	}
}
