package gitmirror

import (
	"context"
	"errors"
	"strings"

	"backupd/app/netguard"
	"backupd/app/secret"
	"backupd/db"
)

// What Validate and SaveSettings refuse; errors.Is tells them apart, their
// messages say what to do. A remote SaveSettings refuses is ErrRemote,
// and also CheckRemote's ErrRemoteHelper, ErrLocalRemote or
// netguard.ErrRefused when it is one of those.
var (
	ErrRemote      = errors.New("git mirror: the remote URL is not usable")
	ErrKnownHosts  = errors.New("git mirror: the pinned host key is not usable")
	ErrKeyInvalid  = errors.New("git mirror: the deploy key is not usable")
	ErrKeyRequired = errors.New("git mirror: an SSH remote needs a deploy key")
	ErrIdentity    = errors.New("git mirror: the author or HTTPS user is not usable")
	ErrBranch      = errors.New("git mirror: not a branch name")
)

// settingsError is a refusal with its own message that errors.Is finds
// as kind, and as its cause when it has one.
type settingsError struct {
	kind  error
	msg   string
	cause error
}

func (e *settingsError) Error() string        { return e.msg }
func (e *settingsError) Is(target error) bool { return target == e.kind }
func (e *settingsError) Unwrap() error        { return e.cause }

// SettingsInput is the git mirror's settings as an administrator sets
// them. A deploy key or token typed here is checked and sealed; left
// empty, the stored one stays, unless clearing it is asked for.
type SettingsInput struct {
	Enabled, Groups         bool
	AuthorName, AuthorEmail string
	RemoteURL, Branch       string
	KnownHosts              string
	HTTPSUsername           string
	SSHKey, HTTPSToken      string
	ClearSSHKey             bool
	ClearHTTPSToken         bool
}

// SavedSettings are the settings SaveSettings stored, and whether the
// deploy key and the token changed (for the audit log, which never holds
// either).
type SavedSettings struct {
	db.GitMirror
	KeyChanged, TokenChanged bool
}

// SaveSettings checks in against what a push needs (CheckRemote first,
// then the typed deploy key, then Validate) and the stored outbound
// allow list, seals the typed secrets with sealer, and stores the
// settings. What the store holds beside them (AllowLocalRemote, set from
// the command line) is kept.
func SaveSettings(ctx context.Context, store *db.Store, sealer *secret.Sealer, in SettingsInput) (SavedSettings, error) {
	stored, err := store.GitMirrorSettings(ctx)
	if err != nil {
		return SavedSettings{}, err
	}
	gm := db.GitMirror{Enabled: in.Enabled, Groups: in.Groups, AuthorName: in.AuthorName,
		AuthorEmail: in.AuthorEmail, RemoteURL: in.RemoteURL, Branch: in.Branch,
		KnownHosts: in.KnownHosts, HTTPSUsername: in.HTTPSUsername,
		SSHKey: stored.SSHKey, HTTPSToken: stored.HTTPSToken, AllowLocalRemote: stored.AllowLocalRemote}
	outbound, err := netguard.Load(ctx, store)
	if err != nil {
		return SavedSettings{}, err
	}
	if _, err := CheckRemote(gm, outbound); err != nil {
		return SavedSettings{}, &settingsError{kind: ErrRemote, msg: err.Error(), cause: err}
	}
	key := strings.TrimSpace(strings.ReplaceAll(in.SSHKey, "\r\n", "\n"))
	if key != "" {
		if err := CheckPrivateKey(key); err != nil {
			return SavedSettings{}, err
		}
		gm.SSHKey = sealer.Seal(key+"\n", secret.PurposeGitKey)
	} else if in.ClearSSHKey {
		gm.SSHKey = nil
	}
	token := strings.TrimSpace(in.HTTPSToken)
	if token != "" {
		gm.HTTPSToken = sealer.Seal(token, secret.PurposeGitToken)
	} else if in.ClearHTTPSToken {
		gm.HTTPSToken = nil
	}
	if err := Validate(gm, outbound); err != nil {
		return SavedSettings{}, err
	}
	if err := store.PutSetting(ctx, db.SettingGitMirror, gm); err != nil {
		return SavedSettings{}, err
	}
	return SavedSettings{GitMirror: gm,
		KeyChanged:   key != "" || (in.ClearSSHKey && len(stored.SSHKey) > 0),
		TokenChanged: token != "" || (in.ClearHTTPSToken && len(stored.HTTPSToken) > 0)}, nil
}
