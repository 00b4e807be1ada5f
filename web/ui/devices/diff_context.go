package devices

import (
	"net/http"
	"strconv"

	"backupd/app/backup"
	"backupd/web"
	"backupd/web/ui/core"
)

// The unchanged lines a diff does not show, between its hunks and after
// the last: the diff page marks where they are and how many, and its
// script asks for them (GET /api/devices/{id}/versions/{backup}/lines)
// when the user opens them.

// detailMaxContextLines is the most lines one ask returns.
const detailMaxContextLines = 1000

// detailGap is a run of unchanged lines the diff leaves out: OldFrom and
// NewFrom number its first line in the old and the new text.
type detailGap struct {
	OldFrom, NewFrom, Count int
	// Cols is how many columns the gap's row spans: 3 unified, 4 side
	// by side.
	Cols int
}

// detailGaps are the runs of unchanged lines before each hunk and, last,
// after the last hunk, in a new text of newTotal lines; gaps of no line
// included.
func detailGaps(hunks []backup.Hunk, newTotal int) []detailGap {
	gaps := make([]detailGap, len(hunks)+1)
	nextOld, nextNew := 1, 1
	for i, h := range hunks {
		gaps[i] = detailGap{OldFrom: nextOld, NewFrom: nextNew, Count: max(h.NewStart-nextNew, 0)}
		nextOld, nextNew = h.OldStart+h.OldLines, h.NewStart+h.NewLines
	}
	gaps[len(hunks)] = detailGap{OldFrom: nextOld, NewFrom: nextNew, Count: max(newTotal-nextNew+1, 0)}
	return gaps
}

// detailGapRow is the row of a gap, ok false for a gap of no line.
func detailGapRow(g detailGap) (row detailDiffRow, ok bool) {
	if g.Count == 0 {
		return row, false
	}
	return detailDiffRow{Gap: &g}, true
}

// detailLine is one line of a version's text.
type detailLine struct {
	No    int    `json:"no"`
	Text  string `json:"text"`
	Noise bool   `json:"noise"`
}

// apiVersionLines is GET /api/devices/{id}/versions/{backup}/lines?start=N&count=C:
// lines N to N+C-1 of a stored version (at most detailMaxContextLines),
// each with whether the device's noise rules dim it, and how many lines
// the text has. Lines past the end are left out.
func (u *handlers) apiVersionLines(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	start, err := strconv.Atoi(q.Get("start"))
	if err != nil || start < 1 {
		return web.FieldInvalid("query", "start", "must be a line number, 1 or more")
	}
	count, err := strconv.Atoi(q.Get("count"))
	if err != nil || count < 1 || count > detailMaxContextLines {
		return web.FieldInvalid("query", "count", "must be a number of lines from 1 to "+strconv.Itoa(detailMaxContextLines))
	}
	d, b, err := u.detailVersionOf(r)
	if err != nil {
		return err
	}
	if b.SnapshotHash == nil {
		return web.NewError(http.StatusNotFound, web.CodeNotFound, "the version has no configuration text")
	}
	ctx := r.Context()
	sec, err := u.SecretsFor(r, "device", d.ID, map[string]any{"page": "lines", "backup": b.ID})
	if err != nil {
		return err
	}
	text, err := u.Store.SnapshotText(ctx, *b.SnapshotHash)
	if err != nil {
		return err
	}
	rules, err := u.Store.NoiseRules(ctx)
	if err != nil {
		return err
	}
	f, err := backup.NewNoiseFilter(d.Platform, rules)
	if err != nil {
		// A rule that does not compile: the diff page ignores the
		// user's rules then, and so do its lines.
		if f, err = backup.NewNoiseFilter(d.Platform, nil); err != nil {
			return err
		}
	}
	lines := detailLines(text)
	shown := lines
	if sec.Keys != nil {
		shown = detailLines(sec.Mask(d.ID, d.Platform, text))
	}
	out := struct {
		Lines []detailLine `json:"lines"`
		Total int          `json:"total"`
	}{Lines: []detailLine{}, Total: len(lines)}
	for n := start; n < start+count && n <= len(lines); n++ {
		out.Lines = append(out.Lines, detailLine{No: n, Text: shown[n-1], Noise: f.IsNoise(lines[n-1])})
	}
	return core.WriteJSON(w, http.StatusOK, out)
}
