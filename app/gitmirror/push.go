package gitmirror

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"backupd/app/metrics"
	"backupd/app/netguard"
	"backupd/app/secret"
	"backupd/db"
)

// Remote kinds.
const (
	RemoteNone  = ""
	RemoteSSH   = "ssh"
	RemoteHTTPS = "https"
	RemoteFile  = "file"
)

// RemoteKind classifies a remote URL: ssh://host/path and the scp-like
// user@host:path are SSH; https:// (and http://) HTTPS; file:// and
// absolute paths a repository on this machine (taken only with
// AllowLocalRemote, see CheckRemote). Remote helpers (ext::, fd:: …)
// are refused.
func RemoteKind(u string) (string, error) {
	switch {
	case u == "":
		return RemoteNone, nil
	case remoteHelper(u):
		return "", ErrRemoteHelper
	case strings.HasPrefix(u, "/"):
		return RemoteFile, nil
	}
	if strings.ContainsAny(u, " \t\r\n\x00") || strings.HasPrefix(u, "-") {
		return "", errors.New("the remote URL must not contain spaces or control characters, nor start with '-'")
	}
	if i := strings.Index(u, "://"); i > 0 {
		p, err := url.Parse(u)
		if err != nil {
			return "", fmt.Errorf("the remote URL is not a URL: %w", err)
		}
		if _, hasPassword := p.User.Password(); hasPassword {
			return "", errors.New("the remote URL must not carry a password or token; give the token separately")
		}
		switch p.Scheme {
		case "ssh":
			if p.Host == "" {
				return "", errors.New("the SSH remote URL names no host")
			}
			return RemoteSSH, nil
		case "https", "http":
			if p.Host == "" {
				return "", errors.New("the HTTPS remote URL names no host")
			}
			return RemoteHTTPS, nil
		case "file":
			return RemoteFile, nil
		}
		return "", fmt.Errorf("remote URL scheme %q is not supported: use ssh://, https:// or file://", p.Scheme)
	}
	// scp-like: [user@]host:path
	if at := strings.Index(u, ":"); at > 0 && !strings.Contains(u[:at], "/") {
		return RemoteSSH, nil
	}
	return "", errors.New("the remote URL must be ssh://…, user@host:path, https://… or file://…")
}

// CheckKnownHosts validates pinned host keys: known_hosts lines (as
// ssh-keyscan prints them).
func CheckKnownHosts(text string) error {
	rest := []byte(text)
	n := 0
	for i := 0; i < 1000 && len(strings.TrimSpace(string(rest))) > 0; i++ {
		var err error
		_, _, _, _, rest, err = ssh.ParseKnownHosts(rest)
		if err != nil {
			return &settingsError{kind: ErrKnownHosts, msg: "the pinned host key is not a known_hosts line (host key-type key), as ssh-keyscan prints"}
		}
		n++
	}
	if n == 0 {
		return &settingsError{kind: ErrKnownHosts, msg: "no host key given"}
	}
	return nil
}

// CheckPrivateKey validates a deploy key (an unencrypted OpenSSH or PEM
// private key).
func CheckPrivateKey(key string) error {
	if _, err := ssh.ParsePrivateKey([]byte(key)); err != nil {
		return &settingsError{kind: ErrKeyInvalid, msg: "the deploy key is not an unencrypted SSH private key"}
	}
	return nil
}

// remoteEnv prepares what a push to cfg.RemoteURL needs: for SSH the
// deploy key (0600) and the pinned known_hosts in DATA/git/ssh, for HTTPS
// an askpass script reading the token from the git process's own
// environment. The token never goes into a URL, an argument or a file.
func (m *Mirror) remoteEnv(ctx context.Context, cfg db.GitMirror) (env []string, secrets []string, cleanup func(), err error) {
	outbound, err := netguard.Load(ctx, m.store)
	if err != nil {
		return nil, nil, nil, err
	}
	outbound.Resolver = m.Resolver
	kind, err := CheckRemote(cfg, outbound)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("git mirror: %w", err)
	}
	sshPin, pinEnv, err := pinRemote(ctx, cfg.RemoteURL, kind, outbound)
	if err != nil {
		return nil, nil, nil, err
	}
	env, secrets, cleanup, err = m.transportEnv(cfg, kind, sshPin)
	if err != nil {
		return nil, nil, nil, err
	}
	return append(append(env, pinEnv...), allowProtocol(kind)), secrets, cleanup, nil
}

