package driver

import (
	"regexp"
	"slices"
)

// The production command-line table: one Dialogue per platform in
// platforms.go. Patterns are written for what real devices print (config
// sub-mode prompts, HA and context markers, banners that contain '#' or
// '>'); the session trims trailing spaces and resolves escapes, carriage
// returns and backspaces before a line is matched, and only takes a line
// that merely looks like a prompt once the device has fallen silent.
//
// Paging is turned off only with commands that last for the session and
// never touch the configuration; where no such command exists (FortiOS,
// ScreenOS, RouterOS) the pager is answered instead.

var re = regexp.MustCompile

// Shared pieces.
var (
	// ciscoPrompt: "R1>", "R1#", "R1(config-if)#", "asa/pri/act#",
	// "RP/0/RSP0/CPU0:XR-PE1#", "leaf1(s1)#".
	ciscoPrompt = re(`^[\w.\-@/:]{1,80}(\([\w.\-/:]{1,40}\))?[>#]$`)
	privileged  = re(`#$`)
	// passwordQ is an enable or super password question.
	passwordQ = re(`(?i)password ?:$`)
	// enableFailed is what Cisco-like and VRP/Comware devices print when
	// they refuse to raise privilege.
	enableFailed = re(`(?i)denied|bad secret|bad password|invalid password|incorrect|` +
		`no password set|not set|not configured|failed|error`)
	// ciscoMore: IOS " --More-- ", NX-OS, EOS, XR, Dell "--more--".
	ciscoMore = re(`(?i)--\s?more\s?--$`)
	// ciscoError: IOS, XE, NX-OS, XR, EOS, ASA, Ruijie, Dell OS10.
	ciscoError = re(`^\s*(ERROR: )?%\s?(Invalid|Incomplete command|Ambiguous command|Unknown command|Unrecognized|Error|Bad|Permission denied)|` +
		`^\s*Command authorization failed|^\s*% ?Authorization failed`)

	// vrpPrompt: "<HUAWEI>", "[HUAWEI]", "[~HUAWEI]", "[*HUAWEI-GigabitEthernet0/0/1]",
	// "<H3C>", "RBM_P<H3C>" (an RBM pair member).
	vrpPrompt = re(`^(RBM_[PS])?(<[^<>\s][^<>]{0,127}>|\[[~*]?[^\[\]\s][^\[\]]{0,159}\])$`)
	vrpMore   = re(`(?i)-{2,}\s?more\s?-{2,}$`)
	vrpError  = re(`^\s*(Error:|%\s?(Unrecognized|Incomplete|Wrong|Too many|Ambiguous))`)

	// procurvePager is ProCurve's and AOS-CX's "-- MORE --, next page:
	// Space, next line: Enter, quit: Control-C".
	procurvePager = re(`(?i)-- ?more ?--,? next page.*$`)

	// juniperPromptLines are the lines Junos prints above its prompt:
	// routing-engine or cluster role and the configuration level.
	juniperPromptLines = re(`^(\{[\w:\-]+\}|\[edit[^\]]*\])$`)
)

func cisco() Dialogue {
	return Dialogue{
		Prompt:         ciscoPrompt,
		Pager:          ciscoMore,
		PagingOff:      []string{"terminal length 0", "terminal width 511"},
		Enable:         "enable",
		Privileged:     privileged,
		PasswordPrompt: passwordQ,
		EnableFailed:   enableFailed,
		CommandError:   ciscoError,
	}
}

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

