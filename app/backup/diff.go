package backup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"backupd/app/redact"
	"backupd/db"
)

// Kinds of DiffLine.
const (
	LineContext = "context"
	LineAdded   = "added"
	LineRemoved = "removed"
)

// DiffContextLines is how many unchanged lines surround each change.
const DiffContextLines = 3

// DiffLine is one line of a hunk. OldNo and NewNo are 1-based line
// numbers in the old and new text; 0 where the line is not on that side.
// Noise marks a line whose difference does not count (see NoiseFilter):
// a noise line itself, or one that differs from its counterpart only in
// a masked part. A view dims it.
type DiffLine struct {
	Kind  string
	OldNo int
	NewNo int
	Text  string
	Noise bool
}

// Hunk is a run of changes with its context, for a side-by-side view.
// OldStart/NewStart are the first line numbers it covers (as in the "@@"
// header) and OldLines/NewLines how many lines of each side it holds.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Lines              []DiffLine
	// Section is the line that opens the block the hunk's first change
	// is in ("interface GigabitEthernet0/1", "router bgp 65000",
	// "protocols {"), as git names a function: the nearest line above it
	// that starts in the first column with a letter. "" when none, or
	// when the first change is itself such a line.
	Section string
}

// maxSectionSearch bounds how far above a change its section is looked
// for.
const maxSectionSearch = 5000

// sectionAbove is the nearest line of lines before index i (0-based)
// that starts with a letter, "" when none is within maxSectionSearch.
func sectionAbove(lines []string, i int) string {
	for j := min(i, len(lines)) - 1; j >= 0 && j >= i-maxSectionSearch; j-- {
		l := lines[j]
		if l != "" && (l[0] >= 'a' && l[0] <= 'z' || l[0] >= 'A' && l[0] <= 'Z') {
			return strings.TrimRight(l, " \t\r")
		}
	}
	return ""
}

// DiffResult is the difference between two versions in two forms: a
// unified diff for download or a patch tool, and hunks for a view.
// Changed is false when the texts differ only by noise; Added and Removed
// count every added and removed line, noise included.
type DiffResult struct {
	Unified        string
	Hunks          []Hunk
	Changed        bool
	Added, Removed int
	// NoiseAdded and NoiseRemoved are the noise lines among Added and
	// Removed: what changes on every backup without a change.
	NoiseAdded, NoiseRemoved int
	// NewTotal is how many lines the new text has (LineCount), for the
	// unchanged lines after the last hunk.
	NewTotal int
}

