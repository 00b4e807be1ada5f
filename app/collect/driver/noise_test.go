package driver

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// applyNoise is the comparison form of text under rules, following the
// MaskGroup convention as change detection does (app/backup): a rule
// without a mask group drops the lines it matches, one with it replaces
// the group's text by "#" in every match.
func applyNoise(rules []*regexp.Regexp, text string) string {
	var out []string
lines:
	for _, line := range strings.Split(text, "\n") {
		for _, re := range rules {
			g := re.SubexpIndex(MaskGroup)
			if g < 0 {
				if re.MatchString(line) {
					continue lines
				}
				continue
			}
			var b strings.Builder
			last := 0
			for _, m := range re.FindAllStringSubmatchIndex(line, -1) {
				if m[2*g] < last || m[2*g] < 0 {
					continue
				}
				b.WriteString(line[last:m[2*g]])
				b.WriteString("#")
				last = m[2*g+1]
			}
			b.WriteString(line[last:])
			line = b.String()
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// noiseRecording is a configuration in a recording of a real device and
// the lines of it the platform's noise rules must match (nothing else, and
// no other platform's rules either). Files of newer platform families add
// theirs with addNoiseRecordings from an init function.
type noiseRecording struct {
	platform, file, command string
	want                    []string
}

var noiseRecordings = []noiseRecording{
	{"cisco_xe", "ios_asr920_16.8.1b", "show running-config\n", []string{
		"Building configuration...",
		"Current configuration : 16734 bytes",
		"! Last configuration change at 11:54:34 UTC Thu Aug 29 2024 by 123456",
	}},
	{"cisco_nxos", "nxos_N5548_7.3.13", "show running-config\n", []string{
		"!Time: Sat Mar 28 20:40:06 2026",
	}},
	{"juniper_junos", "junos_srx300_22.4", "show configuration | display omit\n", []string{
		"## Last commit: 2024-12-06 11:41:05 UTC by root",
	}},
	{"aruba_aoscx", "aoscx_6100-48G_PL.10.10.1090", "show running-config\n", []string{
		"!Version ArubaOS-CX PL.10.10.1090",
	}},
	{"fortinet", "fortigate_FortiGate-501E_vdomHAdown", "show | grep .\n", []string{
		"#config-version=FG5H1E-7.4.8-FW-build2795-250523:opmode=0:vdom=1:user=TACACS-USER",
		"#conf_file_ver=2841660000000000",
		"#buildno=2795",
	}},
	{"frr", "frr_8.4.4_vtysh_ssh", "show running-config\n", []string{
		"Building configuration...",
		"frr version 8.4.4",
	}},
	{"mikrotik_routeros", "routeros_CHR_7.10.1", "/export show-sensitive\n", []string{
		"# 2024-10-25 06:08:35 by RouterOS 7.10.1",
		"# software id = XX-XX",
	}},
}

func addNoiseRecordings(rs ...noiseRecording) { noiseRecordings = append(noiseRecordings, rs...) }

// TestNoiseRulesRecordings runs every platform's rules over the
// configurations real devices printed (testdata/recordings): exactly the
// volatile lines match, and no other platform's rule matches anything in
// them, so no configuration line is ever ignored by accident.
func TestNoiseRulesRecordings(t *testing.T) {
	for _, c := range noiseRecordings {
		t.Run(c.platform, func(t *testing.T) {
			rec := loadRecording(t, c.file)
			var lines []string
			for _, st := range rec.steps {
				if st.sent == c.command {
					lines = CleanLines([]byte(st.reply))
				}
			}
			if len(lines) < 10 {
				t.Fatalf("recording %s: no configuration found for %q", c.file, c.command)
			}
			var got []string
			for _, l := range lines {
				if slices.ContainsFunc(NoiseRules(c.platform), func(re *regexp.Regexp) bool { return re.MatchString(l) }) {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("noise lines:\n got %q\nwant %q", got, c.want)
			}
			for _, other := range IDs() {
				for _, re := range NoiseRules(other) {
					for _, l := range lines {
						if re.MatchString(l) && !slices.Contains(c.want, l) {
							t.Errorf("%s rule %s matches configuration line %q", other, re, l)
						}
					}
				}
			}
		})
	}
}

// noiseBeforeAfter is two outputs of an unchanged device that differ only
// in noise, and a real change of the second (a line replaced by another).
// Files of newer platform families add theirs with addNoiseBeforeAfters.
type noiseBeforeAfter struct {
	name, platform string
	before, after  string
	change         [2]string
}

var noiseBeforeAfters = []noiseBeforeAfter{
	{"ios", "cisco_ios",
		"Building configuration...\n\nCurrent configuration : 4120 bytes\n!\n! Last configuration change at 11:54:34 UTC Thu Aug 29 2024 by admin\n! NVRAM config last updated at 11:55:02 UTC Thu Aug 29 2024 by admin\n!\nversion 15.2\nhostname sw1\n!\nntp clock-period 17179823\nntp server 192.0.2.1\nend",
		"Building configuration...\n\nCurrent configuration : 4121 bytes\n!\n! Last configuration change at 02:00:11 UTC Fri Aug 30 2024 by backup\n! No configuration change since last restart\n!\nversion 15.2\nhostname sw1\n!\nntp clock-period 17179871\nntp server 192.0.2.1\nend",
		[2]string{"ntp server 192.0.2.1", "ntp server 192.0.2.2"}},
	{"ios-xe", "cisco_xe",
		"Building configuration...\n\nCurrent configuration : 16734 bytes\n!\n! Last configuration change at 11:54:34 UTC Thu Aug 29 2024 by 123456\n!\nversion 16.8\nhostname edge1\ninterface GigabitEthernet0/0/0\n description uplink\nend",
		"Building configuration...\n\nCurrent configuration : 16740 bytes\n!\n! Last configuration change at 09:01:02 UTC Mon Sep 2 2024 by 123456\n!\nversion 16.8\nhostname edge1\ninterface GigabitEthernet0/0/0\n description uplink\nend",
		[2]string{" description uplink", " description uplink-2"}},
	{"ios-xr", "cisco_xr",
		"Thu Aug 29 11:54:34.123 UTC\nBuilding configuration...\n!! IOS XR Configuration 7.7.1\n!! Last configuration change at Tue Aug 27 10:00:00 2024 by admin\n!\nhostname pe1\ninterface Bundle-Ether1\n mtu 9216\n!\nend",
		"Mon Sep  2 02:00:01.987 UTC\nBuilding configuration...\n!! IOS XR Configuration 7.7.2\n!! No configuration change since last restart\n!\nhostname pe1\ninterface Bundle-Ether1\n mtu 9216\n!\nend",
		[2]string{" mtu 9216", " mtu 9000"}},
	{"nx-os", "cisco_nxos",
		"\n!Command: show running-config\n!Running configuration last done at: Sat Mar 28 20:39:58 2026\n!Time: Sat Mar 28 20:40:06 2026\n\nversion 7.3(13)N1(1)\nhostname TEST-12345\nfeature lacp",
		"\n!Command: show running-config\n!No configuration change since last restart\n!Time: Sun Mar 29 02:00:00 2026\n\nversion 7.3(13)N1(1)\nhostname TEST-12345\nfeature lacp",
		[2]string{"feature lacp", "feature lldp"}},
	{"asa", "cisco_asa",
		": Saved\n:\n: Serial Number: JAD000000AA\nASA Version 9.8(4)\nhostname fw1\n: Written by enable_15 at 10:22:11.123 UTC Mon Jan 1 2024\nCryptochecksum:c5c7a6e7 3b7d4b7f 2c1f8a5e 0d1e2f3a\n: end",
		":\n: Serial Number: JAD000000AA\nASA Version 9.8(4)\nhostname fw1\n: Written by admin at 02:00:00.001 UTC Tue Jan 2 2024\nCryptochecksum:0aa1b2c3 d4e5f607 18293a4b 5c6d7e8f\n: end",
		[2]string{"hostname fw1", "hostname fw2"}},
	{"eos", "arista_eos",
		"! Command: show running-config\n! device: leaf1 (DCS-7050SX-64, EOS-4.28.3M)\n! Startup-config last modified at  Mon Jun  3 10:00:00 2024 by admin\n!\nhostname leaf1\ninterface Ethernet1\n   description spine1",
		"! Command: show running-config\n! device: leaf1 (DCS-7050SX-64, EOS-4.30.1F)\n! Startup-config last modified at  Tue Jun  4 10:00:00 2024 by admin\n!\nhostname leaf1\ninterface Ethernet1\n   description spine1",
		[2]string{"   description spine1", "   description spine2"}},
	{"junos", "juniper_junos",
		"## Last changed: 2024-12-06 11:41:05 UTC\n## Last commit: 2024-12-06 11:41:05 UTC by root\nversion 22.4R3-S2.11;\nsystem {\n    host-name srx1;\n}",
		"## Last changed: 2024-12-07 08:00:00 UTC\n## Last commit: 2024-12-07 08:00:00 UTC by admin\nversion 22.4R3-S2.11;\nsystem {\n    host-name srx1;\n}",
		[2]string{"    host-name srx1;", "    host-name srx2;"}},
	{"screenos", "juniper_screenos",
		"Total Config size 8571:\nset clock timezone 0\nset hostname ns1",
		"Total Config size 8573:\nset clock timezone 0\nset hostname ns1",
		[2]string{"set hostname ns1", "set hostname ns2"}},
	{"vrp", "huawei_vrp",
		"!Software Version V200R010C00SPC600\n!Last configuration was updated at 2019-03-13 10:24:40+08:00 by admin\n!Last configuration was saved at 2019-03-13 10:25:03+08:00 by admin\n#\n sysname core1\n#\nreturn",
		"!Software Version V200R010C00SPC700\n!Last configuration was updated at 2019-04-01 09:00:00+08:00 by admin\n#\n sysname core1\n#\nreturn",
		[2]string{" sysname core1", " sysname core2"}},
	{"procurve", "hp_procurve",
		"; J9772A Configuration Editor; Created on release #YA.16.02.0012\n; Ver #0e:01.b0.ee.34.5f.78.e0.fe.ff.37.2f:06\nhostname \"sw-floor1\"\nvlan 1\n   name \"DEFAULT_VLAN\"",
		"; J9772A Configuration Editor; Created on release #YA.16.10.0009\n; Ver #14:01.4f.f8.1d.fc.7f.ff.ff.fc.ff.ff.3f.ef:22\nhostname \"sw-floor1\"\nvlan 1\n   name \"DEFAULT_VLAN\"",
		[2]string{"   name \"DEFAULT_VLAN\"", "   name \"USERS\""}},
	{"aoscx", "aruba_aoscx",
		"Current configuration:\n!\n!Version ArubaOS-CX PL.10.10.1090\n!export-password: default\nhostname TEST-SW1235",
		"Current configuration:\n!\n!Version ArubaOS-CX PL.10.13.1000\n!export-password: default\nhostname TEST-SW1235",
		[2]string{"hostname TEST-SW1235", "hostname TEST-SW1236"}},
	{"fortios", "fortinet",
		"#config-version=FG5H1E-7.4.8-FW-build2795-250523:opmode=0:vdom=1:user=admin\n#conf_file_ver=2841660000000000\n#buildno=2795\n#global_vdom=1\nconfig vpn ipsec phase1-interface\n    edit \"to-branch\"\n        set psksecret ENC QmFja3VwZDEyMzQ1Njc4OTAxMjM0NTY3ODkw==\n    next\nend\nconfig system admin\n    edit \"admin\"\n        set password ENC SH2Zm9vYmFyYmF6cXV4cXV1eA==\n    next\nend",
		"#config-version=FG5H1E-7.4.8-FW-build2795-250523:opmode=0:vdom=1:user=admin\n#conf_file_ver=2841660000000417\n#buildno=2795\n#global_vdom=1\nconfig vpn ipsec phase1-interface\n    edit \"to-branch\"\n        set psksecret ENC dGhpcyBpcyBhIG5ldyBzYWx0IGV2ZXJ5IHRpbWU=\n    next\nend\nconfig system admin\n    edit \"admin\"\n        set password ENC SH2Zm9vYmFyYmF6cXV4cXV1eA==\n    next\nend",
		// An admin password hash is stable, so its change counts.
		[2]string{"        set password ENC SH2Zm9vYmFyYmF6cXV4cXV1eA==", "        set password ENC SH2bmV3IHBhc3N3b3JkIGhhc2g="}},
	{"routeros", "mikrotik_routeros",
		"# 2024-10-25 06:08:35 by RouterOS 7.10.1\n# software id = XX-XX\n#\n# model = CHR\n/interface ethernet\nset [ find default-name=ether1 ] disable-running-check=no\n# ether2 not ready\n/ip address\nadd address=192.0.2.1/24 interface=ether1",
		"# 2024-10-26 06:08:35 by RouterOS 7.10.1\n# software id = XX-XX\n#\n# model = CHR\n/interface ethernet\nset [ find default-name=ether1 ] disable-running-check=no\n/ip address\nadd address=192.0.2.1/24 interface=ether1",
		[2]string{"add address=192.0.2.1/24 interface=ether1", "add address=192.0.2.9/24 interface=ether1"}},
	{"routeros-v6", "mikrotik_routeros",
		"# jan/02/1970 00:00:00 by RouterOS 6.48.6\n# software id = ABCD-1234\n/system identity\nset name=r6",
		"# sep/29/2024 10:00:00 by RouterOS 6.49.10\n# software id = ABCD-1234\n/system identity\nset name=r6",
		[2]string{"set name=r6", "set name=r7"}},
	{"exos", "extreme_exos",
		"#\n# Summit-Series Configuration generated Thu Jan  5 10:22:33 2023\n# Software Version 22.6.1.4 by Release_Master on 03/20/19 19:35:52\n#\n# Module devmgr configuration.\n#\nconfigure snmp sysName \"x440\"",
		"#\n# Summit-Series Configuration generated Fri Jan  6 02:00:00 2023\n# Software Version 22.6.1.4 by Release_Master on 03/20/19 19:35:52\n#\n# Module devmgr configuration.\n#\nconfigure snmp sysName \"x440\"",
		[2]string{"configure snmp sysName \"x440\"", "configure snmp sysName \"x450\""}},
	{"os10", "dell_os10",
		"! Version 10.5.2.3\n! Last configuration change at Jun  5 14:07:21 2020\n!\nhostname os10-1",
		"! Version 10.5.2.3\n! Last configuration change at Jun  6 09:00:00 2020\n!\nhostname os10-1",
		[2]string{"hostname os10-1", "hostname os10-2"}},
	{"ruijie", "ruijie_os",
		"Building configuration...\nCurrent configuration : 3145 bytes\n\nversion RGOS 10.4(3b19)p2\nhostname rg1",
		"Building configuration...\nCurrent configuration : 3160 bytes\n\nversion RGOS 10.4(3b19)p2\nhostname rg1",
		[2]string{"hostname rg1", "hostname rg2"}},
}

func addNoiseBeforeAfters(cs ...noiseBeforeAfter) {
	noiseBeforeAfters = append(noiseBeforeAfters, cs...)
}

// TestNoiseRulesBeforeAfter shows each rule family on two captures of an
// unchanged device: they differ, but not once the rules apply; a real
// change in the same capture still shows.
func TestNoiseRulesBeforeAfter(t *testing.T) {
	for _, c := range noiseBeforeAfters {
		t.Run(c.name, func(t *testing.T) {
			rules := NoiseRules(c.platform)
			if c.before == c.after {
				t.Fatal("before and after must differ")
			}
			if b, a := applyNoise(rules, c.before), applyNoise(rules, c.after); b != a {
				t.Errorf("noise-only captures still differ:\n%s\n---\n%s", b, a)
			}
			if !strings.Contains(c.after, c.change[0]) {
				t.Fatalf("after has no line %q", c.change[0])
			}
			changed := strings.Replace(c.after, c.change[0], c.change[1], 1)
			if applyNoise(rules, c.before) == applyNoise(rules, changed) {
				t.Errorf("real change %q -> %q ignored", c.change[0], c.change[1])
			}
		})
	}
}

// TestNoiseRulesKeepConfiguration lists configuration lines close to the
// noise: none of them may match any rule of any platform.
func TestNoiseRulesKeepConfiguration(t *testing.T) {
	lines := []string{
		"", "!", "#", "end", "\x01\x02\x03",
		"version 16.8",
		"ntp server 192.0.2.1",
		"ntp clock-period",
		"banner motd ^C Last configuration change at noon ^C",
		" description ! Last configuration change at",
		"! Last configuration change",
		"!Time-range workhours",
		"time-range workhours",
		"hostname Building",
		"set system host-name srx1",
		"    set comments \"ENC notes\"",
		"    set password ENC SH2Zm9vYmFyYmF6cXV4cXV1eA==",
		"    set password ENC AK1Zm9vYmFyYmF6cXV4cXV1eA==",
		"set name=r6 comment=\"# software id = 1\"",
		"# Module devmgr configuration.",
		"## SECRET-DATA",
		"        encrypted-password \"$9$abc\"; ## SECRET-DATA",
		": end",
		"ASA Version 9.8(4)",
		"Cryptochecksum",
		"!Software",
		"#config-version",
		"/system note set note=\"# 2024-10-25 06:08:35 by RouterOS 7.10.1\"",
	}
	for _, platform := range IDs() {
		for _, re := range NoiseRules(platform) {
			for _, l := range lines {
				if g := re.SubexpIndex(MaskGroup); g >= 0 {
					if m := re.FindStringSubmatchIndex(l); m != nil && m[2*g] >= 0 {
						t.Errorf("%s: rule %s masks part of %q", platform, re, l)
					}
				} else if re.MatchString(l) {
					t.Errorf("%s: rule %s matches %q", platform, re, l)
				}
			}
		}
	}
}

// TestNoiseRulesMaskOnlyTheBlob checks that the FortiOS secret rule masks
// the ENC value and nothing else of the line.
func TestNoiseRulesMaskOnlyTheBlob(t *testing.T) {
	line := `        set psksecret ENC QmFja3VwZDEyMzQ1Njc4OTAxMjM0NTY3ODkw==`
	if got, want := applyNoise(NoiseRules("fortinet"), line), `        set psksecret ENC #`; got != want {
		t.Errorf("masked %q, want %q", got, want)
	}
}

func TestNoiseRulesTable(t *testing.T) {
	for _, p := range Builtins() {
		if len(NoiseRules(p.ID)) != len(p.Noise) {
			t.Errorf("%s: %d compiled rules for %d patterns", p.ID, len(NoiseRules(p.ID)), len(p.Noise))
		}
	}
	for _, platform := range []string{"linux", "vyos", "paloalto_panos", "no-such-platform"} {
		if rules := NoiseRules(platform); len(rules) != 0 {
			t.Errorf("%s: %d rules, want none", platform, len(rules))
		}
	}
	// The slice is the caller's: changing it leaves the table alone.
	rules := NoiseRules("cisco_ios")
	rules[0] = nil
	if NoiseRules("cisco_ios")[0] == nil {
		t.Error("NoiseRules shares its table with callers")
	}
}
