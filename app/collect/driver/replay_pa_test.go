package driver

import (
	"bufio"
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// Captures of real ArubaOS, Aruba Instant and FTD devices (Oxidized's
// model test data). The Cisco small-business, AireOS and Dell platforms
// have no public capture: they are proven on the simulator only.
func init() {
	addCaptures(
		capture{file: "aosw_Aruba7210_8.10.0.7", platform: "aruba_os",
			pager:     "--More-- (q) quit (u) pageup (/) search (n) repeat",
			wantLines: []string{"version 8.10", "change-config-node /", "end"}},
		// The capture has no pager (and no paging command); Instant runs
		// ArubaOS, so the replay forces the controllers' pager on it.
		capture{file: "arubainstant_IAP515_8.10.0.6_VWLC", platform: "aruba_instant",
			pager: "--More-- (q) quit (u) pageup (/) search (n) repeat",
			wantLines: []string{
				"virtual-controller-key AAAAAAAAAABBBBBBBBBBCCCCCCCCCC",
				"hash-mgmt-password",
				" wpa-passphrase AAAAAAAAAABBBBBBBBBBCCCCCCCCCC",
			}},
		// The FTD capture shows no pager and no command to turn one off.
		capture{file: "firelinuxos_FPR-1010_7.4.2", platform: "cisco_ftd",
			wantLines: []string{"hostname FPR-12345", " nameif OUTSIDE", "Cryptochecksum:70000cafe00000000000effffaaaacd0", ": end"}},
	)
}

// Configurations the captured devices printed, with the lines the noise
// rules must match (TestNoiseRulesRecordings).
func init() {
	addNoiseRecordings(
		noiseRecording{"cisco_ftd", "firelinuxos_FPR-1010_7.4.2", "show running-config all\n", []string{
			": Saved",
			"Cryptochecksum:70000cafe00000000000effffaaaacd0",
		}},
		noiseRecording{"aruba_os", "aosw_Aruba7210_8.10.0.7", "show running-config\n", nil},
		noiseRecording{"aruba_instant", "arubainstant_IAP515_8.10.0.6_VWLC", "show running-config no-encrypt\n", nil},
	)
}

// Two outputs of an unchanged device that differ only in noise, and a
// real change (TestNoiseRulesBeforeAfter).
func init() {
	addNoiseBeforeAfters(
		noiseBeforeAfter{"wlc-rogues", "cisco_wlc",
			"config sysname wlc1\nconfig rogue ap timeout 1200\nconfig rogue adhoc alert 3c:a8:2a:10:20:30\nconfig rogue client alert 00:11:22:33:44:55\nconfig wlan enable 1",
			"config sysname wlc1\nconfig rogue ap timeout 1200\nconfig rogue adhoc alert e8:26:89:aa:bb:cc\nconfig rogue client alert 7c:57:3c:01:02:03\nconfig wlan enable 1",
			[2]string{"config wlan enable 1", "config wlan disable 1"}},
		noiseBeforeAfter{"powerconnect-sflow", "dell_powerconnect",
			"hostname pc1\nsflow receiver 1 192.0.2.50\nsflow 1 destination owner 1 timeout 86393\nip ssh server",
			"hostname pc1\nsflow receiver 1 192.0.2.50\nsflow 1 destination owner 1 timeout 80017\nip ssh server",
			[2]string{"sflow 1 destination owner 1 timeout 80017", "sflow 1 destination owner 2 timeout 80017"}},
		noiseBeforeAfter{"os9-header", "dell_os9",
			"Current Configuration ...\n! Version 9.14(2.4)\n! Last configuration change at Mon Nov 3 10:11:12 2025 by admin\n! Startup-config last updated at Mon Nov 3 10:11:40 2025 by admin\n!\nhostname s4048",
			"Current Configuration ...\n! Version 9.14(2.4)\n! Last configuration change at Tue Nov 4 02:00:00 2025 by backup\n! Startup-config last updated at Mon Nov 3 10:11:40 2025 by admin\n!\nhostname s4048",
			[2]string{"hostname s4048", "hostname s4048-b"}},
		noiseBeforeAfter{"ftd-deploy", "cisco_ftd",
			": Saved\n\n: \n: Serial Number: JAD20000AAA\nNGFW Version 7.4.2 \nhostname FPR-12345\nCryptochecksum:70000cafe00000000000effffaaaacd0\n: end",
			"\n: \n: Serial Number: JAD20000AAA\nNGFW Version 7.4.2 \nhostname FPR-12345\nCryptochecksum:1b2c3d4e5f60718293a4b5c6d7e8f901\n: end",
			[2]string{"hostname FPR-12345", "hostname FPR-12346"}},
	)
}

// TestPromptsPA holds the prompts the platforms print, from the public
// captures and Oxidized's prompt tests (AOS 8 configuration nodes with the
// unsaved "*" and pending "^" marks), and lines that must not pass as one.
func TestPromptsPA(t *testing.T) {
	for _, c := range []struct {
		platform string
		good     []string
		bad      []string
	}{
		{"aruba_os", []string{"(OXID-IZE01) [mynode] #", "(AAAA-WLC42) ^[mynode] #", "(AAAA-WLC42) *[mynode] #",
			"(AAAA-WLC42) *[/] #", "(AAAA-WLC42) [mm] #", "(Aruba7030) #", "(Aruba7030) >", "(host) [md] (config) #"},
			[]string{"end", "!", "mgmt-user admin root ****", "Building Configuration..."}},
		{"aruba_instant", []string{"OXRO-AP111117#", "AAAA-AP123456#", "AP-515>", "AP-515 (config) #"},
			[]string{"end", "allowed-ap 54:d7:e3:00:11:22", "rule any any match any any any permit"}},
		{"cisco_ftd", []string{">"}, []string{"firepower#", "! ...", ": end"}},
		{"cisco_wlc", []string{"(Cisco Controller) >", "(WLC-1) >", "(Cisco Controller) config>"},
			[]string{"config sysname wlc1", "(Cisco Controller)"}},
		{"cisco_smb", []string{"switch#", "switch>", "switch(config)#", "switch(config-if)#"}, []string{"exit", "User Name:"}},
		{"dell_powerconnect", []string{"console#", "console>", "Lab Switch 1#", "console(config-if-1/0/1)#"}, []string{"exit"}},
		{"dell_os6", []string{"console#", "console>", "console(config)#"}, []string{"exit"}},
		{"dell_os9", []string{"Dell#", "Dell>", "Dell(conf)#", "Dell(conf-if-te-1/1)#"}, []string{"end", "!"}},
	} {
		d, _ := DialogueFor(c.platform)
		for _, p := range c.good {
			if !d.Prompt.MatchString(p) {
				t.Errorf("%s: prompt %q not recognised", c.platform, p)
			}
		}
		for _, p := range c.bad {
			if d.Prompt.MatchString(p) {
				t.Errorf("%s: %q taken for a prompt", c.platform, p)
			}
		}
	}
	// The AOS unsaved and pending marks come and go between commands.
	s := &Session{d: mustDialogue(t, "aruba_os")}
	if s.normPrompt("(AAAA-WLC42) *[mynode] #") != s.normPrompt("(AAAA-WLC42) [mynode] #") ||
		s.normPrompt("(AAAA-WLC42) ^[mynode] #") != s.normPrompt("(AAAA-WLC42) [mynode] #") {
		t.Error("the unsaved/pending mark changes the AOS prompt")
	}
}

func mustDialogue(t *testing.T, id string) Dialogue {
	t.Helper()
	d, ok := DialogueFor(id)
	if !ok {
		t.Fatalf("no dialogue for %s", id)
	}
	return d
}

// credentialDevice plays a command line that asks for the username and
// password after the SSH login, as AireOS does. It records the lines it
// got; accept decides whether the login passes.
func credentialDevice(conn net.Conn, accept bool, got chan<- []string) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	var lines []string
	defer func() { got <- lines }()
	readLine := func() bool {
		l, err := r.ReadString('\n')
		if err == nil {
			lines = append(lines, strings.TrimRight(l, "\r\n"))
		}
		return err == nil
	}
	for attempt := 0; attempt < 3; attempt++ {
		if _, err := conn.Write([]byte("\r\n(Cisco Controller)\r\nUser: ")); err != nil || !readLine() {
			return
		}
		if _, err := conn.Write([]byte("Password:")); err != nil || !readLine() {
			return
		}
		if accept {
			break
		}
	}
	// The command line: every line gets its echo and the prompt.
	for _, err := conn.Write([]byte("\r\n(Cisco Controller) >")); err == nil && readLine(); {
		_, err = conn.Write([]byte(lines[len(lines)-1] + "\r\n\r\n(Cisco Controller) >"))
	}
}

