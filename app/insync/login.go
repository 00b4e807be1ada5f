package insync

import (
	"strconv"
	"strings"
)

// Oxidized keeps how it logs into a node beside the node: its `input`
// (the login methods to try, "ssh, telnet", first the first) and the vars
// ssh_port and telnet_port, which its ssh and telnet inputs read; a
// map's port is the node's own port, which wins over both. An HTTP JSON
// source maps them to a record's Vars under those names, through map or
// vars_map, and loginOf reads them there.
const (
	varInput      = "input"
	varPort       = "port"
	varSSHPort    = "ssh_port"
	varTelnetPort = "telnet_port"
)

// loginOf is the login method and port of the device r describes: the
// record's own (its input's first method; its port, else the port var of
// that method) where it gives them, else the source's Defaults, else ssh
// on 22 (telnet on 23). A method backupd does not speak or a port that
// is not one is the record's problem: the device is skipped, never
// reached on a port the source did not mean.
func loginOf(r Record, d Defaults) (method string, port int, problem Why) {
	method = d.LoginMethod
	if in := strings.TrimSpace(r.Vars[varInput]); in != "" {
		first, _, _ := strings.Cut(in, ",")
		method = strings.ToLower(strings.TrimSpace(first))
		if method != "ssh" && method != "telnet" {
			return "", 0, why(WhyLoginMethod, quoted(first), quoted(in))
		}
	}
	if method == "" {
		method = "ssh"
	}
	for _, k := range []string{varPort, map[string]string{"ssh": varSSHPort, "telnet": varTelnetPort}[method]} {
		v := strings.TrimSpace(r.Vars[k])
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, why(WhyNotAPort, k, quoted(v))
		}
		return method, n, Why{}
	}
	port = d.Port[method]
	if port == 0 {
		port = map[string]int{"ssh": 22, "telnet": 23}[method]
	}
	return method, port, Why{}
}
