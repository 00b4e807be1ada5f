// Package gitmirror keeps a git repository with the latest good
// configuration of every device, one file per device, and pushes it to a
// remote. It drives the git program (os/exec) rather than a git library:
// a pure-Go git implementation would add megabytes to a binary that has
// to stay small, and the mirror is optional, so only it needs git.
package gitmirror

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"backupd/app/secret"
	"backupd/db"
)

// Defaults of the commit identity.
const (
	DefaultAuthorName  = "backupd"
	DefaultAuthorEmail = "backupd@localhost"
)

// Mirror is the git mirror of one data directory, kept in DATA/git.
type Mirror struct {
	store  *db.Store
	sealer *secret.Sealer
	log    *slog.Logger
	root   string

	// PushAttempts bounds the tries of one push (default 3); the wait
	// between them starts at PushBackoff (default 5 s) and doubles.
	PushAttempts int
	PushBackoff  time.Duration
	// PushTimeout bounds one try (default 2 min).
	PushTimeout time.Duration
	// Resolver looks the remote's host up before a push (nil: the
	// system's); tests set one.
	Resolver *net.Resolver

	mu sync.Mutex
	// written maps each file to the snapshot it holds, as committed; a
	// device whose version is the same needs no reading.
	written map[string]string
	// clean is set once the working clone is known to match HEAD.
	clean bool
}

// New returns the mirror of the data directory dataDir. Its paths are
// made absolute here: git runs inside DATA/git/mirror, so a relative one
// (the default --data is ./data) would name the wrong file to git and to
// the ssh and askpass helpers it starts.
func New(store *db.Store, sealer *secret.Sealer, log *slog.Logger, dataDir string) *Mirror {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	return &Mirror{store: store, sealer: sealer, log: log, root: filepath.Join(dataDir, "git"),
		PushAttempts: 3, PushBackoff: 5 * time.Second, PushTimeout: 2 * time.Minute}
}

// Dir is the working clone.
func (m *Mirror) Dir() string { return filepath.Join(m.root, "mirror") }

// Change is one file a commit changed.
type Change struct {
	Device  string
	Path    string
	Trigger string
	// New is a device's first version; Added a file new to the mirror
	// for another reason (a renamed device, a mirror started late);
	// Removed the file of a device deleted or renamed.
	New, Added, Removed bool
}

// Result is what a Sync did.
type Result struct {
	// Commit is the new commit's id; "" when nothing changed.
	Commit  string
	Changes []Change
}

// open checks for git, takes the mirror's lock (one writer across
// processes: the server and the command line) and makes sure the working
// clone exists.
func (m *Mirror) open(ctx context.Context) (*runner, func(), error) {
	r, err := newRunner(m.root)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := lockFile(filepath.Join(m.root, "lock"))
	if err != nil {
		return nil, nil, fmt.Errorf("git mirror: %w", err)
	}
	if _, err := os.Stat(filepath.Join(r.repo, ".git")); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(r.repo, 0o700); err != nil {
			unlock()
			return nil, nil, fmt.Errorf("git mirror: %w", err)
		}
		// init -b needs git 2.28; symbolic-ref works with any.
		if _, err := r.run(ctx, gitTimeout, nil, nil, "init", "-q"); err != nil {
			unlock()
			return nil, nil, fmt.Errorf("git mirror: %w", err)
		}
		if _, err := r.run(ctx, gitTimeout, nil, nil, "symbolic-ref", "HEAD", "refs/heads/main"); err != nil {
			unlock()
			return nil, nil, fmt.Errorf("git mirror: %w", err)
		}
	} else if err != nil {
		unlock()
		return nil, nil, fmt.Errorf("git mirror: %w", err)
	}
	return r, unlock, nil
}

func identity(cfg db.GitMirror) (name, email string) {
	name, email = clean(cfg.AuthorName), clean(cfg.AuthorEmail)
	if name == "" {
		name = DefaultAuthorName
	}
	if email == "" {
		email = DefaultAuthorEmail
	}
	return name, email
}

// clean drops what git refuses in an identity.
func clean(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '<' || r == '>' || r == '\n' || r == '\r' || r == 0 {
			return -1
		}
		return r
	}, s))
}

func identityEnv(cfg db.GitMirror) []string {
	name, email := identity(cfg)
	return []string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email,
		"GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + email}
}

// desired is the mirror's wanted content: path → version.
func (m *Mirror) desired(ctx context.Context, cfg db.GitMirror) (map[string]db.MirrorVersion, error) {
	versions, err := m.store.MirrorVersions(ctx)
	if err != nil {
		return nil, fmt.Errorf("git mirror: %w", err)
	}
	groups, err := m.store.GroupPaths(ctx)
	if err != nil {
		return nil, fmt.Errorf("git mirror: %w", err)
	}
	paths := Layout(versions, groups, cfg.Groups)
	want := make(map[string]db.MirrorVersion, len(versions))
	for _, v := range versions {
		want[paths[v.DeviceID]] = v
	}
	return want, nil
}

