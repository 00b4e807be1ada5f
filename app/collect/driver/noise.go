package driver

import (
	"regexp"
	"slices"
)

// MaskGroup is the name of the subexpression a noise rule uses to mask
// part of a line instead of ignoring the whole line. A rule without such a
// group ignores every line it matches; a rule with one replaces, in every
// match, only the text of that group, so the rest of the line still
// counts. FortiOS shows why both are needed: `set psksecret ENC <blob>`
// prints a new blob on every export, but the setting itself (its name,
// and whether it is there at all) is configuration.
const MaskGroup = "mask"

// Noise patterns shared by several platforms. Each is anchored and as
// narrow as the device's own wording, so that a configuration statement
// can never match: comments in general are configuration too (a banner, a
// description), only the lines the device writes about itself are noise.
var (
	// Cisco IOS and its relatives put a build banner, the size and two
	// timestamps in front of the configuration; the "last change" line
	// moves when anyone leaves configuration mode, even without a change,
	// and the NVRAM line on every `write memory`.
	ciscoHeader = []string{
		`^Building configuration\.\.\.$`,
		`^Current configuration : \d+ bytes$`,
		`^! Last configuration change at `,
		`^! NVRAM config last updated at `,
		`^! No configuration change since last restart$`,
	}
	// ntp clock-period is written back by IOS as it trims the clock.
	ciscoIOS = append(slices.Clone(ciscoHeader), `^ntp clock-period \d+$`)

	// IOS-XR prints the time of the command before its output
	// ("Thu Aug 29 11:54:34.123 UTC"), a version banner and a change
	// stamp.
	ciscoXR = []string{
		`^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d{2}:\d{2}:\d{2}(\.\d+)? [A-Za-z][\w+-]*$`,
		`^Building configuration\.\.\.$`,
		`^!! IOS XR Configuration `,
		`^!! Last configuration change at `,
		`^!! No configuration change since last restart$`,
	}

	// NX-OS stamps the time of the command and of the last change.
	ciscoNXOS = []string{
		`^!Time: `,
		`^!Running configuration last done at: `,
		`^!No configuration change since last restart$`,
	}

	// ASA: who saved last and when, and the checksum written with it.
	ciscoASA = []string{
		`^: Saved$`,
		`^: Written by \S+ at `,
		`^Cryptochecksum: ?[0-9a-fA-F ]+$`,
	}

	// EOS names its image in the header ("! device: leaf1 (DCS-7050SX-64,
	// EOS-4.28.3M)"), which an upgrade alone changes, and stamps the last
	// save of the startup configuration.
	aristaEOS = []string{
		`^! device: \S+ \(.*\)$`,
		`^! Startup-config last modified at `,
	}

	// Junos stamps the last change and commit; a commit without changes
	// moves the stamp too.
	junos = []string{
		`^## Last changed: `,
		`^## Last commit: `,
	}

	// ScreenOS `get config` starts with its size.
	screenOS = []string{
		`^Total Config size \d+:$`,
	}

	// Huawei VRP (and the Comware family, which shares its heritage)
	// writes the software version and update/save stamps as `!` lines.
	huawei = []string{
		`^!Software Version \S+`,
		`^!Last configuration was \w+ at `,
	}

	// ProCurve / Aruba OS-Switch: the release and hardware banner.
	procurve = []string{
		`^; \S+ Configuration Editor; Created on release #\S+$`,
		`^; Ver #\S+$`,
	}

	// AOS-CX names its release.
	aoscx = []string{
		`^!Version ArubaOS-CX \S+$`,
	}

	// FortiOS: the header names the firmware, build and a counter bumped
	// on every save; secrets are shown re-encrypted with a fresh salt on
	// every `show`, so only the ENC value is masked. Admin password hashes
	// ("ENC SH2…", older "ENC AK1…") are shown as stored and stay
	// comparable, so an admin password change still counts.
	fortinet = []string{
		`^#config-version=\S*$`,
		`^#conf_file_ver=\S*$`,
		`^#buildno=\S*$`,
		`^\s*set \S+ ENC (?P<mask>(?:[^SA\s]|S[^H\s]|SH[^2\s]|A[^K\s]|AK[^1\s])\S*)`,
	}

	// RouterOS: the export header with its date ("# 2024-10-25 06:08:35
	// by RouterOS 7.10.1", v6 "# jan/02/1970 00:00:00 by RouterOS 6.48"),
	// the licence id, and the status remarks `/export` writes between
	// statements while a port is down or a firmware waits for a reboot.
	routerOS = []string{
		`^# \S+ \d{2}:\d{2}:\d{2} by RouterOS \S+`,
		`^# software id = \S*$`,
		`^# inactive time$`,
		`^# received packet from \S+ bad format$`,
		`^# poe-out status: short_circuit$`,
		`^# Firmware upgraded successfully, please reboot for changes to take effect!$`,
		`^# \S+ not ready$`,
	}

	// EXOS: when the file was generated and by which release. The
	// "# Module … configuration." section headers never change and stay.
	exos = []string{
		`^#\s.*[Cc]onfiguration generated `,
		`^# Software Version \S+`,
	}

	// Dell OS10: release and change stamp.
	dellOS10 = []string{
		`^! Version \S+$`,
		`^! Last configuration change at `,
	}
)

// noisePatterns lists, per platform, the lines that change while the
// configuration does not. Platforms without an entry (paloalto_panos,
// vyos, linux) print nothing of the kind: their output changes only when
// the configuration does.
var noisePatterns = map[string][]string{
	"cisco_ios":         ciscoIOS,
	"cisco_xe":          ciscoIOS,
	"cisco_nxos":        ciscoNXOS,
	"cisco_xr":          ciscoXR,
	"cisco_asa":         ciscoASA,
	"arista_eos":        aristaEOS,
	"juniper_junos":     junos,
	"juniper_screenos":  screenOS,
	"huawei_vrp":        huawei,
	"huawei_vrpv8":      huawei,
	"hp_comware":        huawei,
	"h3c_comware":       huawei,
	"hp_procurve":       procurve,
	"aruba_aoscx":       aoscx,
	"ruijie_os":         ciscoHeader,
	"fortinet":          fortinet,
	"mikrotik_routeros": routerOS,
	"dell_os10":         dellOS10,
	"extreme_exos":      exos,
}

// noiseRules holds noisePatterns compiled, once, at start-up: a bad
// built-in pattern panics there rather than in a backup.
var noiseRules = func() map[string][]*regexp.Regexp {
	out := make(map[string][]*regexp.Regexp, len(noisePatterns))
	for platform, patterns := range noisePatterns {
		for _, p := range patterns {
			out[platform] = append(out[platform], regexp.MustCompile(p))
		}
	}
	return out
}()

// NoiseRules returns the built-in change-detection rules of a platform
// (none for an unknown one). Each rule is tried on one line at a time; see
// MaskGroup for how a rule masks part of a line rather than all of it.
func NoiseRules(platform string) []*regexp.Regexp {
	return slices.Clone(noiseRules[platform])
}
