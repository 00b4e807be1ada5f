package overview

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"backupd/app/backup"
	"backupd/db"
	"backupd/web/ui/core"
)

// The search's results as the page lays them out: per device, per
// version, the matching lines with their context.

// searchDevice is one device's matches.
type searchDevice struct {
	ID       int64
	Name     string
	Hits     int
	Versions []searchVersion
	// MoreVersions is how many more of its versions match.
	MoreVersions int
}

// searchVersion is one version's matches, with context.
type searchVersion struct {
	BackupID  string
	URL       string
	StartedAt time.Time
	Hits      int
	Rows      []searchRow
	// MoreLines is how many more of its lines match than are shown.
	MoreLines int
	hits      []backup.SearchHit
}

// searchRow is a line of a version as shown: a matching line with its
// matches marked, a line of context, or a gap between the two.
type searchRow struct {
	LineNo   int
	Hit      bool
	Gap      bool
	Segments []textSegment
}

// textSegment is a piece of a line; Mark pieces are a match. The
// template writes each piece escaped, inside <mark> when marked.
type textSegment struct {
	Text string
	Mark bool
}

// groupHits gathers the hits (in device-name order, a device's versions
// newest first) per device and version, keeping the lines each version
// shows.
func groupHits(hits []backup.SearchHit) []searchDevice {
	var out []searchDevice
	version, skip := "", false // the version of the previous hit; whether it is beyond the cap
	for _, h := range hits {
		if len(out) == 0 || out[len(out)-1].ID != h.DeviceID {
			out = append(out, searchDevice{ID: h.DeviceID, Name: h.DeviceName})
			version = ""
		}
		d := &out[len(out)-1]
		d.Hits++
		if h.BackupID != version {
			version, skip = h.BackupID, len(d.Versions) == searchVersionsPerDevice
			if skip {
				d.MoreVersions++
			} else {
				d.Versions = append(d.Versions, searchVersion{
					BackupID: h.BackupID, StartedAt: h.StartedAt,
					URL: core.VersionPath(h.DeviceID, h.BackupID),
				})
			}
		}
		if skip {
			continue
		}
		v := &d.Versions[len(d.Versions)-1]
		v.Hits++
		if len(v.hits) < searchLinesPerVersion {
			v.hits = append(v.hits, h)
		} else {
			v.MoreLines++
		}
	}
	return out
}

// versionLines returns the lines of a version's text for context, read
// once per snapshot a page shows; nil without context or when the
// version is gone (a retention purge since the search).
func (u *handlers) versionLines(ctx context.Context, backupID string, context int, cache map[string][]string, sec core.Secrets) ([]string, error) {
	if context == 0 {
		return nil, nil
	}
	b, err := u.Store.GetBackup(ctx, backupID)
	if errors.Is(err, db.ErrNotFound) || (err == nil && b.SnapshotHash == nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Masked lines are the device's own: its tags are keyed by it.
	key := *b.SnapshotHash + "|" + strconv.FormatInt(b.DeviceID, 10)
	if lines, ok := cache[key]; ok {
		return lines, nil
	}
	text, err := u.Store.SnapshotText(ctx, *b.SnapshotHash)
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if sec.Keys != nil {
		d, err := u.Store.GetDevice(ctx, b.DeviceID)
		if errors.Is(err, db.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		text = sec.Mask(d.ID, d.Platform, text)
	}
	// A final newline ends the last line; it does not start another.
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	cache[key] = lines
	return lines, nil
}

// searchRows lays out a version's shown hits with up to context lines
// around each (from lines, the version's text, when known); windows that
// touch merge, and a gap row separates those that do not.
func searchRows(hits []backup.SearchHit, lines []string, context int) []searchRow {
	byLine := map[int]backup.SearchHit{}
	for _, h := range hits {
		byLine[h.LineNo] = h
	}
	var rows []searchRow
	last := 0 // the last line number laid out
	for _, h := range hits {
		from, to := h.LineNo, h.LineNo
		if lines != nil && h.LineNo <= len(lines) {
			from, to = max(h.LineNo-context, 1), min(h.LineNo+context, len(lines))
		}
		from = max(from, last+1)
		if last > 0 && from > last+1 {
			rows = append(rows, searchRow{Gap: true})
		}
		for n := from; n <= to; n++ {
			if hit, ok := byLine[n]; ok {
				rows = append(rows, searchRow{LineNo: n, Hit: true, Segments: markSegments(hit.Line, hit.Matches)})
			} else {
				rows = append(rows, searchRow{LineNo: n, Segments: []textSegment{{Text: clipText(lines[n-1])}}})
			}
		}
		last = max(last, to)
	}
	return rows
}

// markSegments cuts line at the match ranges into plain and marked
// pieces. Ranges out of order, overlapping or out of bounds are skipped,
// and bytes that are not UTF-8 show as U+FFFD.
func markSegments(line string, matches [][2]int) []textSegment {
	var out []textSegment
	add := func(s string, mark bool) {
		if s != "" {
			out = append(out, textSegment{Text: strings.ToValidUTF8(s, "\uFFFD"), Mark: mark})
		}
	}
	pos := 0
	for _, m := range matches {
		start, end := m[0], m[1]
		if start < pos || end <= start || end > len(line) {
			continue
		}
		add(line[pos:start], false)
		add(line[start:end], true)
		pos = end
	}
	add(line[pos:], false)
	return out
}

// clipText cuts a context line to the length a matching line is cut to,
// on a character boundary.
func clipText(s string) string {
	if len(s) > backup.MaxHitLine {
		cut := backup.MaxHitLine
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