// LineCount is how many lines text has as a diff numbers them: a last
// line without a newline counts, an empty text has none.
func LineCount(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// Errors of Diff, for callers to tell the user what is wrong.
var (
	ErrDifferentDevices = errors.New("the two backups belong to different devices; only versions of the same device can be compared")
	ErrNoSnapshot       = errors.New("the backup has no configuration to compare")
)

// Diff compares two backups of the same device, in either order (from is
// the old side). The user's noise rules mark noise lines, together with
// the device platform's built-in ones. A backup that does not exist is
// db.ErrNotFound; scope is the caller's to check, on the device.
func Diff(ctx context.Context, store *db.Store, fromBackupID, toBackupID string, user []db.NoiseRule) (DiffResult, error) {
	return DiffMasked(ctx, store, fromBackupID, toBackupID, user, nil)
}

// DiffMasked is Diff with the secrets of the lines it shows masked by the
// device's masker from keys (nil: none masked). Noise and whether the
// configuration changed are judged on the whole texts, as Diff does.
func DiffMasked(ctx context.Context, store *db.Store, fromBackupID, toBackupID string, user []db.NoiseRule, keys *redact.Keyring) (DiffResult, error) {
	from, err := diffBackup(ctx, store, fromBackupID)
	if err != nil {
		return DiffResult{}, err
	}
	to, err := diffBackup(ctx, store, toBackupID)
	if err != nil {
		return DiffResult{}, err
	}
	if from.DeviceID != to.DeviceID {
		return DiffResult{}, fmt.Errorf("diff %s and %s: %w", fromBackupID, toBackupID, ErrDifferentDevices)
	}
	dev, err := store.GetDevice(ctx, from.DeviceID)
	if err != nil {
		return DiffResult{}, fmt.Errorf("diff: device of backup %s: %w", fromBackupID, err)
	}
	f, err := NewNoiseFilter(dev.Platform, user)
	if err != nil {
		return DiffResult{}, err
	}
	oldText, err := store.SnapshotText(ctx, *from.SnapshotHash)
	if err != nil {
		return DiffResult{}, fmt.Errorf("diff: configuration of backup %s: %w", fromBackupID, err)
	}
	newText := oldText
	if *to.SnapshotHash != *from.SnapshotHash {
		if newText, err = store.SnapshotText(ctx, *to.SnapshotHash); err != nil {
			return DiffResult{}, fmt.Errorf("diff: configuration of backup %s: %w", toBackupID, err)
		}
	}
	var mask *redact.Masker
	if keys != nil {
		mask = keys.Device(dev.ID, dev.Platform)
	}
	return diffTexts(oldText, newText, f, diffLabel(dev, from), diffLabel(dev, to), mask), nil
}

// diffBackup loads a backup that has a configuration.
func diffBackup(ctx context.Context, store *db.Store, id string) (db.Backup, error) {
	b, err := store.GetBackup(ctx, id)
	if err != nil {
		return b, fmt.Errorf("diff: backup %s: %w", id, err)
	}
	if b.SnapshotHash == nil {
		reason := "it has not finished"
		switch {
		case b.ErrorMessage != nil:
			reason = "it failed: " + *b.ErrorMessage
		case b.FinishedAt != nil:
			reason = "it failed"
		}
		return b, fmt.Errorf("diff: backup %s of %s: %w (%s)", id, b.StartedAt.UTC().Format(db.TimeFormat), ErrNoSnapshot, reason)
	}
	return b, nil
}

// diffLabel names one side the way diff(1) does: the file, a tab, the time.
func diffLabel(d db.Device, b db.Backup) string {
	return d.Name + "\t" + b.StartedAt.UTC().Format("2006-01-02 15:04:05.000 UTC")
}

// DiffTexts compares two plain texts, noise judged by f (nil: none).
func DiffTexts(a, b string, f *NoiseFilter) DiffResult {
	return diffTexts(a, b, f, "a", "b", nil)
}

// diffTexts compares a and b. With mask, the lines the result shows (its
// hunks, their sections, the unified diff) are those of the masked texts:
// masking keeps lines where they are, so the line numbers hold for both.
func diffTexts(a, b string, f *NoiseFilter, fromLabel, toLabel string, mask *redact.Masker) DiffResult {
	res := DiffResult{NewTotal: LineCount(b)}
	if a == b {
		return res
	}
	res.Changed = f.Strip(a) != f.Strip(b)
	u, err := udiff.ToUnifiedDiff(fromLabel, toLabel, a, udiff.Lines(a, b), DiffContextLines)
	if err != nil {
		// Lines' edits always apply to the text they came from.
		panic("diff: inconsistent edits: " + err.Error())
	}
	var out strings.Builder
	out.Grow(256)
	out.WriteString("--- " + fromLabel + "\n+++ " + toLabel + "\n")
	res.Hunks = make([]Hunk, 0, len(u.Hunks))
	oldLines := strings.Split(a, "\n")
	shownOld, shownNew := oldLines, []string(nil)
	if mask != nil {
		shownOld = strings.Split(mask.Text(a), "\n")
		shownNew = strings.Split(mask.Text(b), "\n")
	}
	// go-udiff's hunks hold the right lines and old line numbers; the new
	// side's numbers are counted here from the lines added and removed
	// before each hunk.
	shift := 0
	for _, uh := range u.Hunks {
		h := Hunk{OldStart: uh.FromLine, NewStart: uh.FromLine + shift, Lines: make([]DiffLine, 0, len(uh.Lines))}
		oldNo, newNo := h.OldStart, h.NewStart
		// lastLine marks the hunk line without a newline at its end.
		lastLine := -1
		for i, l := range uh.Lines {
			line := DiffLine{Text: strings.TrimSuffix(l.Content, "\n")}
			switch l.Kind {
			case udiff.Equal:
				line.Kind, line.OldNo, line.NewNo = LineContext, oldNo, newNo
				line.Noise = f.IsNoise(line.Text)
				oldNo++
				newNo++
				h.OldLines++
				h.NewLines++
			case udiff.Delete:
				line.Kind, line.OldNo = LineRemoved, oldNo
				oldNo++
				h.OldLines++
				res.Removed++
			case udiff.Insert:
				line.Kind, line.NewNo = LineAdded, newNo
				newNo++
				h.NewLines++
				res.Added++
			}
			if !strings.HasSuffix(l.Content, "\n") {
				lastLine = i
			}
			h.Lines = append(h.Lines, line)
		}
		shift += h.NewLines - h.OldLines
		// The section of the first change: above its old line, unless the
		// change is itself a line of the first column, which names itself.
		firstOld := h.OldStart
		for _, l := range h.Lines {
			if l.Kind != LineContext {
				if sectionAbove([]string{l.Text}, 1) == "" {
					h.Section = sectionAbove(shownOld, firstOld-1)
				}
				break
			}
			firstOld = l.OldNo + 1
		}
		markNoise(h.Lines, f)
		var body strings.Builder
		for i := range h.Lines {
			l := &h.Lines[i]
			switch {
			case mask == nil:
			case l.OldNo > 0 && l.OldNo <= len(shownOld):
				l.Text = shownOld[l.OldNo-1]
			case l.NewNo > 0 && l.NewNo <= len(shownNew):
				l.Text = shownNew[l.NewNo-1]
			}
			body.WriteByte(unifiedMark(l.Kind))
			body.WriteString(l.Text)
			body.WriteByte('\n')
			if i == lastLine {
				body.WriteString("\\ No newline at end of file\n")
			}
		}
		for _, l := range h.Lines {
			switch {
			case !l.Noise:
			case l.Kind == LineAdded:
				res.NoiseAdded++
			case l.Kind == LineRemoved:
				res.NoiseRemoved++
			}
		}
		res.Hunks = append(res.Hunks, h)
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(h.OldStart, h.OldLines), hunkRange(h.NewStart, h.NewLines))
		out.WriteString(body.String())
	}
	res.Unified = out.String()
	return res
}

