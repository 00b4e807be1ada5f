package gitmirror

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"backupd/app/secret"
	"backupd/db"
)

// How the mirror knows its own commits. Every commit it writes ends with
// the trailer "Backupd-Mirror: <mac>", a MAC (under a key derived from
// secret.key, which every node of an installation shares) of the changes
// the commit makes: each path with its new mode and blob, or its removal.
// A commit another node's mirror wrote passes; a hand-made commit has no
// such trailer, and one that copies a mirror commit's message but changes
// other files (git commit --amend, a cherry-pick with extra files) fails
// the check, since the MAC covers what the commit changes.
//
// Commits from before the trailer existed are taken as the mirror's when
// they are in the clone's own history (below refs/backupd/written, set at
// the first run of this version), or below the last commit a push of any
// node sent (db.GitPushStatus.LastPushed in the shared database).
const (
	trailerKey = "Backupd-Mirror"
	// writtenRef marks the newest commit the mirror wrote or took as its
	// own in this clone.
	writtenRef = "refs/backupd/written"
)

// entry is one path a commit changes, as git diff --raw says.
type entry struct {
	Path    string
	Mode    string
	Blob    string
	Status  byte // A, M, D, T
	OldMode string
	OldBlob string
}

// parseRaw reads `git diff --raw -z --no-renames` (or diff-tree):
// ":oldmode newmode oldblob newblob status NUL path NUL" per path.
func parseRaw(out string) []entry {
	fields := strings.Split(out, "\x00")
	var es []entry
	for i := 0; i+1 < len(fields); i++ {
		meta := fields[i]
		if !strings.HasPrefix(meta, ":") {
			continue // diff-tree prints the commit's id first
		}
		f := strings.Fields(meta[1:])
		if len(f) < 5 || f[4] == "" {
			continue
		}
		es = append(es, entry{OldMode: f[0], Mode: f[1], OldBlob: f[2], Blob: f[3], Status: f[4][0], Path: fields[i+1]})
		i++
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Path < es[j].Path })
	return es
}

// commitMAC is the trailer's value for a commit making changes es.
func commitMAC(sealer *secret.Sealer, es []entry) string {
	sorted := append([]entry(nil), es...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var b strings.Builder
	for _, e := range sorted {
		b.WriteString(e.Path)
		b.WriteByte(0)
		if e.Status == 'D' {
			b.WriteString("-")
		} else {
			b.WriteString(e.Mode + " " + e.Blob)
		}
		b.WriteByte('\n')
	}
	return hex.EncodeToString(sealer.MAC(secret.PurposeGitCommit, []byte(b.String()))[:16])
}

// withTrailer ends msg with the trailer for changes es.
func withTrailer(sealer *secret.Sealer, msg string, es []entry) string {
	return strings.TrimRight(msg, "\n") + "\n\n" + trailerKey + ": " + commitMAC(sealer, es) + "\n"
}

// blobHasher hashes a file's content as git names it in the clone's object
// format.
type blobHasher func(text string) string

func (r *runner) blobHasher(ctx context.Context) blobHasher {
	newHash := sha1.New
	if out, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "--show-object-format"); err == nil && strings.TrimSpace(out) == "sha256" {
		newHash = sha256.New
	}
	return func(text string) string {
		var h hash.Hash = newHash()
		h.Write([]byte("blob " + strconv.Itoa(len(text)) + "\x00"))
		h.Write([]byte(text))
		return hex.EncodeToString(h.Sum(nil))
	}
}

// commitInfo is what a refusal says about a commit.
type commitInfo struct {
	ID, Author, Subject string
	Parents             []string
	trailer             string
}

func (r *runner) commitInfo(ctx context.Context, id string) (commitInfo, error) {
	raw, err := r.run(ctx, gitTimeout, nil, nil, "cat-file", "commit", id)
	if err != nil {
		return commitInfo{}, fmt.Errorf("git mirror: %w", err)
	}
	c := commitInfo{ID: id}
	head, msg, _ := strings.Cut(raw, "\n\n")
	for _, l := range strings.Split(head, "\n") {
		switch {
		case strings.HasPrefix(l, "parent "):
			c.Parents = append(c.Parents, strings.TrimPrefix(l, "parent "))
		case strings.HasPrefix(l, "author "):
			a := strings.TrimPrefix(l, "author ")
			if end := strings.LastIndex(a, ">"); end >= 0 {
				a = a[:end+1]
			}
			c.Author = shown(a, 120)
		}
	}
	subject, _, _ := strings.Cut(strings.TrimLeft(msg, "\n"), "\n")
	c.Subject = shown(subject, 120)
	for _, l := range strings.Split(msg, "\n") {
		if v, ok := strings.CutPrefix(l, trailerKey+": "); ok {
			c.trailer = strings.TrimSpace(v)
		}
	}
	return c, nil
}

// shown makes text from a commit fit for a message: no control
// characters, at most n bytes.
func shown(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return strings.TrimSpace(s)
}

// ours reports whether the mirror (of this or another node) wrote commit c:
// one parent at most, and a trailer whose MAC matches its changes.
func (m *Mirror) ours(ctx context.Context, r *runner, c commitInfo) (bool, error) {
	if len(c.Parents) > 1 || c.trailer == "" {
		return false, nil
	}
	out, err := r.run(ctx, gitTimeout, nil, nil, "diff-tree", "-r", "--root", "--raw", "--no-abbrev", "--no-renames", "-z", c.ID)
	if err != nil {
		return false, fmt.Errorf("git mirror: %w", err)
	}
	want := commitMAC(m.sealer, parseRaw(out))
	return hmac.Equal([]byte(want), []byte(c.trailer)), nil
}

