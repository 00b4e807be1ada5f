package devsim

import (
	"slices"
	"sort"
	"strings"
)

// Personality is how one platform looks from the wire: banners, prompts,
// the privilege step, paging, errors and the commands it answers. It is
// plain data so that a new platform, or a quirk of an old one, is a table
// entry rather than code.
//
// Text fields use "\n" line endings; the session turns them into "\r\n"
// (or "\n" for exec requests on Unix-like platforms). Fields documented as
// raw are sent byte for byte.
//
// Prompt templates may contain {host}, {user}, {ctx} (the FortiOS
// sub-context, such as "(console) ") and {n} (a command counter, as on
// EXOS).
type Personality struct {
	// Platform is the ID used by the collector drivers, e.g. "cisco_ios".
	Platform string
	// DefaultHostname is used when the device is given no hostname.
	DefaultHostname string
	// SSHVersion is the identification string the SSH server announces.
	SSHVersion string

	// Banner is shown before authentication: as the SSH userauth banner
	// and before the telnet login prompt.
	Banner string
	// MOTD is printed when the shell starts, before the first prompt.
	// {time} is replaced by the device clock.
	MOTD string
	// PressAnyKey, when set, is printed after the MOTD and the shell waits
	// for one key press (HP ProCurve).
	PressAnyKey string

	UserPrompt   string
	EnablePrompt string
	ConfigPrompt string
	// PromptPrefix is raw bytes sent before every prompt (NX-OS sends "\r",
	// Junos and FortiOS an empty line).
	PromptPrefix string
	// EchoSuffix is raw bytes sent after an echoed command line; "\r\n"
	// when empty. NX-OS and FortiOS send "\r\r\n".
	EchoSuffix string

	// EnableCommand raises privilege ("enable", "super"); empty when the
	// platform has no such step. A device with no enable password starts
	// privileged.
	EnableCommand        string
	EnablePasswordPrompt string
	EnableReply          string
	EnableFailed         string
	// ConfigNeedsPrivilege makes the configuration commands fail with
	// InvalidInput until the enable step is done, as IOS does.
	ConfigNeedsPrivilege bool

	ConfigEnter      []string
	ConfigEnterReply string
	ConfigExit       []string
	ConfigExitReply  string
	// ExitCommands end the session (outside configuration mode).
	ExitCommands []string
	// Contexts are FortiOS-style sub-modes: command → {ctx} text. "end"
	// leaves them.
	Contexts map[string]string

	// PagingOff lists the commands that disable the pager.
	PagingOff []string
	// Replies are fixed answers to harmless commands (terminal width, the
	// paging commands' confirmations…). A command listed here with an
	// empty reply is accepted silently.
	Replies map[string]string

	// Pager is the raw prompt shown between pages; empty when the
	// platform never pages. PagerErase is the raw sequence sent after a
	// key press to wipe it.
	Pager      string
	PagerErase string
	// PageLines is the terminal length, pager prompt included.
	PageLines int

	// ConfigCommands print the configuration; the first is the driver's
	// default. Linux answers each of its files separately.
	ConfigCommands []string
	// VersionCommands print version and inventory facts.
	VersionCommands []string
	// Abbreviations lets every word be shortened to a prefix ("sh run").
	Abbreviations bool
	// InvalidInput answers unknown commands. {caret} becomes spaces and a
	// '^' under the offending word, {cmd} the command and {word} the
	// offending word.
	InvalidInput string

	// Telnet login dialogue. LoginUserPrompt opens the first attempt;
	// after a failure LoginFailed is printed and the last line of
	// LoginUserPrompt asks again.
	LoginUserPrompt     string
	LoginPasswordPrompt string
	LoginFailed         string
	// ShellLogin makes the SSH server let any password in and the shell
	// run the login dialogue before its first prompt, as AireOS and Cisco
	// small-business switches without "ip ssh password-auth" do.
	ShellLogin bool

	// ExecLF makes exec requests without a terminal answer with bare "\n",
	// as Unix-based systems do.
	ExecLF bool
	// LoginOptions accepts console options after a '+' in the login name,
	// as RouterOS does ("admin+ct": no colours, no terminal detection).
	LoginOptions bool
}

