package gitmirror_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"backupd/app/gitmirror"
	"backupd/app/netguard"
	"backupd/app/secret"
	"backupd/internal/dbtest"
)

// Settings are stored only once a push could use them; typed secrets
// are sealed, an empty field keeps the stored one, and each refusal says
// which rule it broke.
func TestSaveSettingsChecksSealsAndKeeps(t *testing.T) {
	ctx := context.Background()
	store := dbtest.Open(t)
	sealer, err := secret.LoadOrCreate(dbtest.DataDir(t, store))
	if err != nil {
		t.Fatal(err)
	}
	_, keyPEM := newKey(t)
	hosts := "[git.example]:22 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDGl3tH5qWkq5UjV1pnN0nGcyu8bmZIGwbVr+oP2CmEn"

	const token = "tok-5e3ret-77"
	saved, err := gitmirror.SaveSettings(ctx, store, sealer, gitmirror.SettingsInput{Enabled: true,
		RemoteURL: "https://git.example/net.git", HTTPSUsername: "backupd", HTTPSToken: token})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := store.GitMirrorSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !saved.TokenChanged || saved.KeyChanged || len(stored.HTTPSToken) == 0 || strings.Contains(string(stored.HTTPSToken), token) {
		t.Fatalf("first save: %+v, stored token %q", saved, stored.HTTPSToken)
	}
	if open, err := sealer.Open(stored.HTTPSToken, secret.PurposeGitToken); err != nil || open != token {
		t.Fatalf("the stored token opens to %q, %v", open, err)
	}

	// An empty token keeps the stored one; clearing removes it.
	saved, err = gitmirror.SaveSettings(ctx, store, sealer, gitmirror.SettingsInput{Enabled: true,
		RemoteURL: "https://git.example/net.git", HTTPSUsername: "backupd", Branch: "configs"})
	if err != nil || saved.TokenChanged || len(saved.HTTPSToken) == 0 || saved.Branch != "configs" {
		t.Fatalf("save without a token: %+v, %v", saved, err)
	}
	saved, err = gitmirror.SaveSettings(ctx, store, sealer, gitmirror.SettingsInput{
		RemoteURL: "https://git.example/net.git", ClearHTTPSToken: true})
	if err != nil || !saved.TokenChanged || len(saved.HTTPSToken) != 0 {
		t.Fatalf("clearing the token: %+v, %v", saved, err)
	}

	for _, c := range []struct {
		name string
		in   gitmirror.SettingsInput
		want []error
	}{
		{"remote helper", gitmirror.SettingsInput{RemoteURL: "ext::sh -c touch% /tmp/pwned"}, []error{gitmirror.ErrRemote, gitmirror.ErrRemoteHelper}},
		{"metadata address", gitmirror.SettingsInput{RemoteURL: "https://169.254.169.254/net.git"}, []error{gitmirror.ErrRemote, netguard.ErrRefused}},
		{"local remote", gitmirror.SettingsInput{RemoteURL: "/srv/net.git"}, []error{gitmirror.ErrRemote, gitmirror.ErrLocalRemote}},
		{"broken key", gitmirror.SettingsInput{RemoteURL: "ssh://git@git.example/net.git", KnownHosts: hosts, SSHKey: "not a key"}, []error{gitmirror.ErrKeyInvalid}},
		{"no key", gitmirror.SettingsInput{RemoteURL: "ssh://git@git.example/net.git", KnownHosts: hosts}, []error{gitmirror.ErrKeyRequired}},
		{"no host key", gitmirror.SettingsInput{RemoteURL: "ssh://git@git.example/net.git", SSHKey: keyPEM}, []error{gitmirror.ErrKnownHosts}},
		{"two-line author", gitmirror.SettingsInput{RemoteURL: "https://git.example/net.git", AuthorName: "a\nb"}, []error{gitmirror.ErrIdentity}},
		{"bad branch", gitmirror.SettingsInput{RemoteURL: "https://git.example/net.git", Branch: "a..b"}, []error{gitmirror.ErrBranch}},
	} {
		_, err := gitmirror.SaveSettings(ctx, store, sealer, c.in)
		for _, want := range c.want {
			if !errors.Is(err, want) {
				t.Errorf("%s: %v, want %v", c.name, err, want)
			}
		}
	}
	if after, err := store.GitMirrorSettings(ctx); err != nil || after.RemoteURL != "https://git.example/net.git" || after.Enabled {
		t.Fatalf("a refused save changed the stored settings: %+v, %v", after, err)
	}

	// An SSH remote with its host key and a deploy key is taken; the key
	// is sealed, never stored as typed.
	saved, err = gitmirror.SaveSettings(ctx, store, sealer, gitmirror.SettingsInput{Enabled: true,
		RemoteURL: "ssh://git@git.example/net.git", KnownHosts: hosts, SSHKey: keyPEM})
	if err != nil || !saved.KeyChanged || strings.Contains(string(saved.SSHKey), "PRIVATE KEY") {
		t.Fatalf("SSH settings: key changed %v, %v", saved.KeyChanged, err)
	}
}