// transportEnv is remoteEnv's part for each kind of remote; sshPin are
// ssh options that pin the address.
func (m *Mirror) transportEnv(cfg db.GitMirror, kind string, sshPin []string) (env []string, secrets []string, cleanup func(), err error) {
	cleanup = func() {}
	switch kind {
	case RemoteSSH:
		sshBin, err := lookPath("ssh")
		if err != nil {
			return nil, nil, nil, errors.New("git mirror: the ssh program is not installed: apt install openssh-client")
		}
		if strings.TrimSpace(cfg.KnownHosts) == "" {
			return nil, nil, nil, errors.New("git mirror: the SSH remote's host key is not pinned")
		}
		if len(cfg.SSHKey) == 0 {
			return nil, nil, nil, errors.New("git mirror: no deploy key is set for the SSH remote")
		}
		key, err := m.sealer.Open(cfg.SSHKey, secret.PurposeGitKey)
		if err != nil {
			return nil, nil, nil, errors.New("git mirror: the deploy key cannot be opened with this secret key")
		}
		dir := filepath.Join(m.root, "ssh")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, nil, fmt.Errorf("git mirror: %w", err)
		}
		keyFile, hostsFile := filepath.Join(dir, "deploy_key"), filepath.Join(dir, "known_hosts")
		if !strings.HasSuffix(key, "\n") {
			key += "\n"
		}
		if err := writePrivate(keyFile, key); err != nil {
			return nil, nil, nil, err
		}
		cleanup = func() { _ = os.Remove(keyFile) }
		if err := writePrivate(hostsFile, strings.TrimSpace(cfg.KnownHosts)+"\n"); err != nil {
			cleanup()
			return nil, nil, nil, err
		}
		cmd := shellQuote(sshBin) + " -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes" +
			" -o UserKnownHostsFile=" + shellQuote(hostsFile) + " -o GlobalKnownHostsFile=/dev/null" +
			" -o IdentitiesOnly=yes -o IdentityAgent=none -o ConnectTimeout=15 -i " + shellQuote(keyFile)
		for _, o := range sshPin {
			cmd += " " + shellQuote(o)
		}
		return []string{"GIT_SSH_COMMAND=" + cmd}, nil, cleanup, nil
	case RemoteHTTPS:
		token := ""
		if len(cfg.HTTPSToken) > 0 {
			if token, err = m.sealer.Open(cfg.HTTPSToken, secret.PurposeGitToken); err != nil {
				return nil, nil, nil, errors.New("git mirror: the HTTPS token cannot be opened with this secret key")
			}
		}
		askpass := filepath.Join(m.root, "askpass.sh")
		script := "#!/bin/sh\ncase \"$1\" in\n[Uu]sername*) printf '%s\\n' \"$BACKUPD_GIT_USERNAME\" ;;\n*) printf '%s\\n' \"$BACKUPD_GIT_TOKEN\" ;;\nesac\n"
		if err := os.WriteFile(askpass, []byte(script), 0o700); err != nil {
			return nil, nil, nil, fmt.Errorf("git mirror: %w", err)
		}
		user := cfg.HTTPSUsername
		if user == "" {
			user = "backupd"
		}
		return []string{"GIT_ASKPASS=" + askpass, "BACKUPD_GIT_USERNAME=" + user, "BACKUPD_GIT_TOKEN=" + token},
			[]string{token}, cleanup, nil
	}
	return nil, nil, cleanup, nil
}

func writePrivate(path, content string) error {
	_ = os.Remove(path)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("git mirror: %w", err)
	}
	return nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Push sends the mirror's branch to the configured remote, trying up to
// PushAttempts times with a doubling wait. It records the outcome (the
// UI shows it) and counts it in the metrics. Nothing to push (no remote,
// no commit yet) is no error. A branch (remote or in the clone) with a
// commit no backupd mirror wrote is refused at once, a
// *ForeignCommitError.
func (m *Mirror) Push(ctx context.Context) error { return m.pushAs(ctx, false) }

// ForcePush pushes the mirror's branch over the remote's, whatever the
// remote holds: after RewriteHistory, and only then. (Until it has, Push
// forces too, so that no push builds on the old history.)
func (m *Mirror) ForcePush(ctx context.Context) error { return m.pushAs(ctx, true) }