var dialogues = func() map[string]Dialogue {
	m := map[string]Dialogue{}

	m["cisco_ios"] = cisco()
	m["cisco_xe"] = cisco()

	// NX-OS logs in at its only level ("feature privilege" aside) and
	// prints "\r" before every prompt, which the cleanup absorbs.
	nxos := cisco()
	nxos.Enable, nxos.Privileged, nxos.PasswordPrompt = "", nil, nil
	m["cisco_nxos"] = nxos

	// IOS-XR has no enable: task groups decide what a user may run.
	xr := cisco()
	xr.Enable, xr.Privileged, xr.PasswordPrompt = "", nil, nil
	m["cisco_xr"] = xr

	// ASA: "terminal pager 0" lasts for the session; the configuration
	// command "pager lines 0" would be saved.
	asa := cisco()
	asa.PagingOff = []string{"terminal pager 0"}
	asa.Pager = re(`<--- More --->$`)
	m["cisco_asa"] = asa

	eos := cisco()
	eos.PagingOff = []string{"terminal length 0", "terminal width 32767"}
	m["arista_eos"] = eos

	// Junos over SSH: one exec request per command runs the CLI without a
	// terminal, so nothing pages and no prompt is printed. Over telnet the
	// interactive CLI is used.
	m["juniper_junos"] = Dialogue{
		Exec:        true,
		Prompt:      re(`^[\w.\-]+@[\w.\-]+[>#]$`),
		PromptLines: juniperPromptLines,
		Pager:       re(`---\(more( \d+%)?\)---$`),
		PagingOff:   []string{"set cli screen-length 0", "set cli screen-width 0"},
		// "not found": a root login lands in the Unix shell, not the CLI.
		CommandError: re(`^\s*(error:|unknown command\.|syntax error)|command not found|: not found$`),
	}

	// ScreenOS: "set console page 0" is a configuration command (it would
	// show up in the running configuration), so the pager is answered.
	m["juniper_screenos"] = Dialogue{
		Prompt:       re(`^[\w.\-]+(\([\w.\-]+\))?->$`),
		Pager:        re(`(?i)--- ?more ?---$`),
		CommandError: re(`^\s*(unknown keyword|Unknown command|command not completed)`),
	}

	m["huawei_vrp"] = vrp("screen-length 0 temporary")
	m["huawei_vrpv8"] = vrp("screen-length 0 temporary")
	m["hp_comware"] = vrp("screen-length disable")
	m["h3c_comware"] = vrp("screen-length disable")

	// ProCurve / Aruba OS-Switch: "Press any key to continue" after the
	// banner; the enable dialogue asks for a username as well; "no page"
	// lasts for the session. Hostnames may contain spaces.
	procurve := cisco()
	procurve.Prompt = re(`^[\w.\-@/:][\w.\-@/: ]{0,63}(\([\w.\-/: ]{1,40}\))?[>#]$`)
	procurve.PagingOff = []string{"no page"}
	procurve.Pager = procurvePager
	procurve.EnableUserPrompt = re(`(?i)user ?name ?:$`)
	procurve.CommandError = re(`^\s*(Invalid input:|Ambiguous input:|Incomplete input:)`)
	procurve.PreLogin = []Answer{{Match: re(`(?i)press any key to continue$`), Send: " "}}
	m["hp_procurve"] = procurve

	// AOS-CX: administrators land in "#"; "enable" covers operator logins.
	cx := cisco()
	cx.PagingOff = []string{"no page"}
	cx.Pager = procurvePager
	cx.CommandError = re(`^\s*(Invalid input:|Incomplete command|Ambiguous command|% ?(Invalid|Incomplete|Command))`)
	m["aruba_aoscx"] = cx

	ruijie := cisco()
	ruijie.PagingOff = []string{"terminal length 0"}
	m["ruijie_os"] = ruijie

	// FortiOS: the only way to stop paging is "config system console /
	// set output standard", which changes the configuration, so the pager
	// is answered. A login disclaimer ("Press 'a' to accept") is accepted.
	m["fortinet"] = Dialogue{
		Prompt:       re(`^[\w.\-]{1,64}( \([\w.\-]{1,40}\))? [#$]$`),
		Pager:        re(`--More--$`),
		CommandError: re(`^\s*(Command fail\.|Unknown action|command parse error)`),
		PreLogin:     []Answer{{Match: re(`(?i)\(press 'a' to accept\):?$`), Send: "a"}},
	}

	// PAN-OS: "admin@PA-VM>", with the HA state in brackets on pairs.
	m["paloalto_panos"] = Dialogue{
		Prompt:       re(`^[\w.\-]+@[\w.\-]+(\([\w.\-]+\))?[>#]$`),
		PromptLines:  juniperPromptLines,
		Pager:        re(`^lines \d+-\d+`),
		PagingOff:    []string{"set cli pager off"},
		CommandError: re(`^\s*(Unknown command:|Invalid syntax\.|Server error)`),
	}

	// RouterOS over SSH: exec requests (no colours, no pager, no terminal
	// probing). Over telnet the "+ct" login flags switch colours and
	// terminal detection off; the pager is answered.
	m["mikrotik_routeros"] = Dialogue{
		Exec:             true,
		Prompt:           re(`^\[[^\[\]@\s]+@[^\[\]]+\] [^\[\]]*>$`),
		Pager:            re(`-- \[Q quit\|.*\]$`),
		TelnetUserSuffix: "+ct",
		CommandError:     re(`^\s*(bad command name|syntax error|expected end of command|no such item|input does not match)`),
		PreLogin:         []Answer{{Match: re(`(?i)see the software license\? ?\[y/n\]:?$`), Send: "n\n"}},
	}

	dell := cisco()
	dell.PagingOff = []string{"terminal length 0"}
	m["dell_os10"] = dell

	// EXOS: "X440G2.5 # ", "* X440G2.6 # " once the configuration is
	// unsaved, "Slot-1 Stack.3 # " on stacks; the counter changes with
	// every command. "disable clipaging" lasts for the session.
	m["extreme_exos"] = Dialogue{
		Prompt:         re(`^(\* )?(\([^)]*\) )?([\w\-]+ )?[\w.\-]+\.\d+ ?[#>]$`),
		PromptVolatile: re(`^\* |\.\d+ ?`),
		Pager:          re(`Press <SPACE> to continue or <Q> to quit:$`),
		PagingOff:      []string{"disable clipaging"},
		CommandError:   re(`^\s*(%% ?(Invalid|Incomplete|Ambiguous|Unrecognized)|Error:)`),
	}

	// VyOS operational mode is a shell; op-mode commands do not work over
	// a plain exec request, so the interactive shell is used. Releases up
	// to 1.4 know "set terminal length 0", later ones "terminal length 0";
	// the one a release does not know is rejected and ignored.
	m["vyos"] = Dialogue{
		Prompt:       re(`^[\w.\-]+@[\w.\-]+(:[^\s]*)?[$#]$`),
		PromptLines:  juniperPromptLines,
		Pager:        re(`^:$`),
		PagingOff:    []string{"set terminal length 0", "terminal length 0"},
		CommandError: re(`^\s*(Invalid command:|Incomplete command:)`),
	}

	// Linux over SSH: exec requests, no prompt guessing. Over telnet any
	// shell prompt ending in $ # % or > will do. No CommandError: a
	// missing file is part of what the host looks like.
	m["linux"] = Dialogue{
		Exec:   true,
		Prompt: re(`^(\S.{0,126})?[$#%>]$`),
	}
	return m
}()

// DialogueFor returns the command-line behaviour of a platform.
func DialogueFor(platform string) (Dialogue, bool) {
	d, ok := dialogues[platform]
	if !ok {
		return Dialogue{}, false
	}
	d.PagingOff = slices.Clone(d.PagingOff)
	d.PreLogin = slices.Clone(d.PreLogin)
	return d, true
}
