package driver

import "regexp"

// HPE ProCurve / Aruba OS-Switch and Aruba AOS-CX.

// procurvePager is ProCurve's and AOS-CX's "-- MORE --, next page: Space,
// next line: Enter, quit: Control-C".
var procurvePager = re(`(?i)-- ?more ?--,? next page.*$`)

func init() {
	// ProCurve / Aruba OS-Switch: "Press any key to continue" after the
	// banner; the enable dialogue asks for a username as well; "no page"
	// lasts for the session. Hostnames may contain spaces. The header
	// names the release and hardware.
	procurve := cisco()
	procurve.Prompt = re(`^[\w.\-@/:][\w.\-@/: ]{0,63}(\([\w.\-/: ]{1,40}\))?[>#]$`)
	procurve.PagingOff = []string{"no page"}
	procurve.Pager = procurvePager
	procurve.EnableUserPrompt = re(`(?i)user ?name ?:$`)
	procurve.CommandError = re(`^\s*(Invalid input:|Ambiguous input:|Incomplete input:)`)
	procurve.PreLogin = []Answer{{Match: re(`(?i)press any key to continue$`), Send: " "}}
	Register(Platform{
		ID: "hp_procurve", Name: "HPE ProCurve / Aruba OS-Switch", Vendor: "HPE Aruba",
		Aliases:         []string{"procurve", "hp"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        procurve,
		Noise: []string{
			`^; \S+ Configuration Editor; Created on release #\S+$`,
			`^; Ver #\S+$`,
		},
		Syslog: []SyslogPattern{{
			// "Startup configuration changed by CLI..." and "Running config
			// change ..." event log lines.
			Name:    "procurve-config-change",
			Needles: []string{"onfig"},
			Match:   regexp.MustCompile(`(?i)\b(?:startup|running) config(?:uration)? change`),
		}},
	})

	// AOS-CX: administrators land in "#"; "enable" covers operator logins.
	cx := cisco()
	cx.PagingOff = []string{"no page"}
	cx.Pager = procurvePager
	cx.CommandError = re(`^\s*(Invalid input:|Incomplete command|Ambiguous command|% ?(Invalid|Incomplete|Command))`)
	Register(Platform{
		ID: "aruba_aoscx", Name: "Aruba AOS-CX", Vendor: "HPE Aruba",
		Aliases:         []string{"aoscx", "arubaoscx"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        cx,
		Noise:           []string{`^!Version ArubaOS-CX \S+$`},
		Syslog: []SyslogPattern{{
			// The accounting record of a configuration command
			// ("type=USYS_CONFIG ... rec=ACCT_CMD"), when accounting goes
			// to syslog.
			Name:    "aoscx-config-command",
			Needles: []string{"USYS_CONFIG"},
			Match:   regexp.MustCompile(`\btype=USYS_CONFIG\b`),
			Exclude: regexp.MustCompile(`\bdata=(?:'|")?(?:show|ping|traceroute)\b`),
		}},
	})
}

// ArubaOS controllers (AOS 6/8 Mobility Controllers and Conductors) and
// Aruba Instant access points.

// arubaMore is the ArubaOS pager: "--More-- (q) quit (u) pageup (/)
// search (n) repeat".
var arubaMore = re(`--More-- \(q\) quit.{0,60}$|(?i)^--\s?more\s?--$`)

func init() {
	// AOS 8 prompts carry the configuration node ("(host) [mynode] #",
	// "(host) [md] (config) #") and, in front of it, "*" or "^" while
	// changes are unsaved or pending: those marks are volatile. Telnet
	// asks "User:". "encrypt disable" (sent after login with the paging
	// command; it lasts for the session, and a refusal is tolerated)
	// makes show running-config print keys and passphrases in clear.
	aos := cisco()
	aos.Prompt = re(`^\([^()]{1,64}\) ?([*^]?\[[^\]]{1,64}\] ?)?(\([\w\- ]{1,40}\) ?)?[>#]$`)
	aos.PromptVolatile = re(`[*^]?\[`)
	aos.PagingOff = []string{"no paging", "encrypt disable"}
	aos.Pager = arubaMore
	Register(Platform{
		ID: "aruba_os", Name: "ArubaOS (Mobility Controller)", Vendor: "HPE Aruba",
		Aliases:         []string{"aosw", "aruba"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        aos,
		Notes: "ArubaOS 6 and 8 controllers and conductors. Collected with `encrypt disable`, so keys are " +
			"stored in clear; the account needs enable (root) rights for it.",
	})

	// Instant: "name# " prompts (a space before it after a core dump);
	// "show running-config no-encrypt" prints the keys in clear.
	iap := cisco()
	iap.Prompt = re(`^[\w.\-@:]{1,64}( ?\([\w.\- ]{1,40}\) ?)?[>#]$`)
	iap.PagingOff = []string{"no paging"}
	iap.Pager = arubaMore
	Register(Platform{
		ID: "aruba_instant", Name: "Aruba Instant (IAP)", Vendor: "HPE Aruba",
		Aliases:         []string{"arubainstant"},
		DefaultCommands: lines("show running-config no-encrypt"),
		Dialogue:        iap,
		Notes:           "Collect from the virtual controller: it holds the configuration of the whole Instant cluster.",
	})
}