// unifiedMark starts a line of a unified diff of kind.
func unifiedMark(kind string) byte {
	switch kind {
	case LineRemoved:
		return '-'
	case LineAdded:
		return '+'
	}
	return ' '
}

// hunkRange formats one side of a hunk header the way diff -u does: an
// empty range names the line before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

// markNoise flags the changed lines of a hunk whose change does not count:
// lines the filter drops, and pairs of a removed and an added line in the
// same run of changes that are equal once masked (an ENC blob re-encrypted,
// a timestamp moved).
func markNoise(lines []DiffLine, f *NoiseFilter) {
	for start := 0; start < len(lines); {
		if lines[start].Kind == LineContext {
			start++
			continue
		}
		end := start
		for end < len(lines) && lines[end].Kind != LineContext {
			end++
		}
		// Removed lines by their compared form, waiting for a partner.
		waiting := map[string][]int{}
		stripped := make([]string, end-start)
		for i := start; i < end; i++ {
			s, keep := f.stripLine(lines[i].Text)
			if !keep {
				lines[i].Noise = true
				continue
			}
			stripped[i-start] = s
			if lines[i].Kind == LineRemoved {
				waiting[s] = append(waiting[s], i)
			}
		}
		for i := start; i < end; i++ {
			if lines[i].Kind != LineAdded || lines[i].Noise {
				continue
			}
			s := stripped[i-start]
			if q := waiting[s]; len(q) > 0 {
				lines[q[0]].Noise, lines[i].Noise = true, true
				waiting[s] = q[1:]
			}
		}
		start = end
	}
}
