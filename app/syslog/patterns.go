package syslog

import (
	"fmt"
	"regexp"
	"strings"
)

// Pattern recognises one kind of configuration-change message.
//
// A message matches when it holds one of Needles (a cheap literal test
// that keeps a flood of unrelated lines away from the regular
// expression; none means the expression always runs), Match finds it,
// and Exclude (when set) does not: the ASA and Huawei command records
// also log read-only commands such as "show".
//
// Platforms names the driver IDs (app/collect/driver) the pattern was
// written for. It documents and groups; it does not filter: a message
// matches whatever platform its device is set to, because a device set
// to the wrong platform should still get its backup.
type Pattern struct {
	Name      string
	Platforms []string
	Needles   []string
	Match     *regexp.Regexp
	Exclude   *regexp.Regexp
	BuiltIn   bool
}

// matches reports whether text is a configuration change for p.
func (p *Pattern) matches(text string) bool {
	if len(p.Needles) > 0 {
		found := false
		for _, n := range p.Needles {
			if strings.Contains(text, n) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if !p.Match.MatchString(text) {
		return false
	}
	return p.Exclude == nil || !p.Exclude.MatchString(text)
}

// Limits on user patterns: a name fits a form field, an expression stays
// small enough that matching every message against it stays cheap (Go's
// regexp runs in time linear in the input, so there is no catastrophic
// backtracking to fear, only size).
const (
	MaxPatternName = 64
	MaxPatternExpr = 512
	MaxUserPattern = 50
)

// CompilePattern validates a user pattern: a name and a Go regular
// expression (RE2 syntax, https://golang.org/s/re2syntax) matched
// anywhere in the message text. Errors say what is wrong in words a user
// can act on.
func CompilePattern(name, expr string) (Pattern, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return Pattern{}, fmt.Errorf("syslog pattern: a name is required")
	case len(name) > MaxPatternName:
		return Pattern{}, fmt.Errorf("syslog pattern %q: the name is longer than %d characters", name[:MaxPatternName], MaxPatternName)
	case strings.TrimSpace(expr) == "":
		return Pattern{}, fmt.Errorf("syslog pattern %q: the regular expression is empty", name)
	case len(expr) > MaxPatternExpr:
		return Pattern{}, fmt.Errorf("syslog pattern %q: the regular expression is %d characters long, at most %d are allowed", name, len(expr), MaxPatternExpr)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return Pattern{}, fmt.Errorf("syslog pattern %q: not a valid regular expression: %w", name, err)
	}
	if re.MatchString("") {
		return Pattern{}, fmt.Errorf("syslog pattern %q: the regular expression matches an empty message, so every message would trigger a backup", name)
	}
	return Pattern{Name: name, Match: re}, nil
}

// BuiltinPatterns returns the configuration-change messages backupd
// knows, one Pattern per kind of message. The sample lines in
// patterns_test.go, each with where it was found, prove every one.
func BuiltinPatterns() []Pattern {
	out := make([]Pattern, len(builtins))
	copy(out, builtins)
	return out
}

var builtins = []Pattern{
	{
		// "%SYS-5-CONFIG_I: Configured from console by vty2 (10.34.195.36)",
		// also with a stack member ("%SYS-SW2-5-CONFIG_I" on IOS-XE stacks).
		// Arista EOS and Ruijie RGOS send the same message.
		Name:      "cisco-sys-config-i",
		Platforms: []string{"cisco_ios", "cisco_xe", "arista_eos", "ruijie_os"},
		Needles:   []string{"CONFIG_I"},
		Match:     regexp.MustCompile(`%SYS-(?:SW\d+-)?5-CONFIG_I\b`),
	},
	{
		// "%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on ..."
		Name:      "nxos-vshd-config-i",
		Platforms: []string{"cisco_nxos"},
		Needles:   []string{"VSHD_SYSLOG_CONFIG_I"},
		Match:     regexp.MustCompile(`%VSHD-5-VSHD_SYSLOG_CONFIG_I\b`),
	},
	{
		// "%MGBL-CONFIG-6-DB_COMMIT : Configuration committed by user 'admin'. ..."
		// (and DB_COMMIT_ADMIN for the admin plane).
		Name:      "iosxr-db-commit",
		Platforms: []string{"cisco_xr"},
		Needles:   []string{"DB_COMMIT"},
		Match:     regexp.MustCompile(`%MGBL-CONFIG-6-DB_COMMIT(?:_ADMIN)?\b`),
	},
	{
		// "mgd[4410]: UI_COMMIT: User 'netops' requested 'commit' operation ..."
		// and "UI_COMMIT_COMPLETED: commit complete"; in RFC 5424 mode the
		// tag is the MSGID. UI_COMMIT_PROGRESS (many per commit) does not match.
		Name:      "junos-ui-commit",
		Platforms: []string{"juniper_junos"},
		Needles:   []string{"UI_COMMIT"},
		Match:     regexp.MustCompile(`\bUI_COMMIT(?:_COMPLETED)?\b`),
	},
	{
		// Huawei VRP and H3C/HPE Comware configuration-changed events:
		// "CONFIGURATION/6/CFG_FILE_CHANGE", "CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT",
		// "CFG/4/CFG_CHANGE" (older VRP), "CFGMAN/5/CFGMAN_CFGCHANGED" (Comware).
		Name:      "huawei-h3c-cfg-change",
		Platforms: []string{"huawei_vrp", "huawei_vrpv8", "hp_comware", "h3c_comware"},
		Needles:   []string{"CFG", "CONFIG"},
		Match: regexp.MustCompile(`(?:CFG/\d/CFG_CHANGE|CONFIGURATION/\d/(?:CFG_FILE_CHANGE|CFG_CHANGE|NETCONF_CONFIG_CHANGE_EVENT)|` +
			`CFGMAN/\d/CFGMAN_CFGCHANGED)\b`),
	},
	{
		// Command records: Huawei "SHELL/5/CMDRECORD: ... Command="..."" and
		// Comware "SHELL/5/SHELL_CMD: ...; Command is ...". They record
		// every command, so read-only and session commands are excluded.
		Name:      "huawei-h3c-command-record",
		Platforms: []string{"huawei_vrp", "huawei_vrpv8", "hp_comware", "h3c_comware"},
		Needles:   []string{"SHELL/"},
		Match:     regexp.MustCompile(`SHELL/\d/(?:CMDRECORD|SHELL_CMD)\b`),
		Exclude: regexp.MustCompile(`(?i)(?:command\s*[=:]\s*"?|command is\s+)\s*(?:display|dis|dir|ping|tracert|quit|q|return|` +
			`system-view|sys|screen-length|undo screen-length|terminal|undo terminal|save|log off|bash|\?)(?:\s|"|\.|\)|;|$)`),
	},
	{
		// FortiOS event log, subtype system: logdesc="Configuration changed"
		// (logid 0100044546) and logdesc="Object attribute configured"
		// (logid 0100044547).
		Name:      "fortios-config-changed",
		Platforms: []string{"fortinet"},
		Needles:   []string{"logdesc=", "logid="},
		Match:     regexp.MustCompile(`logdesc="(?:Configuration changed|Object attribute configured)"|logid="?01000445(?:46|47)\b`),
	},
	{
		// PAN-OS CONFIG log (CSV): ...,CONFIG,<subtype>,<future>,<generated>,
		// <host>,<vsys>,<command>,<admin>,<client>,<result>,... A commit is
		// when the running configuration changes; set/edit only touch the
		// candidate.
		Name:      "panos-config-commit",
		Platforms: []string{"paloalto_panos"},
		Needles:   []string{",CONFIG,"},
		Match:     regexp.MustCompile(`,CONFIG,(?:[^,]*,){5}commit,[^,]*,[^,]*,(?:Submitted|Succeeded)\b`),
	},
	{
		// HPE ProCurve / Aruba OS-Switch: "Startup configuration changed by
		// CLI..." and "Running config change ..." event log lines.
		Name:      "procurve-config-change",
		Platforms: []string{"hp_procurve"},
		Needles:   []string{"onfig"},
		Match:     regexp.MustCompile(`(?i)\b(?:startup|running) config(?:uration)? change`),
	},
	{
		// Aruba AOS-CX accounting record of a configuration command
		// ("type=USYS_CONFIG ... rec=ACCT_CMD"), when accounting goes to syslog.
		Name:      "aoscx-config-command",
		Platforms: []string{"aruba_aoscx"},
		Needles:   []string{"USYS_CONFIG"},
		Match:     regexp.MustCompile(`\btype=USYS_CONFIG\b`),
		Exclude:   regexp.MustCompile(`\bdata=(?:'|")?(?:show|ping|traceroute)\b`),
	},
	{
		// MikroTik RouterOS: "system,info mangle rule changed by admin",
		// "item added by admin"; with bsd-syslog the topics are left out.
		Name:      "routeros-system-change",
		Platforms: []string{"mikrotik_routeros"},
		Needles:   []string{" by "},
		Match:     regexp.MustCompile(`^(?:system,info(?:,[a-z]+)*\s+)?[A-Za-z0-9 ./_-]{1,80}? (?:added|changed|removed|moved) by \S`),
	},
	{
		// Cisco ASA: %ASA-5-111008 "User 'admin' executed the 'X' command"
		// (every command but show) and %ASA-5-111010 "User 'admin', running
		// 'CLI' from IP a.b.c.d, executed 'X'" (FTD and PIX likewise).
		// Commands that change nothing are excluded.
		Name:      "asa-command-executed",
		Platforms: []string{"cisco_asa"},
		Needles:   []string{"-1110"},
		Match:     regexp.MustCompile(`%(?:ASA|PIX|FTD)-(?:[a-z]+-)?5-1110(?:08|10)\b`),
		Exclude: regexp.MustCompile(`executed (?:the )?'(?:show|sh|dir|more|ping|traceroute|terminal|enable|exit|end|logout|quit|` +
			`who|perfmon|capture|no capture|clear|debug|undebug|no debug|packet-tracer|changeto|configure terminal|conf t|` +
			`write terminal|login|copy|verify)\b`),
	},
}

// Matcher holds the patterns a listener tries, built-in ones first.
type Matcher struct {
	patterns []Pattern
}

// NewMatcher returns a matcher over the built-in patterns plus user's,
// which must come from CompilePattern (at most MaxUserPattern of them).
func NewMatcher(user []Pattern) (*Matcher, error) {
	if len(user) > MaxUserPattern {
		return nil, fmt.Errorf("syslog patterns: %d user patterns, at most %d are allowed", len(user), MaxUserPattern)
	}
	seen := make(map[string]bool)
	all := BuiltinPatterns()
	for i := range all {
		all[i].BuiltIn = true
		seen[all[i].Name] = true
	}
	for _, p := range user {
		if p.Match == nil {
			return nil, fmt.Errorf("syslog pattern %q: not compiled (use CompilePattern)", p.Name)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("syslog pattern %q: the name is already used", p.Name)
		}
		seen[p.Name] = true
		p.BuiltIn = false
		all = append(all, p)
	}
	return &Matcher{patterns: all}, nil
}

// Match returns the name of the first pattern m matches.
func (x *Matcher) Match(m *Message) (string, bool) {
	text := m.matchText()
	for i := range x.patterns {
		if x.patterns[i].matches(text) {
			return x.patterns[i].Name, true
		}
	}
	return "", false
}
