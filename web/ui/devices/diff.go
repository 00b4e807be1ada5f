package devices

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"backupd/app/backup"
	"backupd/db"
	"backupd/web/ui/core"
)

// Two versions compared, side by side or unified, with the noise rules
// change detection uses; and the diff as a file.

// Diffs.

// deviceDiffPage is the data of device_diff.html.
type deviceDiffPage struct {
	Device   db.Device
	From, To detailHistoryRow
	// Same: the texts are equal. NoiseOnly: they differ only by noise.
	Same, NoiseOnly bool
	// Added and Removed leave the noise lines out; Noise counts those,
	// added and removed.
	Added, Removed, Noise int
	Unified               bool
	Rows                  []detailDiffRow
	// Truncated: only Shown of Total diff lines are rendered.
	Truncated    bool
	Shown, Total int
	HasNoise     bool
	RulesIgnored bool
	SplitURL     string
	UnifiedURL   string
	SwapURL      string
	RawURL       string
	HistoryURL   string
	// LinesURL gives the new version's lines, for the gaps' rows.
	LinesURL string
	// Picks are the versions the pickers offer, newest first: the
	// device's newest changes, and the two compared.
	Picks []detailPick
	// View is the view asked for ("unified", "split" or ""), which the
	// pickers' form and the swap link keep.
	View string
	// Secrets says whether the lines' secrets are masked.
	Secrets core.Secrets
}

// detailPick is a version the diff's pickers offer.
type detailPick struct{ ID, When string }

// detailMaxPicks bounds the changes the pickers offer.
const detailMaxPicks = 100

// detailDiffRow is one row of the diff table: a hunk header, or a line on
// the left, the right or both sides. The unified view uses Left for the
// line and Right for nothing but its new line number.
type detailDiffRow struct {
	Header      string
	Left, Right detailDiffCell
	// Gap, on a row of its own, is a run of unchanged lines left out.
	Gap *detailGap
}

// detailDiffCell is one side of a row; No is 0 where the side has no line.
// A changed line paired with its counterpart has Mark set: Text is then
// Before, Mark (the characters that changed) and After.
type detailDiffCell struct {
	No   int
	Text string
	// Before, Mark and After split Text around its changed characters.
	Before, Mark, After string
	// Class is the cell's CSS class: its kind, and whether it is noise.
	Class string
}

func (u *handlers) deviceDiff(w http.ResponseWriter, r *http.Request) error {
	d, from, to, err := u.detailDiffVersions(r)
	if err != nil {
		return err
	}
	sec, err := u.SecretsFor(r, "device", d.ID, map[string]any{"page": "diff", "from": from.ID, "to": to.ID})
	if err != nil {
		return err
	}
	res, rulesIgnored, err := u.detailDiff(r, from, to, sec)
	if err != nil {
		return err
	}
	// The view asked for: "unified", "split", or none (split, which a
	// narrow screen's script turns into unified).
	view := r.URL.Query().Get("view")
	if view != "unified" && view != "split" {
		view = ""
	}
	unified := view == "unified"
	p := deviceDiffPage{
		Device: d, From: u.detailRow(d, from), To: u.detailRow(d, to),
		Same: len(res.Hunks) == 0, NoiseOnly: len(res.Hunks) > 0 && !res.Changed,
		Added: res.Added - res.NoiseAdded, Removed: res.Removed - res.NoiseRemoved, Noise: res.NoiseAdded + res.NoiseRemoved,
		Unified: unified, RulesIgnored: rulesIgnored,
		HistoryURL: detailPath(d) + "#history", Secrets: sec,
	}
	base := detailDiffPath(d, from.ID, to.ID)
	p.SplitURL, p.UnifiedURL = sec.Keep(base+"&view=split"), sec.Keep(base+"&view=unified")
	p.SwapURL = detailDiffPath(d, to.ID, from.ID)
	if view != "" {
		p.SwapURL += "&view=" + view
	}
	p.SwapURL = sec.Keep(p.SwapURL)
	p.RawURL = sec.Keep(detailPath(d) + "/diff/raw?" + url.Values{"from": {from.ID}, "to": {to.ID}}.Encode())
	for _, h := range res.Hunks {
		p.Total += len(h.Lines)
	}
	gaps := detailGaps(res.Hunks, res.NewTotal)
	for i := range gaps {
		gaps[i].Cols = 4
		if unified {
			gaps[i].Cols = 3
		}
	}
	if unified {
		p.Rows, p.Shown, p.HasNoise = detailUnifiedRows(res.Hunks, gaps, detailMaxDiffRows)
	} else {
		p.Rows, p.Shown, p.HasNoise = detailSplitRows(res.Hunks, gaps, detailMaxDiffRows)
	}
	p.Truncated = p.Shown < p.Total
	if !p.Truncated && len(res.Hunks) > 0 {
		if row, ok := detailGapRow(gaps[len(res.Hunks)]); ok {
			p.Rows = append(p.Rows, row)
		}
	}
	p.LinesURL = sec.Keep("/api" + detailVersionPath(d, to.ID) + "/lines")
	p.View = view
	if p.Picks, err = u.detailPicks(r, d, from, to); err != nil {
		return err
	}
	return u.Render(w, r, http.StatusOK, "device_diff.html", keyDetailDiffTitle, p)
}

