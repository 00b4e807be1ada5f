package admin

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"

	"backupd/app/gitmirror"
	"backupd/app/netguard"
	"backupd/db"
)

// settingsGit is the git mirror section: its settings as stored (or as
// typed into a refused form), whether each secret is stored, and how the
// last push went. A secret is never shown.
type settingsGit struct {
	Enabled, Groups                       bool
	AuthorName, AuthorEmail               string
	RemoteURL, Branch, KnownHosts         string
	HTTPSUsername                         string
	HasKey, HasToken                      bool
	ClearKey, ClearToken                  bool
	Dir                                   string
	DefaultAuthorName, DefaultAuthorEmail string
	Push                                  db.GitPushStatus
	// Error refuses the form as typed.
	Error string
}

func (u *handlers) fillGit(r *http.Request, g *settingsGit, typed bool) error {
	stored, err := u.Store.GitMirrorSettings(r.Context())
	if err != nil {
		return err
	}
	if !typed {
		*g = settingsGit{Enabled: stored.Enabled, Groups: stored.Groups, AuthorName: stored.AuthorName,
			AuthorEmail: stored.AuthorEmail, RemoteURL: stored.RemoteURL, Branch: stored.Branch,
			KnownHosts: stored.KnownHosts, HTTPSUsername: stored.HTTPSUsername}
	}
	g.HasKey, g.HasToken = len(stored.SSHKey) > 0, len(stored.HTTPSToken) > 0
	g.Dir = filepath.Join(filepath.Dir(u.Store.Path()), "git", "mirror")
	g.DefaultAuthorName, g.DefaultAuthorEmail = gitmirror.DefaultAuthorName, gitmirror.DefaultAuthorEmail
	if _, err := u.Store.GetSetting(r.Context(), db.SettingGitPush, &g.Push); err != nil {
		return err
	}
	return nil
}

// saveGit stores the git mirror settings (gitmirror.SaveSettings); a
// typed deploy key or token is sealed and never shown again, an empty
// one keeps the stored one.
func (u *handlers) saveGit(w http.ResponseWriter, r *http.Request) error {
	f := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	typed := settingsGit{
		Enabled: r.PostFormValue("enabled") == "1", Groups: r.PostFormValue("groups") == "1",
		AuthorName: f("author_name"), AuthorEmail: f("author_email"), RemoteURL: f("remote_url"),
		Branch: f("branch"), KnownHosts: f("known_hosts"), HTTPSUsername: f("https_username"),
		ClearKey: r.PostFormValue("clear_ssh_key") == "1", ClearToken: r.PostFormValue("clear_https_token") == "1",
	}
	key := strings.TrimSpace(strings.ReplaceAll(r.PostFormValue("ssh_key"), "\r\n", "\n"))
	token := f("https_token")
	refuse := func(k string) error {
		return u.renderSettingsGit(w, r, http.StatusUnprocessableEntity, settingsPage{Git: typed}, k)
	}
	if len(typed.RemoteURL) > 1000 || len(typed.KnownHosts) > 16384 || len(key) > 16384 || len(token) > 4096 {
		return refuse(keyGitErrTooLong)
	}
	saved, err := gitmirror.SaveSettings(r.Context(), u.Store, u.Sealer, gitmirror.SettingsInput{
		Enabled: typed.Enabled, Groups: typed.Groups, AuthorName: typed.AuthorName, AuthorEmail: typed.AuthorEmail,
		RemoteURL: typed.RemoteURL, Branch: typed.Branch, KnownHosts: typed.KnownHosts, HTTPSUsername: typed.HTTPSUsername,
		SSHKey: key, HTTPSToken: token, ClearSSHKey: typed.ClearKey, ClearHTTPSToken: typed.ClearToken,
	})
	switch {
	case errors.Is(err, gitmirror.ErrRemoteHelper):
		return refuse(keyGitErrRemoteHelper)
	case errors.Is(err, gitmirror.ErrLocalRemote):
		return refuse(keyGitErrRemoteLocal)
	case errors.Is(err, netguard.ErrRefused):
		return refuse(keyGitErrRemoteAddress)
	case errors.Is(err, gitmirror.ErrRemote):
		if strings.Contains(typed.RemoteURL, "@") && strings.Contains(err.Error(), "password") {
			return refuse(keyGitErrRemotePassword)
		}
		return refuse(keyGitErrRemote)
	case errors.Is(err, gitmirror.ErrKeyInvalid):
		return refuse(keyGitErrKeyInvalid)
	case errors.Is(err, gitmirror.ErrKnownHosts):
		return refuse(keyGitErrKnownHosts)
	case errors.Is(err, gitmirror.ErrKeyRequired):
		return refuse(keyGitErrKeyRequired)
	case errors.Is(err, gitmirror.ErrIdentity):
		return refuse(keyGitErrIdentity)
	case errors.Is(err, gitmirror.ErrBranch):
		return refuse(keyGitErrBranch)
	case err != nil:
		return err
	}
	u.AuditAs(r, "settings.update", "settings", db.SettingGitMirror, map[string]any{
		"enabled": saved.Enabled, "groups": saved.Groups, "remote_url": saved.RemoteURL,
		"ssh_key_changed": saved.KeyChanged, "https_token_changed": saved.TokenChanged,
	})
	http.Redirect(w, r, "/settings?done=git_saved#git", http.StatusSeeOther)
	return nil
}

func (u *handlers) renderSettingsGit(w http.ResponseWriter, r *http.Request, status int, p settingsPage, errKey string) error {
	p.Git.Error = errKey
	p.gitTyped = true
	return u.renderSettings(w, r, status, p)
}
