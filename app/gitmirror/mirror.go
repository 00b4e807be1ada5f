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

	"backupd/app/redact"
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
	keys   *redact.Keyring
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
	// written maps each file to the snapshot it holds, as committed, and
	// whether its secrets are masked; a device whose version is the same
	// needs no reading.
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
	return &Mirror{store: store, sealer: sealer, keys: redact.NewKeyring(sealer), log: log, root: filepath.Join(dataDir, "git"),
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
	// Removed the file of a device deleted or renamed. From is the path
	// a change of layout moved the file from (Result.Moved).
	New, Added, Removed bool
	From                string
}

// Result is what a Sync did.
type Result struct {
	// Commit is the last new commit's id; "" when nothing changed.
	// Changes are its changes of content.
	Commit  string
	Changes []Change
	// LayoutCommit is the commit that moved the files to a new layout
	// (folders per group turned on or off), before Commit; Moved are its
	// moves ("" and none when the layout stayed).
	LayoutCommit string
	Moved        []Change
}

// open checks for git, takes the mirror's lock (one writer across
// processes: the server and the command line) and makes sure the working
// clone exists.
func (m *Mirror) open(ctx context.Context) (*runner, func(), error) {
	return m.openAfter(ctx, nil)
}

// openAfter is open, with prepare run under the lock before the working
// clone is looked for.
func (m *Mirror) openAfter(ctx context.Context, prepare func(r *runner) error) (*runner, func(), error) {
	r, err := newRunner(m.root)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := lockFile(filepath.Join(m.root, "lock"))
	if err != nil {
		return nil, nil, fmt.Errorf("git mirror: %w", err)
	}
	if prepare != nil {
		if err := prepare(r); err != nil {
			unlock()
			return nil, nil, fmt.Errorf("git mirror: %w", err)
		}
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

// plan is where the devices' files go: path → version under the
// configured layout, and each device's path under it and under the other
// layout (folders per group off or on), to see a change of layout.
type plan struct {
	want  map[string]db.MirrorVersion
	path  map[int64]string
	other map[int64]string
}

func (m *Mirror) plan(ctx context.Context, cfg db.GitMirror) (plan, error) {
	versions, err := m.store.MirrorVersions(ctx)
	if err != nil {
		return plan{}, fmt.Errorf("git mirror: %w", err)
	}
	groups, err := m.store.GroupPaths(ctx)
	if err != nil {
		return plan{}, fmt.Errorf("git mirror: %w", err)
	}
	p := plan{path: Layout(versions, groups, cfg.Groups), other: Layout(versions, groups, !cfg.Groups),
		want: make(map[string]db.MirrorVersion, len(versions))}
	for _, v := range versions {
		p.want[p.path[v.DeviceID]] = v
	}
	return p, nil
}

// Sync writes the latest version of every device into the working clone,
// removes the files of deleted devices, and makes one commit naming the
// devices that changed and why; nothing is committed when nothing did.
// A change of layout (folders per group turned on or off) is one commit
// of its own before it, moving the files. Sync refuses (a
// *ForeignCommitError) when the clone's branch has a commit it did not
// write.
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
	if err := m.checkClone(ctx, r); err != nil {
		return Result{}, err
	}
	p, err := m.plan(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	tracked, hasHead, err := r.tree(ctx)
	if err != nil {
		return Result{}, err
	}
	if m.written == nil {
		m.written = map[string]string{}
	}
	var res Result
	layout, layoutKnown := r.layoutState(ctx)
	if hasHead && (!layoutKnown || layout != cfg.Groups) {
		if res, err = m.moveLayout(ctx, r, cfg, p, tracked, layoutKnown); err != nil {
			return Result{}, err
		}
		if res.LayoutCommit != "" {
			if tracked, _, err = r.tree(ctx); err != nil {
				return Result{}, err
			}
		}
	}
	masking, err := m.store.SecretMaskingSettings(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("git mirror: %w", err)
	}
	secrets := secretsClear
	if masking.Git {
		secrets = secretsMasked
	}
	was, wasKnown := r.secretsState(ctx)
	if subject == "" && hasHead && was != secrets && (wasKnown || masking.Git) {
		subject = secretsSubject(masking.Git)
	}
	pending := map[string]string{}
	wrote := false
	for path, v := range p.want {
		full := filepath.Join(r.repo, filepath.FromSlash(path))
		written := v.SnapshotHash + "|" + secrets
		if m.written[path] == written {
			if _, err := os.Stat(full); err == nil {
				continue
			}
		}
		text, err := m.store.SnapshotText(ctx, v.SnapshotHash)
		if err != nil {
			return Result{}, fmt.Errorf("git mirror: device %d: %w", v.DeviceID, err)
		}
		if masking.Git {
			text = m.keys.Device(v.DeviceID, v.Platform).Text(text)
		}
		pending[path] = written
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
	// Only files of the mirror's own commits go: a file someone put into
	// the clone is neither removed nor committed.
	var gone []string
	for path := range tracked {
		if _, ok := p.want[path]; !ok {
			gone = append(gone, path)
		}
	}
	if err := removeFiles(r.repo, gone); err != nil {
		return Result{}, err
	}
	if !wrote && len(gone) == 0 && m.clean {
		maps.Copy(m.written, pending)
		if err := r.noteSecrets(ctx, was, secrets); err != nil {
			return Result{}, err
		}
		return res, m.noteLayout(ctx, r, cfg, layout, layoutKnown)
	}
	m.clean = false
	paths := gone
	for path := range p.want {
		paths = append(paths, path)
	}
	if err := r.stage(ctx, hasHead || res.LayoutCommit != "", paths); err != nil {
		return Result{}, err
	}
	var changes []Change
	commit, err := m.commitIndex(ctx, r, cfg, func(es []entry) string {
		changes = changesOf(es, p.want)
		if subject == "" {
			subject = Subject(changes)
		}
		return Message(subject, changes)
	})
	if err != nil {
		return Result{}, err
	}
	if err := r.noteSecrets(ctx, was, secrets); err != nil {
		return Result{}, err
	}
	if commit == "" {
		maps.Copy(m.written, pending)
		m.clean = true
		return res, m.noteLayout(ctx, r, cfg, layout, layoutKnown)
	}
	for path := range m.written {
		if _, ok := p.want[path]; !ok {
			delete(m.written, path)
		}
	}
	maps.Copy(m.written, pending)
	m.clean = true
	res.Commit, res.Changes = commit, changes
	return res, nil
}

// commitIndex commits what is staged, when it differs from HEAD: message
// builds the message from the changes, and the Backupd-Mirror trailer is
// added. The commit is marked as the mirror's, with the layout it has.
// It returns the commit ("" when nothing was staged).
func (m *Mirror) commitIndex(ctx context.Context, r *runner, cfg db.GitMirror, message func([]entry) string) (string, error) {
	out, err := r.run(ctx, gitTimeout, nil, nil, "diff", "--cached", "--raw", "--no-abbrev", "--no-renames", "-z")
	if err != nil {
		return "", fmt.Errorf("git mirror: %w", err)
	}
	es := parseRaw(out)
	if len(es) == 0 {
		return "", nil
	}
	msg := withTrailer(m.sealer, message(es), es)
	if _, err := r.run(ctx, gitTimeout, strings.NewReader(msg), identityEnv(cfg), "commit", "-q", "--no-verify", "--cleanup=verbatim", "-F", "-"); err != nil {
		return "", fmt.Errorf("git mirror: %w", err)
	}
	head, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("git mirror: %w", err)
	}
	if err := m.markWritten(ctx, r); err != nil {
		return "", err
	}
	if err := r.setLayoutState(ctx, cfg.Groups); err != nil {
		return "", err
	}
	return strings.TrimSpace(head), nil
}

// treeEntry is a file of HEAD's tree.
type treeEntry struct{ mode, blob string }

// tree lists the files of HEAD's tree (none, and false, before the first
// commit).
func (r *runner) tree(ctx context.Context) (map[string]treeEntry, bool, error) {
	files := map[string]treeEntry{}
	if _, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "-q", "--verify", "HEAD"); err != nil {
		return files, false, nil
	}
	out, err := r.run(ctx, gitTimeout, nil, nil, "ls-tree", "-r", "-z", "--full-tree", "HEAD")
	if err != nil {
		return nil, true, fmt.Errorf("git mirror: %w", err)
	}
	for _, rec := range strings.Split(out, "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
			files[path] = treeEntry{mode: f[0], blob: f[2]}
		}
	}
	return files, true, nil
}