// trusted are the commits below which history is taken as the mirror's:
// the clone's mark and the last commit a push sent, those that exist here.
func (m *Mirror) trusted(ctx context.Context, r *runner) []string {
	var ids []string
	if id, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "-q", "--verify", writtenRef+"^{commit}"); err == nil {
		ids = append(ids, strings.TrimSpace(id))
	}
	st, err := m.PushStatus(ctx)
	if err != nil {
		return ids
	}
	pushed := st.LastPushed
	if pushed == "" && st.OK {
		pushed = st.Commit
	}
	if pushed != "" && validID(pushed) {
		if _, err := r.run(ctx, gitTimeout, nil, nil, "cat-file", "-e", pushed+"^{commit}"); err == nil {
			ids = append(ids, pushed)
		}
	}
	return ids
}

func validID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// checkRange refuses when a commit reachable from tip but from none of
// except is not the mirror's; where says whose branch it is.
func (m *Mirror) checkRange(ctx context.Context, r *runner, tip string, except []string, where, branch string) error {
	args := []string{"rev-list", "--reverse", "--topo-order", tip}
	for _, x := range except {
		args = append(args, "^"+x)
	}
	out, err := r.run(ctx, gitTimeout, nil, nil, args...)
	if err != nil {
		return fmt.Errorf("git mirror: %w", err)
	}
	ids := strings.Fields(out)
	for i, id := range ids {
		c, err := r.commitInfo(ctx, id)
		if err != nil {
			return err
		}
		ok, err := m.ours(ctx, r, c)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		fe := &ForeignCommitError{Where: where, Branch: branch, Dir: r.repo, Commit: c.ID, Author: c.Author,
			Subject: c.Subject, Count: len(ids) - i}
		if len(c.Parents) > 0 {
			fe.Base = c.Parents[0]
		}
		return fe
	}
	return nil
}

// checkClone refuses when the clone's branch has a commit the mirror did
// not write (one made by hand in DATA/git/mirror). A clone from before
// the mark existed is taken as it is.
func (m *Mirror) checkClone(ctx context.Context, r *runner) error {
	out, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "-q", "--verify", "HEAD")
	if err != nil {
		return nil // nothing committed yet
	}
	head := strings.TrimSpace(out)
	if _, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "-q", "--verify", writtenRef); err != nil {
		return m.markWritten(ctx, r)
	}
	return m.checkRange(ctx, r, head, m.trusted(ctx, r), "clone", "")
}

// markWritten records HEAD as the mirror's.
func (m *Mirror) markWritten(ctx context.Context, r *runner) error {
	if _, err := r.run(ctx, gitTimeout, nil, nil, "update-ref", writtenRef, "HEAD"); err != nil {
		return fmt.Errorf("git mirror: %w", err)
	}
	return nil
}

// ForeignCommitError refuses a branch that carries a commit the mirror did
// not write: the mirror builds on it, rewrites it and deletes its files
// never, so it neither commits (in the clone) nor pushes (to the remote)
// until the commit is moved off the branch.
type ForeignCommitError struct {
	// Where is "remote" or "clone"; Remote (as shown: no credentials) and
	// Branch the remote's, Dir the clone.
	Where, Remote, Branch, Dir string
	// Commit, Author ("Name <email>") and Subject name the oldest such
	// commit; Count is the commits from it to the tip; Base its parent
	// (the mirror's, "" when it is the branch's first commit).
	Commit, Author, Subject string
	Count                   int
	Base                    string
}

// Short is a commit id cut to 12 hex digits, as messages show it.
func Short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func (e *ForeignCommitError) Error() string {
	more := ""
	if e.Count > 1 {
		more = fmt.Sprintf(" (and %d more commit(s) on top of it)", e.Count-1)
	}
	what := fmt.Sprintf("commit %s by %s (%q)%s that backupd did not write", Short(e.Commit), e.Author, e.Subject, more)
	const never = "backupd never builds on, rewrites or deletes a commit it did not write"
	if e.Where == "clone" {
		fix := fmt.Sprintf("keep it on a branch (git -C %s branch keep-%s %s), then git -C %s reset --hard %s",
			shellQuote(e.Dir), Short(e.Commit), Short(e.Commit), shellQuote(e.Dir), Short(e.Base))
		if e.Base == "" {
			fix = "move the folder " + e.Dir + " away; the next commit starts a new one"
		}
		return fmt.Sprintf("git mirror: the mirror's clone %s has %s; %s, so it commits and pushes nothing until "+
			"the clone's branch holds only its commits: %s", e.Dir, what, never, fix)
	}
	fix := fmt.Sprintf("keep that work on another branch, then reset %s on the remote to %s, the mirror's last commit "+
		"before it (git push --force-with-lease=%s:%s %s %s:refs/heads/%s), or give the mirror another branch or remote",
		e.Branch, Short(e.Base), e.Branch, e.Commit, shellQuote(e.Remote), e.Base, e.Branch)
	if e.Base == "" {
		fix = fmt.Sprintf("the branch holds no commit of backupd's: keep that work elsewhere and delete the branch %s "+
			"on the remote (the next push creates it), or give the mirror an empty branch or repository", e.Branch)
	}
	return fmt.Sprintf("git mirror: the remote branch %s has %s; %s, so nothing is pushed: %s", e.Branch, what, never, fix)
}

// Status is the refusal as the push status stores it.
func (e *ForeignCommitError) Status() *db.GitForeignCommit {
	return &db.GitForeignCommit{Where: e.Where, Commit: Short(e.Commit), Author: e.Author, Subject: e.Subject,
		Count: e.Count, Base: Short(e.Base)}
}