// detailPicks are the versions the diff's pickers offer: the device's
// newest changes (and its first version), and from and to wherever they
// are, newest first.
func (u *handlers) detailPicks(r *http.Request, d db.Device, from, to db.Backup) ([]detailPick, error) {
	page, err := u.Store.DeviceHistory(r.Context(), d.ID, db.HistoryQuery{Limit: detailMaxPicks, ChangesOnly: true})
	if err != nil {
		return nil, err
	}
	versions := []db.Backup{from, to}
	for _, b := range page.Items {
		if b.SnapshotHash != nil && b.ID != from.ID && b.ID != to.ID {
			versions = append(versions, b)
		}
	}
	slices.SortFunc(versions, func(a, b db.Backup) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	versions = slices.CompactFunc(versions, func(a, b db.Backup) bool { return a.ID == b.ID })
	out := make([]detailPick, len(versions))
	for i, b := range versions {
		out[i] = detailPick{ID: b.ID, When: b.StartedAt.In(u.Location).Format("2006-01-02 15:04:05")}
	}
	return out, nil
}

// deviceDiffRaw serves the unified diff of two versions as a file.
func (u *handlers) deviceDiffRaw(w http.ResponseWriter, r *http.Request) error {
	d, from, to, err := u.detailDiffVersions(r)
	if err != nil {
		return err
	}
	sec, err := u.SecretsFor(r, "device", d.ID, map[string]any{"page": "diff download", "from": from.ID, "to": to.ID})
	if err != nil {
		return err
	}
	res, _, err := u.detailDiff(r, from, to, sec)
	if err != nil {
		return err
	}
	stamp := from.StartedAt.In(u.Location).Format("20060102-150405") + "_" + to.StartedAt.In(u.Location).Format("20060102-150405")
	detailWriteText(w, "attachment", detailFileName(d.Name, stamp, ".diff"), res.Unified)
	return nil
}

// detailDiffVersions reads ?from= and ?to=: two backups of the device that have
// a configuration. Without from, the version before to is meant.
func (u *handlers) detailDiffVersions(r *http.Request) (d db.Device, from, to db.Backup, err error) {
	if d, err = u.detailDevice(r); err != nil {
		return
	}
	q := r.URL.Query()
	if q.Get("to") == "" {
		err = &core.PageError{Status: http.StatusBadRequest, Message: keyDetailDiffPickTwo}
		return
	}
	if to, err = u.detailBackup(r, d, q.Get("to")); err != nil {
		return
	}
	if q.Get("from") == "" {
		prev, ok, perr := u.Store.PreviousVersion(r.Context(), d.ID, db.CursorOf(to))
		if err = perr; err != nil {
			return
		}
		if !ok {
			err = &core.PageError{Status: http.StatusNotFound, Message: keyDetailDiffNoPrevious}
			return
		}
		from = prev
	} else if from, err = u.detailBackup(r, d, q.Get("from")); err != nil {
		return
	}
	for _, b := range []db.Backup{from, to} {
		if b.SnapshotHash == nil {
			err = &core.PageError{Status: http.StatusUnprocessableEntity, Message: keyDetailDiffNoText,
				Args: []any{b.StartedAt.In(u.Location).Format("2006-01-02 15:04:05")}}
			return
		}
	}
	return
}

// detailDiff compares two versions with the noise rules change detection
// uses: the platform's built-in ones and the user's. A user rule that
// cannot be used (saved by an older release, say) does not stop the
// diff: it is made with the built-in rules only, and the page says so.
func (u *handlers) detailDiff(r *http.Request, from, to db.Backup, sec core.Secrets) (backup.DiffResult, bool, error) {
	ctx := r.Context()
	rules, err := u.Store.NoiseRules(ctx)
	if err != nil {
		return backup.DiffResult{}, false, err
	}
	res, err := backup.DiffMasked(ctx, u.Store, from.ID, to.ID, rules, sec.Keys)
	var bad *backup.NoiseRuleError
	if errors.As(err, &bad) {
		res, err = backup.DiffMasked(ctx, u.Store, from.ID, to.ID, nil, sec.Keys)
		return res, true, err
	}
	return res, false, err
}

// CSS classes of diff cells.
const (
	detailClassContext = "diff-ctx"
	detailClassRemoved = "diff-del"
	detailClassAdded   = "diff-add"
	detailClassEmpty   = "diff-none"
	detailClassNoise   = " diff-noise"
)

func detailCell(l backup.DiffLine, no int) detailDiffCell {
	c := detailDiffCell{No: no, Text: l.Text}
	switch l.Kind {
	case backup.LineRemoved:
		c.Class = detailClassRemoved
	case backup.LineAdded:
		c.Class = detailClassAdded
	default:
		c.Class = detailClassContext
	}
	if l.Noise {
		c.Class += detailClassNoise
	}
	return c
}

var detailEmptyCell = detailDiffCell{Class: detailClassEmpty}

// detailMarkPair marks, in a removed line and the added line beside it,
// the characters between their common beginning and common end: what
// changed within the line. Noise lines and lines with nothing in common
// are left whole.
func detailMarkPair(old, new *detailDiffCell, noise bool) {
	if noise {
		return
	}
	a, b := []rune(old.Text), []rune(new.Text)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	if pre+suf == 0 {
		return
	}
	split := func(c *detailDiffCell, r []rune) {
		if mid := r[pre : len(r)-suf]; len(mid) > 0 {
			c.Before, c.Mark, c.After = string(r[:pre]), string(mid), string(r[len(r)-suf:])
		}
	}
	split(old, a)
	split(new, b)
}

// detailHunkHeader is a hunk's "@@ -a,b +c,d @@" line, with the section
// its first change is in after it, as git writes it.
func detailHunkHeader(h backup.Hunk) string {
	out := "@@ -" + strconv.Itoa(h.OldStart) + "," + strconv.Itoa(h.OldLines) +
		" +" + strconv.Itoa(h.NewStart) + "," + strconv.Itoa(h.NewLines) + " @@"
	if h.Section != "" {
		out += " " + h.Section
	}
	return out
}

// detailSplitRows lays hunks out side by side, each after the gap of
// unchanged lines before it (gaps[i], when it has lines): context lines on both
// sides, and in each run of changes the removed lines on the left beside
// the added ones on the right, pair by pair. It stops at limit rows and
// returns how many diff lines it laid out, and whether any is noise.
func detailSplitRows(hunks []backup.Hunk, gaps []detailGap, limit int) (rows []detailDiffRow, shown int, noise bool) {
	for i, h := range hunks {
		if len(rows) >= limit {
			break
		}
		if row, ok := detailGapRow(gaps[i]); ok {
			rows = append(rows, row)
		}
		rows = append(rows, detailDiffRow{Header: detailHunkHeader(h)})
		lines := h.Lines
		for i := 0; i < len(lines) && len(rows) < limit; {
			l := lines[i]
			if l.Kind == backup.LineContext {
				rows = append(rows, detailDiffRow{Left: detailCell(l, l.OldNo), Right: detailCell(l, l.NewNo)})
				noise = noise || l.Noise
				shown++
				i++
				continue
			}
			end := i
			var removed, added []backup.DiffLine
			for end < len(lines) && lines[end].Kind != backup.LineContext {
				if lines[end].Kind == backup.LineRemoved {
					removed = append(removed, lines[end])
				} else {
					added = append(added, lines[end])
				}
				end++
			}
			pairs := min(max(len(removed), len(added)), limit-len(rows))
			for j := range pairs {
				row := detailDiffRow{Left: detailEmptyCell, Right: detailEmptyCell}
				if j < len(removed) {
					row.Left = detailCell(removed[j], removed[j].OldNo)
					noise = noise || removed[j].Noise
				}
				if j < len(added) {
					row.Right = detailCell(added[j], added[j].NewNo)
					noise = noise || added[j].Noise
				}
				if j < len(removed) && j < len(added) {
					detailMarkPair(&row.Left, &row.Right, removed[j].Noise || added[j].Noise)
				}
				rows = append(rows, row)
			}
			shown += min(pairs, len(removed)) + min(pairs, len(added))
			i = end
		}
	}
	return rows, shown, noise
}

// detailMarkUnified marks the changed characters of each run of removed
// lines and the added lines after it, paired in order, in rows laid out
// from lines (rows may stop short of lines at the limit).
func detailMarkUnified(rows []detailDiffRow, lines []backup.DiffLine) {
	for i := 0; i < len(rows); {
		if lines[i].Kind != backup.LineRemoved {
			i++
			continue
		}
		end := i
		for end < len(rows) && lines[end].Kind == backup.LineRemoved {
			end++
		}
		add := end
		for add < len(rows) && lines[add].Kind == backup.LineAdded {
			add++
		}
		for j := 0; i+j < end && end+j < add; j++ {
			detailMarkPair(&rows[i+j].Left, &rows[end+j].Left, lines[i+j].Noise || lines[end+j].Noise)
		}
		i = add
	}
}

// detailUnifiedRows lays hunks out one line a row, as diff -u shows them,
// each after its gap of unchanged lines, up to limit rows.
func detailUnifiedRows(hunks []backup.Hunk, gaps []detailGap, limit int) (rows []detailDiffRow, shown int, noise bool) {
	for i, h := range hunks {
		if len(rows) >= limit {
			break
		}
		if row, ok := detailGapRow(gaps[i]); ok {
			rows = append(rows, row)
		}
		rows = append(rows, detailDiffRow{Header: detailHunkHeader(h)})
		first := len(rows)
		for _, l := range h.Lines {
			if len(rows) >= limit {
				break
			}
			rows = append(rows, detailDiffRow{Left: detailCell(l, l.OldNo), Right: detailDiffCell{No: l.NewNo}})
			noise = noise || l.Noise
			shown++
		}
		detailMarkUnified(rows[first:], h.Lines)
	}
	return rows, shown, noise
}
