package driver

import "regexp"

func init() {
	// RouterOS over SSH: exec requests (no colours, no pager, no terminal
	// probing). Over telnet the "+ct" login flags switch colours and
	// terminal detection off; the pager is answered. RouterOS 7 hides
	// secrets in /export unless asked.
	//
	// Noise: the export header with its date ("# 2024-10-25 06:08:35 by
	// RouterOS 7.10.1", v6 "# jan/02/1970 00:00:00 by RouterOS 6.48"), the
	// licence id, and the status remarks `/export` writes between
	// statements while a port is down or a firmware waits for a reboot.
	Register(Platform{
		ID: "mikrotik_routeros", Name: "MikroTik RouterOS", Vendor: "MikroTik",
		Aliases:         []string{"routeros", "mikrotik"},
		DefaultCommands: lines("/export show-sensitive"),
		Dialogue: Dialogue{
			Exec:             true,
			Prompt:           re(`^\[[^\[\]@\s]+@[^\[\]]+\] [^\[\]]*>$`),
			Pager:            re(`-- \[Q quit\|.*\]$`),
			TelnetUserSuffix: "+ct",
			CommandError:     re(`^\s*(bad command name|syntax error|expected end of command|no such item|input does not match)`),
			PreLogin:         []Answer{{Match: re(`(?i)see the software license\? ?\[y/n\]:?$`), Send: "n\n"}},
		},
		Noise: []string{
			`^# \S+ \d{2}:\d{2}:\d{2} by RouterOS \S+`,
			`^# software id = \S*$`,
			`^# inactive time$`,
			`^# received packet from \S+ bad format$`,
			`^# poe-out status: short_circuit$`,
			`^# Firmware upgraded successfully, please reboot for changes to take effect!$`,
			`^# \S+ not ready$`,
		},
		Syslog: []SyslogPattern{{
			// "system,info mangle rule changed by admin", "item added by
			// admin"; with bsd-syslog the topics are left out.
			Name:    "routeros-system-change",
			Needles: []string{" by "},
			Match:   regexp.MustCompile(`^(?:system,info(?:,[a-z]+)*\s+)?[A-Za-z0-9 ./_-]{1,80}? (?:added|changed|removed|moved) by \S`),
		}},
	})
}
