package gitmirror_test

import (
	"errors"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/ssh"

	"backupd/app/gitmirror"
	"backupd/app/netguard"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/testkit"
)

// The remotes the mirror takes: no remote helper (ext:: runs a command,
// fd:: uses open files), a remote on this machine only with the switch,
// no link-local or cloud metadata address unless allowed.
func TestRemoteRefusals(t *testing.T) {
	key := []byte("sealed")
	hosts := "[git.example]:22 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDGl3tH5qWkq5UjV1pnN0nGcyu8bmZIGwbVr+oP2CmEn"
	cases := []struct {
		remote string
		local  bool
		want   error // nil: taken
	}{
		{"ext::/tmp/run-me", false, gitmirror.ErrRemoteHelper},
		{"ext::sh -c touch% /tmp/pwned", false, gitmirror.ErrRemoteHelper},
		{"fd::17", false, gitmirror.ErrRemoteHelper},
		{"fd::3,4/repo", false, gitmirror.ErrRemoteHelper},
		{"x-y.z+1::addr", false, gitmirror.ErrRemoteHelper},
		{"file:///srv/net.git", false, gitmirror.ErrLocalRemote},
		{"/srv/net.git", false, gitmirror.ErrLocalRemote},
		{"file:///srv/net.git", true, nil},
		{"/srv/net.git", true, nil},
		{"ssh://git@169.254.169.254/net.git", false, netguard.ErrRefused},
		{"git@169.254.169.254:net.git", false, netguard.ErrRefused},
		{"git@[fd00:ec2::254]:net.git", false, netguard.ErrRefused},
		{"[fe80::1]:net.git", false, netguard.ErrRefused},
		{"https://169.254.169.254/net.git", false, netguard.ErrRefused},
		{"https://[fd00:ec2::254]:8443/net.git", false, netguard.ErrRefused},
		{"git@2852039166:net.git", false, netguard.ErrRefused},
		{"ssh://git@git.example/net.git", false, nil},
		{"git@git.example:net.git", false, nil},
		{"https://git.example/net.git", false, nil},
		{"[2001:db8::1]:net.git", false, nil},
	}
	for _, c := range cases {
		gm := db.GitMirror{RemoteURL: c.remote, AllowLocalRemote: c.local, KnownHosts: hosts, SSHKey: key}
		err := gitmirror.Validate(gm, netguard.Policy{})
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s (local allowed %v): %v, want taken", c.remote, c.local, err)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s (local allowed %v): %v, want %v", c.remote, c.local, err, c.want)
		}
	}
	// The allow list covers a git server on a link-local address.
	allow := netguard.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("169.254.5.0/24")}}
	if err := gitmirror.Validate(db.GitMirror{RemoteURL: "https://169.254.5.9/net.git"}, allow); err != nil {
		t.Errorf("an allowed link-local remote: %v", err)
	}
	for remote, want := range map[string]string{
		"ssh://git@git.example:2222/net.git": "git.example 2222",
		"git@git.example:net.git":            "git.example 22",
		"user@[2001:db8::1]:net.git":         "2001:db8::1 22",
		"https://git.example/net.git":        "git.example 443",
		"http://git.example:8080/net.git":    "git.example 8080",
	} {
		kind, err := gitmirror.RemoteKind(remote)
		if err != nil {
			t.Fatal(err)
		}
		host, port, err := gitmirror.RemoteHost(remote, kind)
		if got := host + " " + strconv.Itoa(port); err != nil || got != want {
			t.Errorf("RemoteHost(%s) = %s, %v; want %s", remote, got, err, want)
		}
	}
}

// A push goes to the address the mirror resolved and checked, whatever
// git would look up itself: over HTTP a name only the test's resolver
// knows is reached (pinned with http.curloptResolve); a name that
// resolves to the metadata address is refused before git runs, and the
// server gets nothing. A local remote stored without the switch (by an
// older release) is refused at push time too.
func TestPushGoesToTheCheckedAddress(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	bare := bareRepo(t)
	git(t, bare, "config", "http.receivepack", "true")
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(bare), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1"}}
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		backend.ServeHTTP(w, r)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	e.mirror.Resolver = testkit.Resolver(t, map[string][]netip.Addr{
		"git.test":     {netip.MustParseAddr("127.0.0.1")},
		"rebound.test": {netip.MustParseAddr("169.254.169.254")},
	})
	e.pushRun(db.GitMirror{Enabled: true, RemoteURL: "http://git.test:" + port + "/" + filepath.Base(bare)}, bare, r1, "r1", "to a pinned name")

	head := strings.TrimSpace(git(t, bare, "rev-parse", "main"))
	seed := int64(2)
	for remote, want := range map[string]error{
		"http://rebound.test:" + port + "/" + filepath.Base(bare): netguard.ErrRefused,
		"file://" + bare: gitmirror.ErrLocalRemote,
		"ext::" + gitBin: gitmirror.ErrRemoteHelper,
	} {
		before := requests.Load()
		if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: remote}); err != nil {
			t.Fatal(err)
		}
		seed++
		e.sims[r1].Mutate(seed)
		e.run(queue.TriggerSchedule)
		e.sync()
		err := e.mirror.Push(e.ctx)
		if !errors.Is(err, want) && (err == nil || !strings.Contains(err.Error(), want.Error())) {
			t.Errorf("push to %s: %v, want %v", remote, err, want)
		}
		if requests.Load() != before {
			t.Errorf("push to %s: the server got a request", remote)
		}
		if got := strings.TrimSpace(git(t, bare, "rev-parse", "main")); got != head {
			t.Errorf("push to %s changed the remote", remote)
		}
	}
}

// Over SSH by name: ssh connects to the address the mirror checked
// (HostName) and still checks the host key pinned under the name
// (HostKeyAlias).
func TestPushOverSSHByPinnedName(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("ssh is not installed")
	}
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	client, clientPEM := newKey(t)
	srv := startGitSSH(t, client.PublicKey())
	bare := bareRepo(t)
	port := srv.addr[strings.LastIndex(srv.addr, ":")+1:]
	e.mirror.Resolver = testkit.Resolver(t, map[string][]netip.Addr{"git.test": {netip.MustParseAddr("127.0.0.1")}})
	gm := db.GitMirror{Enabled: true, RemoteURL: "ssh://git@git.test:" + port + bare,
		KnownHosts: "[git.test]:" + port + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(srv.hostKey))),
		SSHKey:     e.sealer.Seal(clientPEM, secret.PurposeGitKey)}
	e.pushRun(gm, bare, r1, "r1", "over SSH to a pinned name")
}
