package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"
)

// SettingGitMirror holds a GitMirror.
const SettingGitMirror = "git_mirror"

// GitMirror configures the git mirror of the latest configurations. The
// deploy key and the HTTPS token are stored sealed and never shown again.
type GitMirror struct {
	Enabled bool `json:"enabled"`
	// Groups puts each device's file under a folder per group path.
	Groups      bool   `json:"groups,omitempty"`
	AuthorName  string `json:"author_name,omitempty"`
	AuthorEmail string `json:"author_email,omitempty"`
	// RemoteURL is where each commit is pushed ("" keeps it local):
	// ssh://, user@host:path, https:// or file://.
	RemoteURL string `json:"remote_url,omitempty"`
	// Branch pushed to ("" = main).
	Branch string `json:"branch,omitempty"`
	// KnownHosts pins the SSH remote's host key: known_hosts lines.
	KnownHosts string `json:"known_hosts,omitempty"`
	// SSHKey is the sealed deploy key (OpenSSH private key).
	SSHKey []byte `json:"ssh_key,omitempty"`
	// HTTPSUsername and the sealed HTTPSToken authenticate an HTTPS
	// remote.
	HTTPSUsername string `json:"https_username,omitempty"`
	HTTPSToken    []byte `json:"https_token,omitempty"`
	// AllowLocalRemote takes a remote on this machine (file://, a path).
	// Only serve's --git-allow-local-remote sets it, never the web form:
	// a path names the server's own files.
	AllowLocalRemote bool `json:"allow_local_remote,omitempty"`
}

// SettingGitPush holds the GitPushStatus of the last push.
const SettingGitPush = "git_mirror_push"

// GitPushStatus is how the last push of the git mirror ended. Error never
// holds a secret.
type GitPushStatus struct {
	At     time.Time `json:"at"`
	OK     bool      `json:"ok"`
	Error  string    `json:"error,omitempty"`
	Commit string    `json:"commit,omitempty"`
	// LastSuccess is when a push last succeeded.
	LastSuccess *time.Time `json:"last_success,omitempty"`
	// ConsecutiveFailures counts the failed pushes in a row (each after
	// its retries): the hysteresis of git.push_failed/git.push_recovered.
	ConsecutiveFailures int `json:"consecutive_failures,omitempty"`
	// LastPushed is the commit the last good push sent (any node's): the
	// mirror takes the remote's history up to it as its own.
	LastPushed string `json:"last_pushed,omitempty"`
	// Foreign names the commit the mirror refused to build on, when that
	// is why the push failed.
	Foreign *GitForeignCommit `json:"foreign,omitempty"`
}

// GitForeignCommit is a commit on the mirror's branch that backupd did
// not write (a hand-made commit), which stops the mirror.
type GitForeignCommit struct {
	// Where is "remote" (the remote branch) or "clone" (DATA/git/mirror).
	Where   string `json:"where"`
	Commit  string `json:"commit"`
	Author  string `json:"author"`
	Subject string `json:"subject"`
	// Count is the commits from it to the branch's tip, itself included.
	Count int `json:"count"`
	// Base is the last commit before it that backupd wrote ("" when it
	// is the branch's first).
	Base string `json:"base,omitempty"`
}

// RecordGitPush stores how a push ended (st: At, OK, Error, Commit; the
// rest is carried over from the last status) and, in the same
// transaction, the system events the store's event policy decides
// (git.push_failed when the failed pushes in a row reach a rule's
// threshold, git.push_recovered after a streak that did).
// remote must hold no credentials; attempts is the tries of this push.
// Only rules of scope "all" match these events. It returns the stored
// status.
func (s *Store) RecordGitPush(ctx context.Context, st GitPushStatus, remote string, attempts int) (GitPushStatus, error) {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		q := s.prepared(tx)
		var prev GitPushStatus
		var raw string
		err := q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, SettingGitPush).Scan(&raw)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err == nil {
			if err := json.Unmarshal([]byte(raw), &prev); err != nil {
				return fmt.Errorf("setting %s: %w", SettingGitPush, err)
			}
		}
		st.LastSuccess, st.ConsecutiveFailures, st.LastPushed = prev.LastSuccess, prev.ConsecutiveFailures, prev.LastPushed
		if st.LastPushed == "" && prev.OK {
			st.LastPushed = prev.Commit // recorded before LastPushed was
		}
		if st.OK {
			st.LastPushed = st.Commit
		}
		f := deviceFacts{}
		if err := q.QueryRowContext(ctx, wantedEventsQuery(s.d)).Scan(&f.wanted); err != nil {
			return err
		}
		dec, err := s.decide(EventInput{At: st.At, Trigger: TriggerGitPush,
			Prev:    EventState{ConsecutiveFailures: prev.ConsecutiveFailures},
			GitPush: &GitPushEnd{OK: st.OK, Error: st.Error, Remote: remote, Attempts: attempts}})
		if err != nil {
			return err
		}
		for _, e := range dec.Events {
			if _, err := recordEvent(ctx, q, s.d, &f, e); err != nil {
				return err
			}
		}
		st.ConsecutiveFailures = dec.Next.ConsecutiveFailures
		if st.OK {
			at := st.At.UTC()
			st.LastSuccess = &at
		}
		out, err := json.Marshal(st)
		if err != nil {
			return err
		}
		_, err = q.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, SettingGitPush, string(out), Now())
		return err
	})
	if err != nil {
		return st, fmt.Errorf("record git push: %w", err)
	}
	return st, nil
}

