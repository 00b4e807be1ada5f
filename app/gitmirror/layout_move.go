package gitmirror

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"backupd/db"
)

// layoutKey is the clone's git setting that records the layout of its
// last commit: "folders" (a folder per group) or "flat".
const layoutKey = "backupd.layout"

func layoutName(groups bool) string {
	if groups {
		return "folders"
	}
	return "flat"
}

// layoutState is the layout of the clone's last commit, when recorded.
func (r *runner) layoutState(ctx context.Context) (groups, known bool) {
	out, err := r.run(ctx, gitTimeout, nil, nil, "config", "--local", "--get", layoutKey)
	switch strings.TrimSpace(out) {
	case "folders":
		return true, err == nil
	case "flat":
		return false, err == nil
	}
	return false, false
}

func (r *runner) setLayoutState(ctx context.Context, groups bool) error {
	if _, err := r.run(ctx, gitTimeout, nil, nil, "config", "--local", layoutKey, layoutName(groups)); err != nil {
		return fmt.Errorf("git mirror: %w", err)
	}
	return nil
}

// noteLayout records the configured layout as the clone's when it was
// not: its tree matches it now.
func (m *Mirror) noteLayout(ctx context.Context, r *runner, cfg db.GitMirror, was, known bool) error {
	if known && was == cfg.Groups {
		return nil
	}
	if _, err := r.run(ctx, gitTimeout, nil, nil, "rev-parse", "-q", "--verify", "HEAD"); err != nil {
		return nil
	}
	return r.setLayoutState(ctx, cfg.Groups)
}

// moveLayout records a change of layout (folders per group turned on or
// off) as one commit that only moves files, contents unchanged, so that
// git log --follow and git diff -M show renames; the new contents are
// committed after it as changes. A device's file moves when HEAD has it
// where the other layout puts it and not where this one does. When the
// clone's layout was not recorded (a clone from before it was), a layout
// change is assumed only when no device's file is where this layout puts
// it yet.
func (m *Mirror) moveLayout(ctx context.Context, r *runner, cfg db.GitMirror, p plan, tracked map[string]treeEntry, known bool) (Result, error) {
	var moves []Change
	settled := false
	for id, to := range p.path {
		from := p.other[id]
		if from == to {
			continue
		}
		_, atFrom := tracked[from]
		_, atTo := tracked[to]
		if atTo {
			settled = true
		}
		if atFrom && !atTo {
			v := p.want[to]
			moves = append(moves, Change{Device: v.Name, Path: to, From: from, Trigger: v.Trigger})
		}
	}
	if len(moves) == 0 || !known && settled {
		return Result{}, nil
	}
	sort.Slice(moves, func(i, j int) bool { return moves[i].Path < moves[j].Path })
	if _, err := r.run(ctx, gitTimeout, nil, nil, "reset", "-q"); err != nil {
		return Result{}, fmt.Errorf("git mirror: %w", err)
	}
	// In the index only (HEAD's blobs), the old paths out first: one
	// device's new path may be another's old one.
	var b strings.Builder
	for _, mv := range moves {
		fmt.Fprintf(&b, "0 %s\t%s\x00", tracked[mv.From].blob, mv.From)
	}
	for _, mv := range moves {
		e := tracked[mv.From]
		fmt.Fprintf(&b, "%s %s\t%s\x00", e.mode, e.blob, mv.Path)
	}
	if _, err := r.run(ctx, gitTimeout, strings.NewReader(b.String()), nil, "update-index", "-z", "--index-info"); err != nil {
		return Result{}, fmt.Errorf("git mirror: %w", err)
	}
	commit, err := m.commitIndex(ctx, r, cfg, func([]entry) string { return LayoutMessage(cfg.Groups, moves) })
	if err != nil {
		return Result{}, err
	}
	// The old files are the mirror's; the new ones are written next.
	var old []string
	for _, mv := range moves {
		if _, wanted := p.want[mv.From]; !wanted {
			old = append(old, mv.From)
		}
	}
	if err := removeFiles(r.repo, old); err != nil {
		return Result{}, err
	}
	m.written, m.clean = map[string]string{}, false
	m.log.Info("git mirror: layout changed, files moved", "layout", layoutName(cfg.Groups), "files", len(moves), "commit", commit)
	return Result{Commit: commit, LayoutCommit: commit, Moved: moves}, nil
}

// LayoutMessage is the message of the commit that moves the files to a
// new layout.
func LayoutMessage(groups bool, moves []Change) string {
	subject := "backupd: layout changed: a folder per group"
	if !groups {
		subject = "backupd: layout changed: no folders per group"
	}
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	b.WriteString("The device files moved to the new layout; their contents did not change here\n" +
		"(git log --follow and git diff -M show the moves).\n\n")
	for _, mv := range moves {
		fmt.Fprintf(&b, "- %s: moved from %s\n", mv.Path, mv.From)
	}
	return b.String()
}