func (p *Personality) echoSuffix() string {
	if p.EchoSuffix == "" {
		return "\r\n"
	}
	return p.EchoSuffix
}

func (p *Personality) pageLines() int {
	if p.PageLines < 3 {
		return 24
	}
	return p.PageLines
}

// addPersonality registers a platform from its own file (persona_*.go):
// how it looks from the wire, how it writes its configuration (render, as
// in renderers) and its answer to the version commands. Called from init
// functions; a platform defined twice panics.
func addPersonality(p Personality, render func(m *model, n int) map[string]doc, version func(m *model) doc) {
	if _, dup := personalities[p.Platform]; dup {
		panic("devsim: personality defined twice: " + p.Platform)
	}
	if render == nil || version == nil {
		panic("devsim: personality without a configuration or version writer: " + p.Platform)
	}
	personalities[p.Platform] = p
	renderers[p.Platform] = render
	versionDocs[p.Platform] = version
}

// versionDocs are the version writers of the platforms added with
// addPersonality.
var versionDocs = map[string]func(m *model) doc{}

// Lookup returns a copy of the personality of a platform.
func Lookup(platform string) (Personality, bool) {
	p, ok := personalities[platform]
	if !ok {
		return Personality{}, false
	}
	return p.clone(), true
}

// Platforms returns every platform with a personality, sorted.
func Platforms() []string {
	ids := make([]string, 0, len(personalities))
	for id := range personalities {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (p *Personality) clone() Personality {
	c := *p
	c.ConfigEnter = slices.Clone(p.ConfigEnter)
	c.ConfigExit = slices.Clone(p.ConfigExit)
	c.ExitCommands = slices.Clone(p.ExitCommands)
	c.PagingOff = slices.Clone(p.PagingOff)
	c.ConfigCommands = slices.Clone(p.ConfigCommands)
	c.VersionCommands = slices.Clone(p.VersionCommands)
	c.Replies = cloneMap(p.Replies)
	c.Contexts = cloneMap(p.Contexts)
	return c
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Pager prompts and the way each platform wipes them after a key press.
const (
	ciscoMore      = " --More-- "
	ciscoMoreErase = "\b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\b"
	huaweiMore     = "  ---- More ----"
	huaweiErase    = "\x1b[16D                \x1b[16D"
	ciscoInvalid   = "{caret}\n% Invalid input detected at '^' marker.\n\n"
	ciscoBanner    = "\n**************************************************************************\n" +
		"* Authorised access only. Activity on this device is logged and monitored. *\n" +
		"**************************************************************************\n"
)

// cisco returns the shape shared by IOS-like command lines; entries below
// change what differs.
func cisco(platform, host string) Personality {
	return Personality{
		Platform:             platform,
		DefaultHostname:      host,
		SSHVersion:           "SSH-2.0-Cisco-1.25",
		Banner:               ciscoBanner,
		MOTD:                 "\n",
		UserPrompt:           "{host}>",
		EnablePrompt:         "{host}#",
		ConfigPrompt:         "{host}(config)#",
		EnableCommand:        "enable",
		EnablePasswordPrompt: "Password: ",
		EnableFailed:         "% Access denied\n\n",
		ConfigNeedsPrivilege: true,
		ConfigEnter:          []string{"configure terminal"},
		ConfigEnterReply:     "Enter configuration commands, one per line.  End with CNTL/Z.\n",
		ConfigExit:           []string{"end"},
		ExitCommands:         []string{"exit", "logout", "quit"},
		PagingOff:            []string{"terminal length 0"},
		Replies: map[string]string{
			"terminal length 0":   "",
			"terminal width 0":    "",
			"terminal width 511":  "",
			"terminal no monitor": "",
		},
		Pager:               ciscoMore,
		PagerErase:          ciscoMoreErase,
		PageLines:           24,
		ConfigCommands:      []string{"show running-config", "show startup-config"},
		VersionCommands:     []string{"show version", "show inventory"},
		Abbreviations:       true,
		InvalidInput:        ciscoInvalid,
		LoginUserPrompt:     "\nUser Access Verification\n\nUsername: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "% Login invalid\n\n",
	}
}

// huawei returns the VRP / Comware shape: <host> and [host] views, super
// instead of enable.
func huawei(platform, host string) Personality {
	return Personality{
		Platform:             platform,
		DefaultHostname:      host,
		SSHVersion:           "SSH-2.0-HUAWEI-1.5",
		Banner:               "",
		MOTD:                 "\nInfo: The max number of VTY users is 10, and the number\n      of current VTY users on line is 1.\n      The current login time is {time}.\n",
		UserPrompt:           "<{host}>",
		EnablePrompt:         "<{host}>",
		ConfigPrompt:         "[{host}]",
		EnableCommand:        "super",
		EnablePasswordPrompt: "Password:",
		EnableReply:          "Now user privilege is 3 level, and only those commands whose level is equal to or less than this level can be used.\nPrivilege note: 0-VISIT, 1-MONITOR, 2-SYSTEM, 3-MANAGE\n",
		EnableFailed:         "Error: Failed to verify the password.\n",
		ConfigNeedsPrivilege: true,
		ConfigEnter:          []string{"system-view"},
		ConfigEnterReply:     "Enter system view, return user view with Ctrl+Z.\n",
		ConfigExit:           []string{"return", "quit"},
		ExitCommands:         []string{"quit"},
		PagingOff:            []string{"screen-length 0 temporary"},
		Replies: map[string]string{
			"screen-length 0 temporary": "Info: The configuration takes effect on the current user terminal interface only.\n",
			"screen-width 512":          "",
		},
		Pager:               huaweiMore,
		PagerErase:          huaweiErase,
		PageLines:           25,
		ConfigCommands:      []string{"display current-configuration", "display saved-configuration"},
		VersionCommands:     []string{"display version", "display device"},
		Abbreviations:       true,
		InvalidInput:        "{caret}\nError: Unrecognized command found at '^' position.\n",
		LoginUserPrompt:     "\nLogin authentication\n\n\nUsername:",
		LoginPasswordPrompt: "Password:",
		LoginFailed:         "Error: Local authentication is rejected.\n\n",
	}
}

var personalities = func() map[string]Personality {
	ps := []Personality{}

	ios := cisco("cisco_ios", "R1")
	ios.Replies["terminal width 0"] = ""
	ps = append(ps, ios)

	xe := cisco("cisco_xe", "CSR1")
	xe.SSHVersion = "SSH-2.0-Cisco-1.25"
	ps = append(ps, xe)

	nxos := cisco("cisco_nxos", "N9K-1")
	nxos.MOTD = "\nCisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\nCopyright (c) 2002-2023, Cisco Systems, Inc. All rights reserved.\nThe copyrights to certain works contained in this software are\nowned by other third parties and used and distributed under\nlicense.\n"
	nxos.UserPrompt, nxos.EnablePrompt, nxos.ConfigPrompt = "{host}# ", "{host}# ", "{host}(config)# "
	nxos.PromptPrefix, nxos.EchoSuffix = "\r", "\r\r\n"
	nxos.EnableCommand, nxos.ConfigNeedsPrivilege = "", false
	nxos.Pager, nxos.PagerErase = "\x1b[7m--More--\x1b[m", "\r\x1b[K"
	nxos.InvalidInput = "{caret}\n% Invalid command at '^' marker.\n\n"
	nxos.LoginUserPrompt = "\nUser Access Verification\n{host} login: "
	nxos.LoginFailed = "Login incorrect\n"
	ps = append(ps, nxos)

	xr := cisco("cisco_xr", "XR-PE1")
	xr.UserPrompt, xr.EnablePrompt, xr.ConfigPrompt = "RP/0/RSP0/CPU0:{host}#", "RP/0/RSP0/CPU0:{host}#", "RP/0/RSP0/CPU0:{host}(config)#"
	xr.EnableCommand, xr.ConfigNeedsPrivilege = "", false
	xr.MOTD = "\n\n"
	xr.ConfigEnter, xr.ConfigEnterReply = []string{"configure terminal", "configure"}, ""
	xr.InvalidInput = "{caret}\n% Invalid input detected at '^' marker.\n"
	ps = append(ps, xr)

	asa := cisco("cisco_asa", "asa")
	asa.SSHVersion = "SSH-2.0-Cisco-1.25"
	asa.MOTD = "Type help or '?' for a list of available commands.\n"
	asa.PagingOff = []string{"terminal pager 0", "terminal pager lines 0"}
	asa.Replies = map[string]string{"terminal pager 0": "", "terminal pager lines 0": "", "terminal width 511": ""}
	asa.Pager, asa.PagerErase = "<--- More --->", "\r              \r"
	asa.ConfigCommands = []string{"more system:running-config", "show running-config"}
	asa.InvalidInput = "{caret}\nERROR: % Invalid input detected at '^' marker.\n"
	ps = append(ps, asa)

	eos := cisco("arista_eos", "leaf1")
	eos.SSHVersion = "SSH-2.0-OpenSSH_7.8"
	eos.Banner = ""
	eos.MOTD = "Last login: {time} from 127.0.0.1\n"
	eos.Replies = map[string]string{"terminal length 0": "Pagination disabled.\n", "terminal width 32767": "Width set to 32767 columns.\n"}
	eos.Pager, eos.PagerErase = " --More-- ", "\r          \r"
	eos.InvalidInput = "% Invalid input\n"
	eos.EnableFailed = "% Bad secret\n"
	eos.LoginUserPrompt, eos.LoginFailed = "{host} login: ", "\nLogin incorrect\n"
	ps = append(ps, eos)

	ps = append(ps, Personality{
		Platform:        "juniper_junos",
		DefaultHostname: "srx",
		SSHVersion:      "SSH-2.0-OpenSSH_7.5",
		MOTD:            "Last login: {time} from 127.0.0.1\n--- JUNOS 22.4R3-S2.11 built 2024-05-10 20:45:39 UTC\n",
		UserPrompt:      "{user}@{host}> ",
		EnablePrompt:    "{user}@{host}> ",
		ConfigPrompt:    "[edit]\n{user}@{host}# ",
		PromptPrefix:    "\r\n",
		ConfigEnter:     []string{"configure", "configure private", "configure exclusive"},
		ConfigExit:      []string{"exit", "quit", "exit configuration-mode"},
		ConfigExitReply: "Exiting configuration mode\n",
		ExitCommands:    []string{"exit", "quit"},
		PagingOff:       []string{"set cli screen-length 0"},
		Replies: map[string]string{
			"set cli screen-length 0":       "Screen length set to 0\n",
			"set cli screen-width 0":        "Screen width set to 0\n",
			"set cli complete-on-space off": "Disabling complete-on-space\n",
		},
		Pager:               "---(more)---",
		PagerErase:          "\r            \r",
		PageLines:           24,
		ConfigCommands:      []string{"show configuration | display omit", "show configuration", "show configuration | display set"},
		VersionCommands:     []string{"show version", "show chassis hardware"},
		InvalidInput:        "{caret}\nunknown command.\n",
		LoginUserPrompt:     "\n{host} (ttyp0)\n\nlogin: ",
		LoginPasswordPrompt: "Password:",
		LoginFailed:         "Login incorrect\n",
		ExecLF:              true,
	})

	ps = append(ps, Personality{
		Platform:            "juniper_screenos",
		DefaultHostname:     "ssg5",
		SSHVersion:          "SSH-2.0-NetScreen",
		Banner:              "",
		UserPrompt:          "{host}-> ",
		EnablePrompt:        "{host}-> ",
		ConfigPrompt:        "{host}-> ",
		ExitCommands:        []string{"exit"},
		PagingOff:           []string{"set console page 0"},
		Replies:             map[string]string{"set console page 0": ""},
		Pager:               "--- more --- ",
		PagerErase:          "\b\b\b\b\b\b\b\b\b\b\b\b\b             \b\b\b\b\b\b\b\b\b\b\b\b\b",
		PageLines:           22,
		ConfigCommands:      []string{"get config", "get config all"},
		VersionCommands:     []string{"get system"},
		InvalidInput:        "unknown keyword {word}\n",
		LoginUserPrompt:     "login: ",
		LoginPasswordPrompt: "password: ",
		LoginFailed:         "### Login failed\n",
	})

	vrp := huawei("huawei_vrp", "HUAWEI")
	ps = append(ps, vrp)

	vrp8 := huawei("huawei_vrpv8", "HUAWEI")
	vrp8.ConfigPrompt = "[~{host}]"
	vrp8.EnableCommand, vrp8.ConfigNeedsPrivilege = "", false
	vrp8.MOTD = "\nWarning: The initial password poses security risks.\n" + vrp8.MOTD
	ps = append(ps, vrp8)

	cmw := huawei("hp_comware", "HPE")
	cmw.SSHVersion = "SSH-2.0-Comware-7.1.064"
	cmw.MOTD = "\n******************************************************************************\n* Copyright (c) 2010-2023 Hewlett Packard Enterprise Development LP          *\n* Without the owner's prior written consent,                                 *\n* no decompiling or reverse-engineering shall be allowed.                    *\n******************************************************************************\n\n"
	cmw.PagingOff = []string{"screen-length disable"}
	cmw.Replies = map[string]string{"screen-length disable": ""}
	cmw.EnableReply = "User privilege level is 3, and only those commands that can be used by users at this level or lower can be used.\n"
	cmw.EnableFailed = "Invalid password.\n"
	cmw.InvalidInput = "{caret}\n % Unrecognized command found at '^' position.\n"
	cmw.Pager, cmw.PagerErase = "---- More ----", "\x1b[16D                \x1b[16D"
	cmw.LoginUserPrompt, cmw.LoginFailed = "\nlogin: ", "\nAAA authentication failed.\n"
	ps = append(ps, cmw)

	h3c := cmw.clone()
	h3c.Platform, h3c.DefaultHostname = "h3c_comware", "H3C"
	h3c.MOTD = strings.ReplaceAll(cmw.MOTD, "Hewlett Packard Enterprise Development LP", "New H3C Technologies Co., Ltd.          ")
	ps = append(ps, h3c)

	pc := cisco("hp_procurve", "HP-2920")
	pc.SSHVersion = "SSH-2.0-Mocana SSH 6.3"
	pc.Banner = ""
	pc.MOTD = "\nHP J9727A 2920-24G-PoE+ Switch\nSoftware revision WB.16.10.0012\n\n(C) Copyright 2020 Hewlett Packard Enterprise Development LP\n\n                   RESTRICTED RIGHTS LEGEND\n Confidential computer software. Valid license from HPE required for\n possession, use or copying.\n\nWe'd like to keep you up to date about:\n  * Software feature updates\n  * Product end-of-life notices\n\n"
	pc.PressAnyKey = "Press any key to continue"
	pc.UserPrompt, pc.EnablePrompt, pc.ConfigPrompt = "{host}> ", "{host}# ", "{host}(config)# "
	pc.EnablePasswordPrompt = "Password: "
	pc.EnableFailed = "Invalid password\n"
	pc.PagingOff = []string{"no page"}
	pc.Replies = map[string]string{"no page": "", "terminal length 1000": "", "terminal width 1920": ""}
	pc.Pager, pc.PagerErase = "-- MORE --, next page: Space, next line: Enter, quit: Control-C", "\x1b[2K\r"
	pc.ConfigCommands = []string{"show running-config", "show config"}
	pc.VersionCommands = []string{"show version", "show system"}
	pc.InvalidInput = "Invalid input: {word}\n"
	pc.LoginUserPrompt, pc.LoginFailed = "Username: ", "Invalid password\n"
	ps = append(ps, pc)

	cx := cisco("aruba_aoscx", "switch")
	cx.SSHVersion = "SSH-2.0-OpenSSH_8.0"
	cx.Banner, cx.MOTD = "", "\n"
	cx.UserPrompt, cx.EnablePrompt, cx.ConfigPrompt = "{host}# ", "{host}# ", "{host}(config)# "
	cx.EnableCommand, cx.ConfigNeedsPrivilege = "", false
	cx.ConfigEnter, cx.ConfigEnterReply = []string{"configure terminal", "config"}, ""
	cx.PagingOff = []string{"no page"}
	cx.Replies = map[string]string{"no page": ""}
	cx.Pager, cx.PagerErase = "-- MORE --, next page: Space, next line: Enter, quit: q", "\r\x1b[K"
	cx.VersionCommands = []string{"show version", "show system", "show environment"}
	cx.InvalidInput = "Invalid input: {word}\n"
	cx.LoginUserPrompt, cx.LoginFailed = "login as: ", "Login incorrect\n"
	ps = append(ps, cx)

	rj := cisco("ruijie_os", "Ruijie")
	rj.SSHVersion = "SSH-2.0-RGOS_SSH"
	rj.Banner = ""
	rj.ConfigEnterReply = "Enter configuration commands, one per line.  End with CNTL/Z.\n"
	rj.EnableFailed = "% Password error.\n"
	rj.InvalidInput = "{caret}\n% Invalid input detected at '^' marker.\n"
	ps = append(ps, rj)

	ps = append(ps, Personality{
		Platform:        "fortinet",
		DefaultHostname: "FGT",
		SSHVersion:      "SSH-2.0-DYCp",
		UserPrompt:      "{host} {ctx}# ",
		EnablePrompt:    "{host} {ctx}# ",
		ConfigPrompt:    "{host} {ctx}# ",
		EchoSuffix:      "\r\r\n",
		PromptPrefix:    "\r\n",
		ExitCommands:    []string{"exit"},
		Contexts: map[string]string{
			"config system console": "(console) ",
			"config global":         "(global) ",
			"config vdom":           "(vdom) ",
		},
		PagingOff:           []string{"set output standard"},
		Replies:             map[string]string{"set output standard": ""},
		Pager:               "--More-- ",
		PagerErase:          "\r         \r",
		PageLines:           25,
		ConfigCommands:      []string{"show", "show full-configuration"},
		VersionCommands:     []string{"get system status"},
		InvalidInput:        "Unknown action 0\nCommand fail. Return code -1\n",
		LoginUserPrompt:     "{host} login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "Login incorrect\n",
	})

	ps = append(ps, Personality{
		Platform:            "paloalto_panos",
		DefaultHostname:     "PA-220",
		SSHVersion:          "SSH-2.0-OpenSSH_8.0",
		MOTD:                "Last login: {time} from 127.0.0.1\n\nNumber of failed attempts since last successful login: 0\n\n\n\n",
		UserPrompt:          "{user}@{host}> ",
		EnablePrompt:        "{user}@{host}> ",
		ConfigPrompt:        "\n[edit]\n{user}@{host}# ",
		ConfigEnter:         []string{"configure"},
		ConfigEnterReply:    "Entering configuration mode\n",
		ConfigExit:          []string{"exit", "quit"},
		ConfigExitReply:     "Exiting configuration mode\n",
		ExitCommands:        []string{"exit", "quit"},
		PagingOff:           []string{"set cli pager off"},
		Replies:             map[string]string{"set cli pager off": "", "set cli scripting-mode on": "", "set cli terminal width 500": ""},
		Pager:               "lines 1-24 ",
		PagerErase:          "\r\x1b[K",
		PageLines:           25,
		ConfigCommands:      []string{"show config running", "show config saved running-config.xml"},
		VersionCommands:     []string{"show system info"},
		InvalidInput:        "Unknown command: {word}\n",
		LoginUserPrompt:     "login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "Login incorrect\n",
		ExecLF:              true,
	})

	ps = append(ps, Personality{
		Platform:        "mikrotik_routeros",
		DefaultHostname: "MikroTik",
		SSHVersion:      "SSH-2.0-ROSSSH",
		MOTD: "\n\n\n  MMM      MMM       KKK                          TTTTTTTTTTT      KKK\n" +
			"  MMMM    MMMM       KKK                          TTTTTTTTTTT      KKK\n" +
			"  MMM MMMM MMM  III  KKK  KKK  RRRRRR     OOOOOO      TTT     III  KKK  KKK\n" +
			"  MMM  MM  MMM  III  KKKKK     RRR  RRR  OOO  OOO     TTT     III  KKKKK\n" +
			"  MMM      MMM  III  KKK KKK   RRRRRR    OOO  OOO     TTT     III  KKK KKK\n" +
			"  MMM      MMM  III  KKK  KKK  RRR  RRR   OOOOOO      TTT     III  KKK  KKK\n\n" +
			"  MikroTik RouterOS 7.10.1 (c) 1999-2023       https://www.mikrotik.com/\n\n" +
			"Press F1 for help\n\n",
		UserPrompt:          "[{user}@{host}] > ",
		EnablePrompt:        "[{user}@{host}] > ",
		ConfigPrompt:        "[{user}@{host}] > ",
		ExitCommands:        []string{"/quit", "quit"},
		ConfigCommands:      []string{"/export show-sensitive", "/export", "/export verbose show-sensitive"},
		VersionCommands:     []string{"/system resource print", "/system routerboard print"},
		InvalidInput:        "bad command name {word} (line 1 column 1)\n",
		LoginUserPrompt:     "Login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "Login failed, incorrect username or password\n\n",
		ExecLF:              true,
		LoginOptions:        true,
	})

	dell := cisco("dell_os10", "OS10")
	dell.SSHVersion = "SSH-2.0-OpenSSH_7.9p1 Debian-10+deb10u2"
	dell.Banner = ""
	dell.MOTD = "Linux OS10 4.19.0-17-2-amd64 #1 SMP Debian 4.19.194-3 x86_64\n\nThe programs included with the Debian GNU/Linux system are free software;\nthe exact distribution terms for each program are described in the\nindividual files in /usr/share/doc/*/copyright.\n\n-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-\n-*      Dell EMC Network Operating System (OS10)          *-\n-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-\n\n"
	dell.UserPrompt, dell.EnablePrompt, dell.ConfigPrompt = "{host}# ", "{host}# ", "{host}(config)# "
	dell.EnableCommand, dell.ConfigNeedsPrivilege = "", false
	dell.ConfigEnterReply = ""
	dell.Pager, dell.PagerErase = "--more--", "\r        \r"
	dell.ConfigCommands = []string{"show running-configuration", "show startup-configuration"}
	dell.InvalidInput = "% Error: Unrecognized command.\n"
	dell.LoginUserPrompt, dell.LoginFailed = "OS10 login: ", "\nLogin incorrect\n"
	dell.ExecLF = true
	ps = append(ps, dell)

	ps = append(ps, Personality{
		Platform:            "extreme_exos",
		DefaultHostname:     "X440G2",
		SSHVersion:          "SSH-2.0-OpenSSH_7.5",
		MOTD:                "\nExtremeXOS\nCopyright (C) 1996-2023 Extreme Networks. All rights reserved.\nThis product is protected by one or more US patents listed at http://www.extremenetworks.com/patents along with their foreign counterparts.\n==============================================================================\n\nPress the <tab> or '?' key at any time for completions.\nRemember to save your configuration changes.\n\n",
		UserPrompt:          "{host}.{n} # ",
		EnablePrompt:        "{host}.{n} # ",
		ConfigPrompt:        "{host}.{n} # ",
		ExitCommands:        []string{"exit", "logout", "quit"},
		PagingOff:           []string{"disable clipaging"},
		Replies:             map[string]string{"disable clipaging": "", "disable cli prompting": ""},
		Pager:               "Press <SPACE> to continue or <Q> to quit:",
		PagerErase:          "\r                                         \r",
		PageLines:           24,
		ConfigCommands:      []string{"show configuration", "show configuration detail"},
		VersionCommands:     []string{"show version", "show switch"},
		Abbreviations:       true,
		InvalidInput:        "{caret}\n%% Invalid input detected at '^' marker.\n",
		LoginUserPrompt:     "\n\nlogin: ",
		LoginPasswordPrompt: "password: ",
		LoginFailed:         "\nLogin incorrect\n\n",
	})

	ps = append(ps, Personality{
		Platform:            "vyos",
		DefaultHostname:     "vyos",
		SSHVersion:          "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3",
		MOTD:                "Welcome to VyOS!\n\n   Version:          VyOS 1.4.0\n   Release train:    sagitta\n\n   Docs:             https://docs.vyos.io/en/sagitta\n   Support:          https://support.vyos.io\n\nLast login: {time} from 127.0.0.1\n",
		UserPrompt:          "{user}@{host}:~$ ",
		EnablePrompt:        "{user}@{host}:~$ ",
		ConfigPrompt:        "[edit]\n{user}@{host}# ",
		ConfigEnter:         []string{"configure"},
		ConfigExit:          []string{"exit", "exit discard"},
		ConfigExitReply:     "exit\n",
		ExitCommands:        []string{"exit", "logout"},
		PagingOff:           []string{"set terminal length 0", "terminal length 0"},
		Replies:             map[string]string{"set terminal length 0": "", "terminal length 0": "", "set terminal width 0": ""},
		Pager:               ":",
		PagerErase:          "\r\x1b[K",
		PageLines:           24,
		ConfigCommands:      []string{"show configuration commands", "show configuration"},
		VersionCommands:     []string{"show version"},
		InvalidInput:        "\n  Invalid command: [{word}]\n\n",
		LoginUserPrompt:     "vyos login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "\nLogin incorrect\n",
		ExecLF:              true,
	})

	ps = append(ps, Personality{
		Platform:            "linux",
		DefaultHostname:     "host",
		SSHVersion:          "SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.10",
		MOTD:                "Welcome to Ubuntu 22.04.4 LTS (GNU/Linux 5.15.0-105-generic x86_64)\n\nLast login: {time} from 127.0.0.1\n",
		UserPrompt:          "{user}@{host}:~$ ",
		EnablePrompt:        "{user}@{host}:~$ ",
		ConfigPrompt:        "{user}@{host}:~$ ",
		ExitCommands:        []string{"exit", "logout"},
		ConfigCommands:      []string{"cat /etc/hostname", "cat /etc/hosts", "cat /etc/resolv.conf", "cat /etc/network/interfaces"},
		VersionCommands:     []string{"uname -a"},
		InvalidInput:        "-bash: {word}: command not found\n",
		LoginUserPrompt:     "{host} login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "\nLogin incorrect\n",
		ExecLF:              true,
	})

	m := make(map[string]Personality, len(ps))
	for _, p := range ps {
		if _, dup := m[p.Platform]; dup {
			panic("devsim: personality defined twice: " + p.Platform)
		}
		m[p.Platform] = p
	}
	return m
}()
