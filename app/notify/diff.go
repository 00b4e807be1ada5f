package notify

import (
	"strings"

	"backupd/app/backup"
)

// DiffLimit is how many lines of a unified diff an event carries unless
// the caller says otherwise; DiffMaxBytes bounds its size whatever the
// line count, so that one very long line cannot make a huge message.
const (
	DiffLimit    = 200
	DiffMaxBytes = 64 << 10
)

// Diff is a configuration change as a unified diff (diff -u), cut to a
// limit. Lines are counted in Unified split at "\n", headers included;
// NoiseLines numbers (from 1) those that are noise — a line the device
// rewrites without any change of configuration (a timestamp, a
// re-encrypted secret) — which a view may dim. TotalLines is the length
// of the whole diff, so Truncated is TotalLines > the lines in Unified
// (a webhook digest over its diff budget carries Unified "" this way).
type Diff struct {
	Unified    string `json:"unified"`
	Truncated  bool   `json:"truncated"`
	TotalLines int    `json:"total_lines"`
	NoiseLines []int  `json:"noise_lines,omitempty"`
}

// NewDiff compares two configuration texts with the backup engine's diff,
// noise judged by f (nil: none), and keeps at most limit lines (0 or
// less: DiffLimit). Equal texts have no diff: nil.
func NewDiff(oldText, newText string, f *backup.NoiseFilter, limit int) *Diff {
	return DiffOf(backup.DiffTexts(oldText, newText, f), limit)
}

// DiffOf cuts a diff the backup engine made (backup.Diff or
// backup.DiffTexts, noise lines already marked) to at most limit lines
// (0 or less: DiffLimit). A result without hunks is nil.
func DiffOf(res backup.DiffResult, limit int) *Diff {
	if res.Unified == "" || len(res.Hunks) == 0 {
		return nil
	}
	if limit <= 0 {
		limit = DiffLimit
	}
	lines := strings.SplitAfter(res.Unified, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	noise := noiseFlags(lines, res.Hunks)
	d := &Diff{TotalLines: len(lines)}
	var b strings.Builder
	for i, l := range lines {
		if i >= limit || b.Len()+len(l) > DiffMaxBytes {
			d.Truncated = true
			break
		}
		b.WriteString(l)
		if noise[i] {
			d.NoiseLines = append(d.NoiseLines, i+1)
		}
	}
	d.Unified = b.String()
	return d
}

// noiseFlags says which lines of a unified diff the hunks mark as noise.
// The text is the hunks' own rendering: two file headers, then per hunk
// an "@@" line and one line per hunk line, each possibly followed by a
// "\ No newline at end of file" line, which belongs to no hunk line.
func noiseFlags(lines []string, hunks []backup.Hunk) []bool {
	flags := make([]bool, len(lines))
	h, k := -1, 0
	for i, l := range lines {
		switch {
		case i < 2: // "--- a", "+++ b"
		case strings.HasPrefix(l, "@@"):
			h, k = h+1, 0
		case strings.HasPrefix(l, `\`):
		case h >= 0 && h < len(hunks) && k < len(hunks[h].Lines):
			flags[i] = hunks[h].Lines[k].Noise
			k++
		}
	}
	return flags
}

// IsNoise reports whether Unified's line n (from 1) is noise.
func (d *Diff) IsNoise(n int) bool {
	for _, x := range d.NoiseLines {
		if x == n {
			return true
		}
	}
	return false
}
