package gitmirror

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"backupd/app/netguard"
	"backupd/db"
)

// Refusals of a remote that RemoteKind or CheckRemote gives.
var (
	// ErrRemoteHelper refuses git's remote-helper syntax, <helper>::<address>:
	// ext:: runs a command, fd:: uses open file descriptors.
	ErrRemoteHelper = errors.New("remote helpers (ext::, fd:: and the like) are not taken: they run commands or use open files; use ssh://, user@host:path or https://")
	// ErrLocalRemote refuses a remote on this machine unless serve was
	// started with --git-allow-local-remote.
	ErrLocalRemote = errors.New("a remote on this server (file:// or a path) is taken only when serve runs with --git-allow-local-remote (BACKUPD_GIT_ALLOW_LOCAL_REMOTE=true)")
)

// remoteHelper reports whether u is <helper>::<address>, which git hands
// to the program git-remote-<helper>: a helper name starts with a letter
// and holds letters, digits, +, - and . (git's is_urlschemechar).
func remoteHelper(u string) bool {
	i := strings.Index(u, "::")
	if i <= 0 {
		return false
	}
	for j, c := range u[:i] {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// RemoteHost is the host and port git connects to for remote (kind as
// RemoteKind says): ssh://[user@]host[:port]/path, [user@]host:path
// (port 22) or https://host[:port]/path. A file remote has none ("").
func RemoteHost(remote, kind string) (host string, port int, err error) {
	switch kind {
	case RemoteSSH:
		if strings.Contains(remote, "://") {
			u, err := url.Parse(remote)
			if err != nil {
				return "", 0, err
			}
			return u.Hostname(), portOf(u, 22), nil
		}
		s := remote
		colon := strings.Index(s, ":")
		if strings.HasPrefix(s, "[") || strings.Contains(s[:max(colon, 0)], "@[") {
			if at := strings.Index(s, "@["); at >= 0 {
				s = s[at+1:]
			}
			end := strings.Index(s, "]")
			if end < 0 {
				return "", 0, errors.New("the remote's [address] is not closed")
			}
			return s[1:end], 22, nil
		}
		if at := strings.LastIndex(s[:colon], "@"); at >= 0 {
			s = s[at+1:]
			colon -= at + 1
		}
		return s[:colon], 22, nil
	case RemoteHTTPS:
		u, err := url.Parse(remote)
		if err != nil {
			return "", 0, err
		}
		def := 443
		if u.Scheme == "http" {
			def = 80
		}
		return u.Hostname(), portOf(u, def), nil
	}
	return "", 0, nil
}

func portOf(u *url.URL, def int) int {
	if p, err := strconv.Atoi(u.Port()); err == nil && p > 0 {
		return p
	}
	return def
}

// CheckRemote checks where cfg's remote points before it is saved or
// used: a kind RemoteKind takes, a remote on this machine only with
// AllowLocalRemote, and a host the outbound policy does not refuse as
// written (a link-local or cloud metadata address; a name is checked
// when it is resolved, at push time).
func CheckRemote(cfg db.GitMirror, outbound netguard.Policy) (string, error) {
	kind, err := RemoteKind(cfg.RemoteURL)
	if err != nil {
		return "", err
	}
	if kind == RemoteFile && !cfg.AllowLocalRemote {
		return "", ErrLocalRemote
	}
	host, _, err := RemoteHost(cfg.RemoteURL, kind)
	if err != nil {
		return "", fmt.Errorf("the remote URL: %w", err)
	}
	if host != "" {
		if err := outbound.CheckHost(host); err != nil {
			return "", fmt.Errorf("the remote's host: %w", err)
		}
	}
	return kind, nil
}

// pinRemote resolves the remote's host under the outbound policy and
// returns what makes git connect to those addresses only, so that the
// lookup git (or ssh) would make itself cannot answer otherwise (DNS
// rebinding): for SSH options for ssh (HostName set to the address,
// HostKeyAlias keeping the pinned key's name), for HTTPS git settings
// (http.curloptResolve; redirects are not followed, as they would lead
// elsewhere). An IP address needs no pinning; its check is CheckRemote's.
func pinRemote(ctx context.Context, remote, kind string, outbound netguard.Policy) (sshOpts, env []string, err error) {
	host, port, err := RemoteHost(remote, kind)
	if err != nil || host == "" {
		return nil, nil, err
	}
	if kind == RemoteHTTPS {
		env = gitConfigEnv("http.followRedirects", "false")
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil, env, outbound.CheckHost(host)
	}
	addrs, err := outbound.Resolve(ctx, host)
	if err != nil {
		return nil, nil, fmt.Errorf("git mirror: %w", err)
	}
	switch kind {
	case RemoteSSH:
		alias := host
		if port != 22 {
			alias = "[" + host + "]:" + strconv.Itoa(port)
		}
		return []string{"-o", "HostKeyAlias=" + alias, "-o", "HostName=" + addrs[0].String()}, nil, nil
	case RemoteHTTPS:
		list := make([]string, len(addrs))
		for i, a := range addrs {
			list[i] = a.String()
			if a.Is6() {
				list[i] = "[" + list[i] + "]"
			}
		}
		return nil, gitConfigEnv("http.followRedirects", "false",
			"http.curloptResolve", host+":"+strconv.Itoa(port)+":"+strings.Join(list, ",")), nil
	}
	return nil, nil, nil
}

// gitConfigEnv passes git settings through its environment
// (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n): key, value
// pairs.
func gitConfigEnv(kv ...string) []string {
	n := len(kv) / 2
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(n)}
	for i := range n {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[2*i]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[2*i+1]))
	}
	return env
}

// allowProtocol is GIT_ALLOW_PROTOCOL for a push to a remote of kind: git
// itself then refuses any other transport, whatever the URL became.
func allowProtocol(kind string) string {
	switch kind {
	case RemoteSSH:
		return "GIT_ALLOW_PROTOCOL=ssh"
	case RemoteHTTPS:
		return "GIT_ALLOW_PROTOCOL=https:http"
	case RemoteFile:
		return "GIT_ALLOW_PROTOCOL=file"
	}
	return "GIT_ALLOW_PROTOCOL=none"
}