// stage makes the index HEAD's tree (hasHead) or empty, plus paths as the
// working clone has them (a path that is gone is removed). Nothing else
// of the clone is staged: a file someone put there stays out of git.
func (r *runner) stage(ctx context.Context, hasHead bool, paths []string) error {
	reset := []string{"reset", "-q"}
	if !hasHead {
		reset = []string{"read-tree", "--empty"}
	}
	if _, err := r.run(ctx, gitTimeout, nil, nil, reset...); err != nil {
		return fmt.Errorf("git mirror: %w", err)
	}
	if len(paths) == 0 {
		return nil
	}
	list := strings.Join(paths, "\x00") + "\x00"
	if _, err := r.run(ctx, gitTimeout, strings.NewReader(list), nil, "update-index", "--add", "--remove", "-z", "--stdin"); err != nil {
		return fmt.Errorf("git mirror: %w", err)
	}
	return nil
}

// removeFiles deletes the clone's files at paths (slash-separated), and
// the folders they leave empty.
func removeFiles(repo string, paths []string) error {
	for _, p := range paths {
		full := filepath.Join(repo, filepath.FromSlash(p))
		if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("git mirror: %w", err)
		}
		// Bounded by the path's depth; only empty folders go.
		for dir := filepath.Dir(full); dir != repo && strings.HasPrefix(dir, repo+string(filepath.Separator)); dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil {
				break
			}
		}
	}
	return nil
}

// changesOf reads the entries of `git diff --raw` into the commit's
// changes.
func changesOf(es []entry, want map[string]db.MirrorVersion) []Change {
	changes := make([]Change, 0, len(es))
	for _, e := range es {
		c := Change{Path: e.Path, Device: e.Path}
		v, ok := want[e.Path]
		if ok {
			c.Device, c.Trigger = v.Name, v.Trigger
		}
		switch e.Status {
		case 'A':
			c.New, c.Added = v.First, !v.First
		case 'D':
			c.Removed = true
			c.Device = e.Path
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
