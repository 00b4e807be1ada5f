package driver

import "regexp"

// Citrix NetScaler / ADC (NSCLI).
//
// NSCLI prompts with "> " (or the text `set cli prompt` chose, often the
// host name: "ns01> "), has no enable step (command policies decide), and
// ends every command's answer with a " Done" line, which stays in the
// backup as the device prints it: it never changes. `set cli mode -page
// OFF` lasts for the session. Errors start with "ERROR: ".
//
// The running configuration prints the secrets it keeps encrypted with
// ENCMTHD ("set ns rpcNode 192.0.2.10 -password 8a3b... -encrypted
// -encryptmethod ENCMTHD_3 ...") encrypted anew each time it is shown,
// so their value is masked; the setting itself still counts.
//
// Written from the NetScaler command reference and the facts other tools
// rely on (netmiko's and Netshot's NetScaler drivers: "set cli mode -page
// OFF", the " Done" line, the "# Last modified" header, the rotating
// ENCMTHD values); there is no public capture of an NSCLI session.
var (
	netscalerPrompt = re(`^[\w.\-@:()\[\]]{0,80}>$`)
	// netscalerMore also takes the percentage some releases print.
	netscalerMore = re(`(?i)--\s?more\s?--(?: ?\(\d{1,3}%\))?$`)
)

// netscalerSecrets: NSCLI writes every secret it keeps encrypted, each
// value followed by "-encrypted" ("-encryptmethod ENCMTHD_3 -kek
// -suffix ..." after it): system users' hashes ("add system user u <hex>
// -encrypted -hashmethod SHA512"), the RPC nodes' passwords, the RADIUS,
// TACACS+ and LDAP servers' keys and bind passwords, SNMPv3 users'
// keys, certificate key passphrases ("-passcrypt "..." -encrypted"),
// monitors' passwords, IPsec keys. SNMP communities and trap
// communities are written in clear.
var netscalerSecrets = []SecretRule{
	{Name: "encrypted secret", Match: `(?:"(?P<secret>[^"]*)"|(?P<secret>[^\s"-]\S*)) -encrypted\b`},
	{Name: "SNMP community", Match: `^(?:add|set) snmp community ` + secretValue},
	{Name: "SNMP trap community", Match: `^add snmp trap .* -communityName ` + secretValue},
}

func init() {
	Register(Platform{
		ID: "citrix_netscaler", Name: "Citrix NetScaler / ADC", Vendor: "Citrix",
		Aliases:         []string{"netscaler", "citrix_adc"},
		DefaultCommands: lines("show ns runningConfig"),
		Secrets:         netscalerSecrets,
		Dialogue: Dialogue{
			Prompt:       netscalerPrompt,
			Pager:        netscalerMore,
			PagingOff:    []string{"set cli mode -page OFF"},
			CommandError: re(`^\s*ERROR: `),
		},
		// The header names the release ("#NS13.1 Build 49.13"), which
		// moves on an upgrade, and who saved last and when.
		Noise: []string{
			`^#NS\d+\.\d+ Build [\w.]+$`,
			"^# Last modified by `save config`, ",
			` (?P<mask>[0-9a-f]{16,}) -encrypted -encryptmethod ENCMTHD_\d+\b`,
		},
		Syslog: []SyslogPattern{{
			// Audit log "default CLI CMD_EXECUTED 1488010 0 : User nsroot
			// - Remote_ip 192.168.0.1 - Command "add lb vserver ..." -
			// Status "Success"" (GUI and API calls log as GUI / API).
			// Commands that change nothing, and failed ones, are left out.
			Name:    "netscaler-cmd-executed",
			Needles: []string{"CMD_EXECUTED"},
			Match:   regexp.MustCompile(`\b(?:CLI|GUI|API) CMD_EXECUTED\b.* - Status "Success"`),
			Exclude: regexp.MustCompile(`- Command "(?:show|sh|stat|save|ping|ping6|traceroute|traceroute6|help|whoami|exit|quit|` +
				`switch ns partition|set cli|clear cli|shell|login|logout|batch -fileName)\b`),
		}},
		Notes: "Collects the running configuration of the partition the user logs in to (default). With admin partitions, " +
			"add `switch ns partition <name>` and `show ns runningConfig` per partition to a template. The user needs " +
			"a command policy that allows show ns runningConfig and set cli mode.",
	})
}