// Sync writes the latest version of every device into the working clone,
// removes the files of deleted devices, and makes one commit naming the
// devices that changed and why; nothing is committed when nothing did.
func (m *Mirror) Sync(ctx context.Context) (Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cfg, err := m.store.GitMirrorSettings(ctx)
	if err != nil {
		return Result{}, err
	}
	r, unlock, err := m.open(ctx)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	return m.sync(ctx, r, cfg, "")
}

func (m *Mirror) sync(ctx context.Context, r *runner, cfg db.GitMirror, subject string) (Result, error) {
	want, err := m.desired(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	if m.written == nil {
		m.written = map[string]string{}
	}
	pending := map[string]string{}
	wrote := false
	for p, v := range want {
		full := filepath.Join(r.repo, filepath.FromSlash(p))
		if m.written[p] == v.SnapshotHash {
			if _, err := os.Stat(full); err == nil {
				continue
			}
		}
		text, err := m.store.SnapshotText(ctx, v.SnapshotHash)
		if err != nil {
			return Result{}, fmt.Errorf("git mirror: device %d: %w", v.DeviceID, err)
		}
		pending[p] = v.SnapshotHash
		if old, err := os.ReadFile(full); err == nil && string(old) == text {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return Result{}, fmt.Errorf("git mirror: %w", err)
		}
		if err := os.WriteFile(full, []byte(text), 0o600); err != nil {
			return Result{}, fmt.Errorf("git mirror: %w", err)
		}
		wrote = true
	}
	removed, err := removeOthers(r.repo, want)
	if err != nil {
		return Result{}, err
	}
	if !wrote && removed == 0 && m.clean {
		maps.Copy(m.written, pending)
		return Result{}, nil
	}
	if _, err := r.run(ctx, gitTimeout, nil, nil, "add", "-A"); err != nil {
		return Result{}, fmt.Errorf("git mirror: %w", err)
	}
	out, err := r.run(ctx, gitTimeout, nil, nil, "diff", "--cached", "--name-status", "--no-renames", "-z")
	if err != nil {
		return Result{}, fmt.Errorf("git mirror: %w", err)
	}
	changes := changesOf(out, want)
	if len(changes) == 0 {
		maps.Copy(m.written, pending)
		m.clean = true
		return Result{}, nil
	}
	if subject == "" {
		subject = Subject(changes)
	}
	msg := Message(subject, changes)
	if _, err := r.run(ctx, gitTimeout, strings.NewReader(msg), identityEnv(cfg), "commit", "-q", "--no-verify", "-F", "-"); err != nil {
		return Result{}, fmt.Errorf("git mirror: %w", err)
	}
	head, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "HEAD")
	if err != nil {
		return Result{}, fmt.Errorf("git mirror: %w", err)
	}
	for p := range m.written {
		if _, ok := want[p]; !ok {
			delete(m.written, p)
		}
	}
	maps.Copy(m.written, pending)
	m.clean = true
	return Result{Commit: strings.TrimSpace(head), Changes: changes}, nil
}

// removeOthers deletes every file of the working clone (.git aside) that
// is no device's, and the folders left empty.
func removeOthers(repo string, want map[string]db.MirrorVersion) (int, error) {
	removed := 0
	var dirs []string
	err := filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repo, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			dirs = append(dirs, path)
			return nil
		}
		if _, ok := want[filepath.ToSlash(rel)]; ok {
			return nil
		}
		removed++
		return os.Remove(path)
	})
	if err != nil {
		return removed, fmt.Errorf("git mirror: %w", err)
	}
	for i := len(dirs) - 1; i >= 0; i-- { // deepest first
		_ = os.Remove(dirs[i]) // only succeeds when empty
	}
	return removed, nil
}

// changesOf reads `git diff --name-status -z` into the commit's changes.
func changesOf(out string, want map[string]db.MirrorVersion) []Change {
	fields := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	var changes []Change
	for i := 0; i+1 < len(fields); i += 2 {
		status, p := fields[i], fields[i+1]
		c := Change{Path: p, Device: p}
		v, ok := want[p]
		if ok {
			c.Device, c.Trigger = v.Name, v.Trigger
		}
		switch status {
		case "A":
			c.New, c.Added = v.First, !v.First
		case "D":
			c.Removed = true
			c.Device = p
		}
		changes = append(changes, c)
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes
}

// Subject is a commit's first line: the devices when a few, else a count.
func Subject(changes []Change) string {
	if len(changes) <= 3 {
		names := make([]string, len(changes))
		for i, c := range changes {
			names[i] = c.Device
		}
		return "backupd: " + strings.Join(names, ", ")
	}
	return "backupd: " + strconv.Itoa(len(changes)) + " devices changed"
}

// Message is a commit message: the subject, then one line per device
// with what triggered its backup. Never any configuration text.
func Message(subject string, changes []Change) string {
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	for _, c := range changes {
		switch {
		case c.Removed:
			fmt.Fprintf(&b, "- %s: removed (device deleted or renamed)\n", c.Path)
		case c.New:
			fmt.Fprintf(&b, "- %s: first backup (trigger: %s)\n", c.Device, c.Trigger)
		case c.Added:
			fmt.Fprintf(&b, "- %s: added (trigger: %s)\n", c.Device, c.Trigger)
		default:
			fmt.Fprintf(&b, "- %s: changed (trigger: %s)\n", c.Device, c.Trigger)
		}
	}
	return b.String()
}