func (m *Mirror) pushAs(ctx context.Context, force bool) error {
	cfg, err := m.store.GitMirrorSettings(ctx)
	if err != nil {
		return err
	}
	if cfg.RemoteURL == "" {
		return nil
	}
	before, _ := m.PushStatus(ctx) // for the recovery's log line only
	attempts, secrets, err := m.push(ctx, cfg, force)
	now := time.Now().UTC()
	st := db.GitPushStatus{At: now, OK: err == nil}
	var foreign *ForeignCommitError
	if err != nil {
		st.Error = err.Error()
		if errors.As(err, &foreign) {
			st.Foreign = foreign.Status()
		}
	}
	if head, herr := m.head(ctx); herr == nil {
		st.Commit = head
	}
	// The status and its notification events (git.push_failed,
	// git.push_recovered) are recorded together; a failure here is
	// logged, never a reason to stop mirroring or backing up.
	if _, perr := m.store.RecordGitPush(context.WithoutCancel(ctx), st, PublicRemote(cfg.RemoteURL, secrets), attempts); perr != nil {
		m.log.Error("git mirror: recording the push", "err", perr)
	}
	if err == nil && (before.ConsecutiveFailures > 0 || attempts > 1) {
		m.log.Info("git mirror: push succeeded again", "remote", PublicRemote(cfg.RemoteURL, secrets),
			"failed_pushes_before", before.ConsecutiveFailures, "attempts", attempts)
	}
	metrics.GitPush(err == nil, now)
	if err == nil || foreign != nil {
		metrics.GitForeignCommit(foreign != nil)
	}
	return err
}

// PublicRemote is the remote URL as events and the UI may show it: no
// password or token in its user part, no secret anywhere in it.
func PublicRemote(remote string, secrets []string) string {
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" && u.User != nil {
		if u.Scheme == "https" || u.Scheme == "http" {
			u.User = nil // user part of an HTTPS URL may itself be a token
		} else if _, has := u.User.Password(); has {
			u.User = url.User(u.User.Username())
		}
		remote = u.String()
	}
	for _, s := range secrets {
		if s != "" {
			remote = strings.ReplaceAll(remote, s, "[redacted]")
		}
	}
	return remote
}

// PushStatus is how the last push ended (zero before the first).
func (m *Mirror) PushStatus(ctx context.Context) (db.GitPushStatus, error) {
	var st db.GitPushStatus
	_, err := m.store.GetSetting(ctx, db.SettingGitPush, &st)
	return st, err
}

func (m *Mirror) head(ctx context.Context) (string, error) {
	r, err := newRunner(m.root)
	if err != nil {
		return "", err
	}
	out, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "-q", "--verify", "HEAD")
	return strings.TrimSpace(out), err
}

// push tries the push, and returns how many tries it made and the
// secrets the remote's authentication used (to keep them out of what is
// shown).
func (m *Mirror) push(ctx context.Context, cfg db.GitMirror, force bool) (attempts int, secrets []string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, unlock, err := m.open(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer unlock()
	if _, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "-q", "--verify", "HEAD"); err != nil {
		return 0, nil, nil // nothing committed yet
	}
	env, secrets, cleanup, err := m.remoteEnv(ctx, cfg)
	if err != nil {
		return 0, secrets, err
	}
	defer cleanup()
	branch := cfg.Branch
	if branch == "" {
		branch = "main"
	}
	if !ValidBranch(branch) {
		return 0, secrets, fmt.Errorf("git mirror: %q is not a branch name", branch)
	}
	if err := m.checkClone(ctx, r); err != nil {
		return 1, secrets, err
	}
	if !force {
		out, err := r.run(ctx, gitTimeout, nil, nil, "config", "--local", "--get", rewrittenKey)
		force = err == nil && strings.TrimSpace(out) == "true"
	}
	limit := max(m.PushAttempts, 1)
	wait := m.PushBackoff
	for attempt := 1; ; attempt++ {
		err = nil
		if !force {
			err = m.followRemote(ctx, r, cfg, env, secrets, branch)
		}
		if fe := (*ForeignCommitError)(nil); errors.As(err, &fe) {
			// Trying again changes nothing: someone has to act.
			m.log.Warn("git mirror: push refused", "err", err)
			return attempt, secrets, err
		}
		if err == nil {
			args := []string{"push", "-q"}
			if force {
				args = append(args, "--force")
			}
			_, err = r.run(ctx, m.PushTimeout, nil, env, append(args, "--", cfg.RemoteURL, "HEAD:refs/heads/"+branch)...)
		}
		if err == nil && force {
			// The rewritten history is the remote's now.
			_, _ = r.run(ctx, gitTimeout, nil, nil, "config", "--local", "--unset", rewrittenKey)
		}
		if err == nil {
			return attempt, secrets, nil
		}
		err = redactError(err, secrets)
		m.log.Warn("git mirror: push failed", "attempt", attempt, "err", err)
		if attempt >= limit || ctx.Err() != nil {
			return attempt, secrets, err
		}
		select {
		case <-ctx.Done():
			return attempt, secrets, err
		case <-time.After(wait):
		}
		wait = min(wait*2, 10*time.Minute)
	}
}

