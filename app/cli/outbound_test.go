package cli_test

import (
	"context"
	"strings"
	"testing"

	"backupd/app/netguard"
)

// serve --outbound-allow saves the allow list the settings page edits,
// and the git flags are checked against it; a remote on this machine
// needs --git-allow-local-remote; remote helpers are refused.
func TestServeOutboundAndGitRemoteFlags(t *testing.T) {
	data := storeDir(t)
	createKey(t, data, "--name", "bootstrap")
	for remote, want := range map[string]string{
		"https://169.254.10.5/net.git": "link-local",
		"file:///srv/net.git":          "--git-allow-local-remote",
		"ext::/tmp/run-me":             "remote helpers",
	} {
		r := run(t, call{}, "serve", "--data", data, "--listen", "127.0.0.1:0", "--git-mirror", "--git-remote", remote)
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Fatalf("serve --git-remote %s:\n%s", remote, r)
		}
	}
	mustFail(t, call{}, []string{"--outbound-allow", "not-an-address"}, "serve", "--data", data, "--listen", "127.0.0.1:0", "--outbound-allow", "not-an-address")

	// The mirror stays off: nothing is pushed (no packet leaves the
	// machine), the settings are only checked and saved.
	s := startServe(t, data, "--outbound-allow", "169.254.10.0/24", "--outbound-allow", "fe80::1",
		"--git-remote", "https://169.254.10.5/net.git")
	s.stop(t)
	store := openStore(t, data)
	ctx := context.Background()
	pol, err := netguard.Load(ctx, store)
	if err != nil || strings.Join(netguard.Strings(pol.Allow), " ") != "169.254.10.0/24 fe80::1" {
		t.Fatalf("stored allow list %v, %v", pol.Allow, err)
	}
	if gm, err := store.GitMirrorSettings(ctx); err != nil || gm.RemoteURL != "https://169.254.10.5/net.git" {
		t.Fatalf("git settings %+v, %v", gm, err)
	}

	s = startServe(t, data, "--git-allow-local-remote", "--git-remote", "file:///srv/net.git")
	s.stop(t)
	if gm, err := store.GitMirrorSettings(ctx); err != nil || !gm.AllowLocalRemote || gm.RemoteURL != "file:///srv/net.git" {
		t.Fatalf("git settings with a local remote %+v, %v", gm, err)
	}
}
