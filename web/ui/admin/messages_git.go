package admin

// Message keys of the settings page's git mirror section.
const (
	keyGitNoticeSaved       = "settings.git.notice.saved"
	keyGitErrRemote         = "settings.git.error.remote"
	keyGitErrRemotePassword = "settings.git.error.remote_password"
	keyGitErrRemoteHelper   = "settings.git.error.remote_helper"
	keyGitErrRemoteLocal    = "settings.git.error.remote_local"
	keyGitErrRemoteAddress  = "settings.git.error.remote_address"
	keyGitErrKnownHosts     = "settings.git.error.known_hosts"
	keyGitErrKeyRequired    = "settings.git.error.key_required"
	keyGitErrKeyInvalid     = "settings.git.error.key_invalid"
	keyGitErrIdentity       = "settings.git.error.identity"
	keyGitErrBranch         = "settings.git.error.branch"
	keyGitErrTooLong        = "settings.git.error.too_long"
)