// TestCredentialAnswers: the platform's pre-login answers fill in the
// session's username and password, give each once, and a command line
// that asks again fails the login instead of being fed the password again.
func TestCredentialAnswers(t *testing.T) {
	for _, accept := range []bool{true, false} {
		client, server := tcpPair(t)
		got := make(chan []string, 1)
		go credentialDevice(server, accept, got)
		s := NewSession(client, mustDialogue(t, "cisco_wlc"), 1<<20)
		s.SetUsername("backup")
		s.SetPassword("S3cret-pw")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.Start(ctx, "")
		cancel()
		client.Close()
		lines := <-got
		switch {
		case accept && err != nil:
			t.Errorf("accepted login: %v", err)
		case accept && !slices.Equal(lines[:2], []string{"backup", "S3cret-pw"}):
			t.Errorf("device got %q, want the username then the password", lines)
		case accept && s.Prompt() != "(Cisco Controller) >":
			t.Errorf("prompt %q", s.Prompt())
		case !accept && !errors.Is(err, ErrLoginRefused):
			t.Errorf("refused login: err = %v, want ErrLoginRefused", err)
		case accept && !slices.Contains(lines, "config paging disable"):
			t.Errorf("paging was not turned off after the login: %q", lines)
		case !accept && len(lines) != 2:
			t.Errorf("refused login: device got %d lines %q, want the credentials once", len(lines), lines)
		}
		if err != nil && strings.Contains(err.Error(), "S3cret-pw") {
			t.Errorf("error names the password: %v", err)
		}
	}
}
