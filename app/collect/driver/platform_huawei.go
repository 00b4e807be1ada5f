package driver

import "regexp"

// Huawei VRP and the H3C/HPE Comware family, which shares its heritage.

var (
	// vrpPrompt: "<HUAWEI>", "[HUAWEI]", "[~HUAWEI]",
	// "[*HUAWEI-GigabitEthernet0/0/1]", "<H3C>", "RBM_P<H3C>" (an RBM pair
	// member).
	vrpPrompt = re(`^(RBM_[PS])?(<[^<>\s][^<>]{0,127}>|\[[~*]?[^\[\]\s][^\[\]]{0,159}\])$`)
	vrpMore   = re(`(?i)-{2,}\s?more\s?-{2,}$`)
	vrpError  = re(`^\s*(Error:|%\s?(Unrecognized|Incomplete|Wrong|Too many|Ambiguous))`)
)

func vrp(pagingOff string) Dialogue {
	return Dialogue{
		Prompt:    vrpPrompt,
		Pager:     vrpMore,
		PagingOff: []string{pagingOff},
		// User view and the raised level share "<host>": super runs only
		// when a super password is configured for the device.
		Enable:                 "super",
		EnableWithPasswordOnly: true,
		PasswordPrompt:         passwordQ,
		EnableFailed:           enableFailed,
		CommandError:           vrpError,
		PreLogin: []Answer{
			// Expired or initial passwords: keep the password, log in.
			{Match: re(`(?i)change now\? ?\[y/n\]:?$`), Send: "N\n"},
		},
	}
}

// vrpNoise: the software version and update/save stamps written as `!`
// lines.
var vrpNoise = []string{
	`^!Software Version \S+`,
	`^!Last configuration was \w+ at `,
}

var vrpSyslog = []SyslogPattern{
	{
		// Configuration-changed events: "CONFIGURATION/6/CFG_FILE_CHANGE",
		// "CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT", "CFG/4/CFG_CHANGE"
		// (older VRP), "CFGMAN/5/CFGMAN_CFGCHANGED" (Comware).
		Name:    "huawei-h3c-cfg-change",
		Needles: []string{"CFG", "CONFIG"},
		Match: regexp.MustCompile(`(?:CFG/\d/CFG_CHANGE|CONFIGURATION/\d/(?:CFG_FILE_CHANGE|CFG_CHANGE|NETCONF_CONFIG_CHANGE_EVENT)|` +
			`CFGMAN/\d/CFGMAN_CFGCHANGED)\b`),
	},
	{
		// Command records: Huawei "SHELL/5/CMDRECORD: ... Command="..."" and
		// Comware "SHELL/5/SHELL_CMD: ...; Command is ...". They record
		// every command, so read-only and session commands are excluded.
		Name:    "huawei-h3c-command-record",
		Needles: []string{"SHELL/"},
		Match:   regexp.MustCompile(`SHELL/\d/(?:CMDRECORD|SHELL_CMD)\b`),
		Exclude: regexp.MustCompile(`(?i)(?:command\s*[=:]\s*"?|command is\s+)\s*(?:display|dis|dir|ping|tracert|quit|q|return|` +
			`system-view|sys|screen-length|undo screen-length|terminal|undo terminal|save|log off|bash|\?)(?:\s|"|\.|\)|;|$)`),
	},
}

func init() {
	Register(Platform{
		ID: "huawei_vrp", Name: "Huawei VRP", Vendor: "Huawei",
		Aliases:         []string{"vrp", "huawei"},
		DefaultCommands: lines("display current-configuration"),
		Dialogue:        vrp("screen-length 0 temporary"),
		Noise:           vrpNoise,
		Syslog:          vrpSyslog,
	})
	Register(Platform{
		ID: "huawei_vrpv8", Name: "Huawei VRP V8", Vendor: "Huawei",
		Aliases:         []string{"vrpv8"},
		DefaultCommands: lines("display current-configuration"),
		Dialogue:        vrp("screen-length 0 temporary"),
		Noise:           vrpNoise,
		Syslog:          vrpSyslog,
	})
	Register(Platform{
		ID: "hp_comware", Name: "HPE Comware", Vendor: "HPE",
		Aliases:         []string{"comware"},
		DefaultCommands: lines("display current-configuration"),
		Dialogue:        vrp("screen-length disable"),
		Noise:           vrpNoise,
		Syslog:          vrpSyslog,
	})
	Register(Platform{
		ID: "h3c_comware", Name: "H3C Comware", Vendor: "H3C",
		Aliases:         []string{"h3c"},
		DefaultCommands: lines("display current-configuration"),
		Dialogue:        vrp("screen-length disable"),
		Noise:           vrpNoise,
		Syslog:          vrpSyslog,
	})
}

func init() {
	// Huawei SmartAX access nodes and OLTs (MA5600T, MA5800, EA5800): an
	// IOS-shaped prompt ("MA5800-X7>", "#" after `enable`, ">>User name:"
	// on telnet) rather than VRP's <host>. In the default "smart" mode a
	// command with optional parameters asks for them with "{ <cr>|...||<K>
	// }:" and waits for Enter, and confirmations ask "(y/n)": `undo smart`
	// and `undo interactive` turn both off for the session, `infoswitch cli
	// OFF` stops debugging messages in the output, and `scroll` without a
	// number lifts the page length. Some releases ask "(YES/NO)" after a
	// post-login notice; it is accepted.
	Register(Platform{
		ID: "huawei_smartax", Name: "Huawei SmartAX (OLT)", Vendor: "Huawei",
		Aliases:         []string{"smartax"},
		DefaultCommands: lines("display current-configuration"),
		Dialogue: Dialogue{
			Prompt:         re(`^[\w.\-]{1,64}(\([\w.\-/]{1,40}\))?[>#]$`),
			Pager:          re(`(?i)-{2,} ?more \( ?press 'q' to break ?\) ?-{2,}$`),
			PagingOff:      []string{"undo smart", "undo interactive", "infoswitch cli OFF", "scroll"},
			Enable:         "enable",
			Privileged:     privileged,
			PasswordPrompt: passwordQ,
			EnableFailed:   enableFailed,
			// "% Unknown command, the error locates at '^'", "% Parameter
			// error, …", "% Incomplete command, …".
			CommandError: re(`^\s*%\s?(Unknown command|Parameter error|Incomplete command|Too many parameters|Ambiguous)`),
			PreLogin:     []Answer{{Match: re(`\(YES/NO\)\s*[:?]?$`), Send: "yes\n"}},
		},
		// The first line names the release: "[MA5800V100R019: 8101]".
		Noise: []string{`^\[MA\d{4}V\d{3}R\d{3}\S*: \d+\]$`},
		Notes: "Runs enable (no password on most releases) and turns smart parameter prompts, confirmations and paging " +
			"off for the session.",
	})
}
