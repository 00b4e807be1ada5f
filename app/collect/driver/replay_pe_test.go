package driver

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Captures of real Perle IOLAN and Eaton Network-M3 devices (Oxidized's
// model test data; see testdata/recordings/README.md).
//
// The Perle capture has "terminal length 0" first, so its pager never
// showed: the replay forces the Cisco-style " --More-- " that the
// platform's pager pattern answers (the SCG's own pager text is not in
// any public recording). The Eaton card was recorded over SSH exec
// requests; its reply to an unknown command is not recorded, so the
// replay uses the simulator's. The recorded export was made with an empty
// passphrase; the default command gives one (see the platform's notes).
func init() {
	addCaptures(
		capture{file: "perle_SCG50-RRU_6.2.G3", platform: "perle_iolan", pager: " --More-- ",
			wantLines: []string{
				"Building running-config . . .",
				"version 6.2.G3",
				"service sequence-numbers",
				"tty 3 mode line",
				"! ***** END of configuration *****",
			}},
		capture{file: "eatonnetwork_NetworkM3_2.2.0", platform: "eaton_network", exec: true,
			config:  "save_configuration -p ",
			unknown: "Unknown command: show\n",
		},
	)
}

// peConfig is the configuration a recording printed for command.
func peConfig(t *testing.T, file, command string) string {
	t.Helper()
	rec := loadRecording(t, file)
	for _, st := range rec.steps {
		if st.sent == command {
			return strings.Join(CleanLines([]byte(st.reply)), "\n")
		}
	}
	t.Fatalf("%s: no %q", file, command)
	return ""
}

// TestPENoiseOnCaptures applies the Eaton rules to the export a real card
// printed: every encrypted value, the passphrase check and the last login
// attempt are masked, nothing else of the line is; an export with new
// salts and a later login attempt compares equal, and a changed setting
// does not. No rule of another platform touches the line.
func TestPENoiseOnCaptures(t *testing.T) {
	export := peConfig(t, "eatonnetwork_NetworkM3_2.2.0", "save_configuration -p \n")
	if strings.Count(export, "\n") != 0 || !strings.HasPrefix(export, "{") {
		t.Fatalf("the card's export is not one line of JSON")
	}
	rules := NoiseRules("eaton_network")
	masked := applyNoise(rules, export)
	if n := strings.Count(export, `"cyphered":"`); n < 10 || strings.Count(masked, `"cyphered":"#"`) != n {
		t.Errorf("%d encrypted values, %d masked", n, strings.Count(masked, `"cyphered":"#"`))
	}
	for _, want := range []string{`"passphrase":"#"`, `"lastAttemptISO":"#"`, `"unsuccessfullTries":#`} {
		if !strings.Contains(masked, want) {
			t.Errorf("masked export lacks %s", want)
		}
	}
	// What is left is the configuration: the masked text differs from the
	// original only inside the masked values.
	reMasked := regexp.MustCompile(`"(?:cyphered|passphrase|lastAttemptISO)":"#"|"unsuccessfullTries":#`)
	if got, want := len(reMasked.FindAllString(masked, -1)), strings.Count(export, `"cyphered":"`)+3; got != want {
		t.Errorf("%d masks, want %d", got, want)
	}
	again := regexp.MustCompile(`"cyphered":"[^"]*"`).ReplaceAllString(export, `"cyphered":"U2FsdGVkX1+a9bJ3c2FsdHNhbHQ="`)
	again = strings.Replace(again, `"lastAttemptISO":"1970-02-11T08:29:43Z","unsuccessfullTries":0`, `"lastAttemptISO":"2026-11-25T09:00:00Z","unsuccessfullTries":2`, 1)
	again = strings.Replace(again, `"passphrase":"REDACTED"`, `"passphrase":"c2FsdGVkIGhhc2g="`, 1)
	if again == export {
		t.Fatal("the second export must differ from the first")
	}
	if applyNoise(rules, again) != masked {
		t.Errorf("an export with new salts and a later login attempt differs once the rules apply")
	}
	changed := strings.Replace(again, `"name":"LibreNMS","host":"librenms.host.example.example.org"`, `"name":"LibreNMS","host":"nms2.example.org"`, 1)
	if changed == again || applyNoise(rules, changed) == masked {
		t.Errorf("a changed trap receiver is hidden by the rules")
	}
	for _, other := range IDs() {
		if other == "eaton_network" {
			continue
		}
		for _, re := range NoiseRules(other) {
			if re.MatchString(export) {
				t.Errorf("%s rule %s matches the Eaton export", other, re)
			}
		}
	}
	// The Perle configuration has nothing that moves on its own: no rule
	// of any platform takes a line of it.
	for _, l := range strings.Split(peConfig(t, "perle_SCG50-RRU_6.2.G3", "show running-config\n"), "\n") {
		for _, other := range IDs() {
			for _, re := range NoiseRules(other) {
				if re.MatchString(l) && re.SubexpIndex(MaskGroup) < 0 {
					t.Errorf("%s rule %s matches the Perle line %q", other, re, l)
				}
			}
		}
	}
}

// TestPENoiseBeforeAfter shows the header rules of the platforms without
// a public capture on two outputs of an unchanged device (as their
// vendors document them): they differ, but not once the rules apply, and
// a real change in the same output still shows.
func TestPENoiseBeforeAfter(t *testing.T) {
	for _, c := range []struct {
		platform      string
		before, after string
		change        [2]string
	}{
		{"citrix_netscaler",
			"#NS13.1 Build 49.13\n# Last modified by `save config`, Mon Jan 15 10:22:33 2024\nset ns config -IPAddress 192.0.2.10 -netmask 255.255.255.0\nset ns hostName ns01\nset ns rpcNode 192.0.2.10 -password 8a3b5c7d9e1f20314253647586970a1b2c3d4e5f -encrypted -encryptmethod ENCMTHD_3 -kek -suffix 2024_01_15_10_22_33 -srcIP *\nadd lb vserver vs1 HTTP 192.0.2.80 80\n Done",
			"#NS14.1 Build 25.56\n# Last modified by `save config`, Tue Nov 25 02:00:00 2026\nset ns config -IPAddress 192.0.2.10 -netmask 255.255.255.0\nset ns hostName ns01\nset ns rpcNode 192.0.2.10 -password f0e1d2c3b4a5968778695a4b3c2d1e0f00112233 -encrypted -encryptmethod ENCMTHD_3 -kek -suffix 2024_01_15_10_22_33 -srcIP *\nadd lb vserver vs1 HTTP 192.0.2.80 80\n Done",
			[2]string{"add lb vserver vs1 HTTP 192.0.2.80 80", "add lb vserver vs1 HTTP 192.0.2.81 80"}},
		// The masked secret's setting still counts.
		{"citrix_netscaler",
			"#NS13.1 Build 49.13\n# Last modified by `save config`, Mon Jan 15 10:22:33 2024\nset ns config -IPAddress 192.0.2.10 -netmask 255.255.255.0\nset ns hostName ns01\nset ns rpcNode 192.0.2.10 -password 8a3b5c7d9e1f20314253647586970a1b2c3d4e5f -encrypted -encryptmethod ENCMTHD_3 -kek -suffix 2024_01_15_10_22_33 -srcIP *\nadd lb vserver vs1 HTTP 192.0.2.80 80\n Done",
			"#NS14.1 Build 25.56\n# Last modified by `save config`, Tue Nov 25 02:00:00 2026\nset ns config -IPAddress 192.0.2.10 -netmask 255.255.255.0\nset ns hostName ns01\nset ns rpcNode 192.0.2.10 -password f0e1d2c3b4a5968778695a4b3c2d1e0f00112233 -encrypted -encryptmethod ENCMTHD_3 -kek -suffix 2024_01_15_10_22_33 -srcIP *\nadd lb vserver vs1 HTTP 192.0.2.80 80\n Done",
			[2]string{"set ns rpcNode 192.0.2.10 -password f0e1", "set ns rpcNode 192.0.2.11 -password f0e1"}},
		{"a10_acos",
			"!Current configuration: 4411 bytes\n!Configuration last updated at 10:22:33 GMT Mon Jan 15 2024\n!Configuration last saved at 10:23:01 GMT Mon Jan 15 2024\n!64-bit Advanced Core OS (ACOS) version 5.2.1-p9, build 45 (Jan-10-2024,12:00)\n!\nhostname vThunder\n!\nslb server srv1 192.0.2.7\n  port 80 tcp\n!\nend",
			"!Current configuration: 4412 bytes\n!Configuration last updated at 02:00:00 GMT Tue Nov 25 2026\n!Configuration last saved at 02:00:09 GMT Tue Nov 25 2026\n!Configuration last synchronized at 02:00:10 GMT Tue Nov 25 2026\n!64-bit Advanced Core OS (ACOS) version 6.0.4, build 12 (Jun-01-2026,12:00)\n!\nhostname vThunder\n!\nslb server srv1 192.0.2.7\n  port 80 tcp\n!\nend",
			[2]string{"  port 80 tcp", "  port 8080 tcp"}},
	} {
		t.Run(c.platform, func(t *testing.T) {
			rules := NoiseRules(c.platform)
			if b, a := applyNoise(rules, c.before), applyNoise(rules, c.after); b != a {
				t.Errorf("noise-only outputs still differ:\n%s\n---\n%s", b, a)
			}
			changed := strings.Replace(c.after, c.change[0], c.change[1], 1)
			if changed == c.after || applyNoise(rules, changed) == applyNoise(rules, c.before) {
				t.Errorf("real change %q -> %q ignored", c.change[0], c.change[1])
			}
		})
	}
	// Lines of these platforms' configurations that look like the header
	// but are configuration.
	for _, l := range []string{
		"set ns hostName ns01",
		`add policy expression e1 "HTTP.REQ.HEADER(\"#NS\").EXISTS"`,
		"# comment in a batch file",
		"!Current configuration",
		"!",
		"  name \"Configuration last updated at\"",
		`{"cyphered":"x"}`,
	} {
		for _, id := range []string{"citrix_netscaler", "a10_acos", "alliedtelesis_awplus", "perle_iolan"} {
			if slices.ContainsFunc(NoiseRules(id), func(re *regexp.Regexp) bool { return re.MatchString(l) }) {
				t.Errorf("%s: a rule matches the configuration line %q", id, l)
			}
		}
	}
}

// TestPEACOSHeaderOnPublishedOutput runs the ACOS rules over the head of
// a vThunder 4.1.4 running configuration as published in a public setup
// walk-through (the enable step with an empty password, then show
// running-config): exactly the four header lines are noise.
func TestPEACOSHeaderOnPublishedOutput(t *testing.T) {
	published := []string{
		"!Current configuration: 251 bytes",
		"!Configuration last updated at 15:15:52 IST Wed Sep 11 2019",
		"!Configuration last saved at 15:16:31 IST Wed Sep 11 2019",
		"!64-bit Advanced Core OS (ACOS) version 4.1.4-GR1, build 78 (Jan-18-2019,16:02)",
		"!",
		"multi-config enable",
		"!",
		"terminal idle-timeout 0",
		"!",
		"interface management",
		"  ip address 10.255.0.1 255.255.0.0",
		"  ip default-gateway 10.255.255.1",
		"!",
		"sflow collector ip 127.0.0.1 6343",
		"!",
		"end",
		"!Current config commit point for partition 0 is 0 & config mode is classical-mode",
	}
	var got []string
	for _, l := range published {
		if slices.ContainsFunc(NoiseRules("a10_acos"), func(re *regexp.Regexp) bool { return re.MatchString(l) }) {
			got = append(got, l)
		}
	}
	if !slices.Equal(got, published[:4]) {
		t.Errorf("noise lines %q, want the four header lines", got)
	}
	if !peDialogue(t, "a10_acos").Prompt.MatchString("vThunder>") || !peDialogue(t, "a10_acos").Prompt.MatchString("NAT_Device_31#") {
		t.Error("the published prompts are not taken for prompts")
	}
}

func peDialogue(t *testing.T, id string) Dialogue {
	t.Helper()
	d, ok := DialogueFor(id)
	if !ok {
		t.Fatalf("no dialogue for %s", id)
	}
	return d
}
