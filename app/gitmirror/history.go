package gitmirror

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"backupd/app/redact"
	"backupd/db"
)

// historyTimeout bounds a backfill: git fast-import writes hundreds of
// thousands of commits in minutes.
const historyTimeout = 2 * time.Hour

// ErrHasHistory refuses a backfill of a mirror that already has commits.
var ErrHasHistory = errors.New("git mirror: the mirror already has commits; --history only fills an empty mirror " +
	"(move the data directory's git folder away to start over)")

// Backfill writes the whole stored history into an empty mirror: one
// commit per run (see Runs) of the versions it found (a device's first
// backup and each change, noise ignored), oldest first, dated when the
// run's last backup started, so that
// `git log -p DEVICE` shows how a device's configuration evolved. Files
// are named by the devices' current names and groups. A final Sync
// brings the mirror to the current state. It returns the commits written.
func (m *Mirror) Backfill(ctx context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cfg, err := m.store.GitMirrorSettings(ctx)
	if err != nil {
		return 0, err
	}
	r, unlock, err := m.open(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	return m.backfill(ctx, r, cfg)
}

// RewriteHistory replaces the mirror's whole history by one written as
// secret masking is set now (see Backfill): the working clone moves
// aside, to the folder it returns ("" when there was none), and the
// history is written anew. Pushing it needs ForcePush; whoever cloned
// the remote before keeps the old commits.
func (m *Mirror) RewriteHistory(ctx context.Context) (moved string, commits int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cfg, err := m.store.GitMirrorSettings(ctx)
	if err != nil {
		return "", 0, err
	}
	r, unlock, err := m.openAfter(ctx, func(r *runner) error {
		if _, err := os.Stat(filepath.Join(r.repo, ".git")); err != nil {
			return nil // nothing to move
		}
		to := r.repo + ".replaced-" + time.Now().UTC().Format("20060102-150405")
		if err := os.Rename(r.repo, to); err != nil {
			return err
		}
		moved = to
		return nil
	})
	if err != nil {
		return "", 0, err
	}
	defer unlock()
	m.written, m.clean = nil, false
	if commits, err = m.backfill(ctx, r, cfg); err != nil {
		return moved, commits, err
	}
	// Until it is pushed over the remote's, any push (the server's own,
	// at its next run) must replace the remote's history rather than
	// build on it, which would bring the old commits back.
	if _, err := r.run(ctx, gitTimeout, nil, nil, "config", "--local", rewrittenKey, "true"); err != nil {
		return moved, commits, fmt.Errorf("git mirror: %w", err)
	}
	return moved, commits, nil
}

// rewrittenKey marks a clone whose history RewriteHistory replaced and
// that was not pushed since: its next push is forced.
const rewrittenKey = "backupd.rewritten"

func (m *Mirror) backfill(ctx context.Context, r *runner, cfg db.GitMirror) (int, error) {
	if _, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "-q", "--verify", "HEAD"); err == nil {
		return 0, ErrHasHistory
	}
	masking, err := m.store.SecretMaskingSettings(ctx)
	if err != nil {
		return 0, fmt.Errorf("git mirror: %w", err)
	}
	maskers := map[int64]*redact.Masker{}
	history, err := m.store.MirrorHistory(ctx)
	if err != nil {
		return 0, fmt.Errorf("git mirror: %w", err)
	}
	current, err := m.store.MirrorVersions(ctx)
	if err != nil {
		return 0, fmt.Errorf("git mirror: %w", err)
	}
	groups, err := m.store.GroupPaths(ctx)
	if err != nil {
		return 0, fmt.Errorf("git mirror: %w", err)
	}
	paths := Layout(append(current, history...), groups, cfg.Groups)
	runs := Runs(history)
	name, email := identity(cfg)
	blobID := r.blobHasher(ctx)
	have := map[string]string{} // path → blob of the commit before
	mark := 0

	pr, pw := io.Pipe()
	var streamErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := bufio.NewWriterSize(pw, 1<<16)
		for _, run := range runs {
			if ctx.Err() != nil {
				streamErr = ctx.Err()
				break
			}
			changes := make([]Change, len(run))
			for i, v := range run {
				changes[i] = Change{Device: v.Name, Path: paths[v.DeviceID], Trigger: v.Trigger, New: v.First}
			}
			listed := append([]Change(nil), changes...)
			sort.Slice(listed, func(i, j int) bool { return listed[i].Path < listed[j].Path })
			// The blobs go first (a text at a time), so that the commit's
			// message can carry the trailer over what it changes.
			var es []entry
			first := mark + 1
			for i, v := range run {
				text, err := m.store.SnapshotText(ctx, v.SnapshotHash)
				if err != nil {
					streamErr = fmt.Errorf("git mirror: device %d: %w", v.DeviceID, err)
					break
				}
				if masking.Git {
					mk := maskers[v.DeviceID]
					if mk == nil {
						mk = m.keys.Device(v.DeviceID, v.Platform)
						maskers[v.DeviceID] = mk
					}
					text = mk.Text(text)
				}
				if id := blobID(text); have[changes[i].Path] != id {
					have[changes[i].Path] = id
					es = append(es, entry{Path: changes[i].Path, Mode: "100644", Blob: id, Status: 'M'})
				}
				mark++
				fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n%s\n", mark, len(text), text)
			}
			if streamErr != nil {
				break
			}
			msg := withTrailer(m.sealer, Message(Subject(listed), listed), es)
			when := fmt.Sprintf("%d +0000", run[len(run)-1].StartedAt.Unix())
			fmt.Fprintf(w, "commit refs/heads/main\nauthor %s <%s> %s\ncommitter %s <%s> %s\ndata %d\n%s\n",
				name, email, when, name, email, when, len(msg), msg)
			for i := range run {
				fmt.Fprintf(w, "M 100644 :%d %s\n", first+i, changes[i].Path)
			}
		}
		if err := w.Flush(); err != nil && streamErr == nil {
			streamErr = err
		}
		pw.CloseWithError(streamErr)
	}()
	_, err = r.run(ctx, historyTimeout, pr, nil, "fast-import", "--quiet")
	pr.CloseWithError(errors.New("fast-import ended"))
	<-done
	if streamErr != nil {
		return 0, streamErr
	}
	if err != nil {
		return 0, fmt.Errorf("git mirror: %w", err)
	}
	if len(runs) > 0 {
		if _, err := r.run(ctx, gitTimeout, nil, nil, "reset", "-q", "--hard", "HEAD"); err != nil {
			return 0, fmt.Errorf("git mirror: %w", err)
		}
		if err := m.markWritten(ctx, r); err != nil {
			return 0, err
		}
		if err := r.setLayoutState(ctx, cfg.Groups); err != nil {
			return 0, err
		}
		state := secretsClear
		if masking.Git {
			state = secretsMasked
		}
		if err := r.noteSecrets(ctx, "", state); err != nil {
			return 0, err
		}
	}
	m.written, m.clean = nil, false
	res, err := m.sync(ctx, r, cfg, "")
	if err != nil {
		return len(runs), err
	}
	n := len(runs)
	if res.Commit != "" {
		n++
	}
	return n, nil
}

// runGap is the longest pause between two backups of one run.
const runGap = 10 * time.Minute

// Runs cuts time-ordered versions into backup runs, as the server
// commits them: a run goes on while backups follow each other within
// runGap and no device comes twice. A device's versions thus stay in
// their order, each in its own commit.
func Runs(versions []db.MirrorVersion) [][]db.MirrorVersion {
	var runs [][]db.MirrorVersion
	var cur []db.MirrorVersion
	seen := map[int64]bool{}
	for _, v := range versions {
		if len(cur) > 0 && (seen[v.DeviceID] || v.StartedAt.Sub(cur[len(cur)-1].StartedAt) > runGap) {
			runs = append(runs, cur)
			cur, seen = nil, map[int64]bool{}
		}
		cur = append(cur, v)
		seen[v.DeviceID] = true
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	return runs
}