// followRemote bases the clone on the remote branch when the branch holds
// commits the clone lacks: those of another node that ran the mirror while
// it led (each node keeps its own clone). The clone's tree is the
// database's latest configurations, so it is committed anew on top of the
// remote's head; the history stays linear and nothing is force-pushed.
// A commit on the branch that no backupd mirror wrote (one made by hand)
// is refused (*ForeignCommitError): the mirror never builds on it, nor
// rewrites it or deletes its files. A fetch that fails (no such branch
// yet, remote unreachable) is left to the push to report.
func (m *Mirror) followRemote(ctx context.Context, r *runner, cfg db.GitMirror, env, secrets []string, branch string) error {
	if _, err := r.run(ctx, m.PushTimeout, nil, env, "fetch", "-q", "--no-tags", "--", cfg.RemoteURL, "refs/heads/"+branch); err != nil {
		return nil
	}
	out, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "-q", "--verify", "FETCH_HEAD^{commit}")
	if err != nil {
		return nil
	}
	remote := strings.TrimSpace(out)
	if _, err := r.run(ctx, gitTimeout, nil, nil, "merge-base", "--is-ancestor", remote, "HEAD"); err == nil {
		return nil // a fast-forward
	}
	if err := m.checkRange(ctx, r, remote, append(m.trusted(ctx, r), "HEAD"), "remote", branch); err != nil {
		var fe *ForeignCommitError
		if errors.As(err, &fe) {
			fe.Remote = PublicRemote(cfg.RemoteURL, secrets)
		}
		return err
	}
	p, err := m.plan(ctx, cfg)
	if err != nil {
		return err
	}
	// The index is the clone's last commit (nothing staged by hand goes
	// along), then HEAD moves onto the remote's head, keeping it.
	if _, err := r.run(ctx, gitTimeout, nil, nil, "reset", "-q"); err != nil {
		return fmt.Errorf("git mirror: %w", err)
	}
	if _, err := r.run(ctx, gitTimeout, nil, nil, "reset", "-q", "--soft", remote); err != nil {
		return fmt.Errorf("git mirror: %w", err)
	}
	commit, err := m.commitIndex(ctx, r, cfg, func(es []entry) string {
		changes := changesOf(es, p.want)
		return Message(Subject(changes), changes)
	})
	if err != nil {
		return err
	}
	if commit == "" {
		return m.markWritten(ctx, r) // the remote already holds this tree
	}
	m.log.Info("git mirror: based on the remote branch, which another node pushed to", "remote", remote)
	return nil
}

// redactError removes secrets from git's message, should it ever quote one.
func redactError(err error, secrets []string) error {
	msg := err.Error()
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	return errors.New(msg)
}

// Validate checks settings before they are saved: a remote URL we can
// push to (CheckRemote: no remote helper, no local remote unless allowed,
// no link-local or metadata address), a pinned host key and a deploy key for SSH, a usable identity
// and branch. Secrets are checked where they are opened.
func Validate(cfg db.GitMirror, outbound netguard.Policy) error {
	kind, err := CheckRemote(cfg, outbound)
	if err != nil {
		return err
	}
	if kind == RemoteSSH {
		if err := CheckKnownHosts(cfg.KnownHosts); err != nil {
			return err
		}
		if len(cfg.SSHKey) == 0 {
			return &settingsError{kind: ErrKeyRequired, msg: "an SSH remote needs a deploy key"}
		}
	}
	for _, s := range []string{cfg.AuthorName, cfg.AuthorEmail, cfg.HTTPSUsername} {
		if !ValidIdentity(s) {
			return &settingsError{kind: ErrIdentity, msg: "the author name, email and HTTPS user must be one line without < or >, at most 200 characters"}
		}
	}
	if !ValidBranch(cfg.Branch) {
		return &settingsError{kind: ErrBranch, msg: fmt.Sprintf("%q is not a branch name", cfg.Branch)}
	}
	return nil
}

// ValidIdentity reports whether s can go into a commit's author line (or
// be an HTTPS user name): one line, no < or >, at most 200 bytes.
func ValidIdentity(s string) bool {
	return clean(s) == strings.TrimSpace(s) && len(s) <= 200
}

// ValidBranch reports whether b ("" = main) is a plain branch name.
func ValidBranch(b string) bool {
	return b == "" || !strings.ContainsAny(b, " :~^?*[\\\t\r\n@{") && !strings.HasPrefix(b, "-") &&
		!strings.HasPrefix(b, "/") && !strings.HasSuffix(b, "/") && !strings.HasSuffix(b, ".lock") &&
		!strings.Contains(b, "..") && !strings.Contains(b, "//") && len(b) <= 200
}