// GitMirrorSettings returns the stored git mirror settings (zero when
// never set).
func (s *Store) GitMirrorSettings(ctx context.Context) (GitMirror, error) {
	var g GitMirror
	_, err := s.GetSetting(ctx, SettingGitMirror, &g)
	return g, err
}

// MirrorVersion is the version of one device the git mirror holds.
type MirrorVersion struct {
	DeviceID     int64
	Name         string
	GroupID      *int64
	BackupID     string
	StartedAt    time.Time
	Trigger      string
	SnapshotHash string
	First        bool
	// Platform is the device's, for masking the secrets of its text.
	Platform string
}

// MirrorVersions returns, per device with a good backup, its latest
// version: the newest successful backup that changed the configuration
// (noise ignored) or was its first. Backups that only differ by noise are
// skipped, so the mirror does not change with them; only if retention
// removed every such version does the newest good backup stand in.
func (s *Store) MirrorVersions(ctx context.Context) ([]MirrorVersion, error) {
	return engine.QueryAll(ctx, s.reader, scanMirrorVersion, `SELECT d.id, d.name, d.group_id, b.id, b.started_at,
		b.trigger, b.snapshot_hash, b.first_backup, d.platform FROM devices d JOIN backups b ON b.id = COALESCE(
			(SELECT x.id FROM backups x WHERE x.device_id = d.id AND x.success = 1 AND (x.changed = 1 OR x.first_backup = 1)
				ORDER BY x.started_at DESC, x.id DESC LIMIT 1),
			(SELECT x.id FROM backups x WHERE x.device_id = d.id AND x.success = 1
				ORDER BY x.started_at DESC, x.id DESC LIMIT 1))
		ORDER BY d.id`)
}

// MirrorHistory returns every version (first backups and changes, noise
// ignored) of the devices that exist, oldest first.
func (s *Store) MirrorHistory(ctx context.Context) ([]MirrorVersion, error) {
	return engine.QueryAll(ctx, s.reader, scanMirrorVersion, `SELECT d.id, d.name, d.group_id, b.id, b.started_at,
		b.trigger, b.snapshot_hash, b.first_backup, d.platform FROM backups b JOIN devices d ON d.id = b.device_id
		WHERE b.success = 1 AND (b.changed = 1 OR b.first_backup = 1) AND b.snapshot_hash IS NOT NULL
		ORDER BY b.started_at, b.id`)
}

func scanMirrorVersion(r engine.Scanner) (MirrorVersion, error) {
	var v MirrorVersion
	var group sql.NullInt64
	var started string
	if err := r.Scan(&v.DeviceID, &v.Name, &group, &v.BackupID, &started, &v.Trigger, &v.SnapshotHash, &v.First, &v.Platform); err != nil {
		return v, err
	}
	if group.Valid {
		v.GroupID = &group.Int64
	}
	t, err := time.ParseInLocation(BackupTimeFormat, started, time.UTC)
	if err != nil {
		return v, fmt.Errorf("backup %s started_at: %w", v.BackupID, err)
	}
	v.StartedAt = t
	return v, nil
}

// GroupPaths maps every group to its name and its ancestors' names, root
// first.
func (s *Store) GroupPaths(ctx context.Context) (map[int64][]string, error) {
	type row struct {
		id     int64
		parent sql.NullInt64
		name   string
	}
	rows, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (row, error) {
		var x row
		return x, r.Scan(&x.id, &x.parent, &x.name)
	}, `SELECT id, parent_id, name FROM device_groups`)
	if err != nil {
		return nil, fmt.Errorf("group paths: %w", err)
	}
	byID := map[int64]row{}
	for _, x := range rows {
		byID[x.id] = x
	}
	paths := make(map[int64][]string, len(rows))
	for _, x := range rows {
		var p []string
		cur, ok := x, true
		// Bounded: a group tree is never deeper than the number of groups.
		for i := 0; ok && i <= len(rows); i++ {
			p = append([]string{cur.name}, p...)
			if !cur.parent.Valid {
				break
			}
			cur, ok = byID[cur.parent.Int64]
		}
		paths[x.id] = p
	}
	return paths, nil
}

// MirrorFingerprint changes when the git mirror may have to: a backup
// started (every finished backup started after the last one the mirror
// saw, once the queue is idle), a device was added, changed or deleted,
// a group was renamed, or where secrets are masked changed. It reads
// indexes only.
func (s *Store) MirrorFingerprint(ctx context.Context) (string, error) {
	var fp string
	err := s.reader.QueryRowContext(ctx, `SELECT
		(SELECT COALESCE(MAX(started_at), '') FROM backups) || '|' ||
		(SELECT COUNT(*) || ':' || COALESCE(MAX(updated_at), '') FROM devices) || '|' ||
		(SELECT COUNT(*) || ':' || COALESCE(`+s.d.Joined("name", "'/'")+`, '') FROM device_groups) || '|' ||
		(SELECT COALESCE(MAX(updated_at), '') FROM settings WHERE key = ?)`, SettingSecretMasking).Scan(&fp)
	if err != nil {
		return "", fmt.Errorf("git mirror fingerprint: %w", err)
	}
	return fp, nil
}
