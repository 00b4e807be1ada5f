package backup

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"backupd/app/redact"
	"backupd/db"
)

// Search limits. Every bound keeps one search's work and answer small
// whatever the fleet: hits stop at the limit, one version contributes at
// most MaxHitsPerVersion lines, and a hit's line is cut around its match.
const (
	DefaultSearchLimit = 500
	MaxSearchLimit     = 5000
	MaxHitsPerVersion  = 100
	MaxSearchQuery     = 1000
	MaxHitLine         = 1000 // bytes of a hit's Line
	maxMatchesPerLine  = 50
)

// SearchOptions is one search over configuration text. Query is a
// substring, or with Regex a Go (RE2) regular expression, matched line by
// line; matching ignores case unless CaseSensitive (an ASCII substring
// folds ASCII letters; expressions and other substrings fold Unicode). The search reads each
// device's latest good version, or with AllVersions every distinct
// version it has had. Limit bounds the hits (0: DefaultSearchLimit).
type SearchOptions struct {
	Query         string
	Regex         bool
	CaseSensitive bool
	AllVersions   bool
	Limit         int
	// Mask, when set, masks each text's secrets before it is searched
	// (app/redact): a secret's value then matches nothing, and the lines
	// reported are masked.
	Mask *redact.Keyring
}

// SearchHit is one matching line. LineNo counts from 1 in the version's
// text; Matches are the byte ranges [start, end) of the matches in Line,
// for highlighting. A line longer than MaxHitLine is cut to a window
// around its first match.
type SearchHit struct {
	DeviceID   int64
	DeviceName string
	BackupID   string
	StartedAt  time.Time
	LineNo     int
	Line       string
	Matches    [][2]int
}

// SearchResult holds the hits in device-name order, then line order (with
// AllVersions, a device's newer versions first). Truncated reports that
// more lines matched than are listed: the limit was reached, or a version
// had more than MaxHitsPerVersion matching lines.
type SearchResult struct {
	Hits      []SearchHit
	Truncated bool
}

// ErrInvalidQuery is a query that cannot run: empty, too long, or a bad
// regular expression. The message says why.
var ErrInvalidQuery = errors.New("invalid search query")

// Search finds lines of configuration text in the devices of scope.
// Regular expressions are RE2 (linear time, no backtracking), so no query
// can make a search run away; a search stops when ctx is done.
func Search(ctx context.Context, store *db.Store, scope db.Scope, opts SearchOptions) (SearchResult, error) {
	res := SearchResult{Hits: []SearchHit{}}
	m, err := newMatcher(opts)
	if err != nil {
		return res, err
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)

	// Hits per snapshot: a snapshot several devices (or versions) share is
	// decompressed and scanned once. The cache is bounded by the hits
	// reported so far plus one version's cap.
	type scanned struct {
		hits      []lineHit
		truncated bool
	}
	seen := map[string]scanned{}
	for v, err := range store.SearchVersions(ctx, scope, opts.AllVersions) {
		if err != nil {
			return res, err
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		// A masked text is the device's own: its tags are keyed by it.
		key := v.SnapshotHash
		if opts.Mask != nil {
			key += "|" + strconv.FormatInt(v.DeviceID, 10)
		}
		sc, ok := seen[key]
		if !ok {
			text, err := v.Text()
			if err != nil {
				return res, fmt.Errorf("search: version %s of %s: %w", v.BackupID, v.DeviceName, err)
			}
			if opts.Mask != nil {
				text = opts.Mask.Device(v.DeviceID, v.Platform).Text(text)
			}
			sc.hits, sc.truncated, err = m.scan(ctx, text)
			if err != nil {
				return res, err
			}
			seen[key] = sc
		}
		res.Truncated = res.Truncated || sc.truncated
		for _, h := range sc.hits {
			if len(res.Hits) == limit {
				res.Truncated = true
				return res, nil
			}
			res.Hits = append(res.Hits, SearchHit{
				DeviceID: v.DeviceID, DeviceName: v.DeviceName, BackupID: v.BackupID, StartedAt: v.StartedAt,
				LineNo: h.lineNo, Line: h.line, Matches: h.matches,
			})
		}
	}
	return res, nil
}

// lineHit is a matching line of one text.
type lineHit struct {
	lineNo  int
	line    string
	matches [][2]int
}

// matcher finds the matching lines of a text. It searches the whole text
// for the next place a match can be (a substring search, or a regular
// expression run across lines) and only then looks at the line holding it,
// so that lines without a match cost next to nothing.
type matcher struct {
	// candidates prepares a text: the function it returns gives the
	// offset of the first place at or after from where a line can match,
	// or -1.
	candidates func(text string) func(from int) int
	// line returns the non-empty matches in one line.
	line func(line string) [][2]int
}

// indexFrom is a candidates function finding lit in hay, which has the
// offsets of the text.
func indexFrom(hay, lit string) func(int) int {
	return func(from int) int {
		if i := strings.Index(hay[from:], lit); i >= 0 {
			return from + i
		}
		return -1
	}
}

func newMatcher(o SearchOptions) (*matcher, error) {
	q := o.Query
	switch {
	case q == "":
		return nil, fmt.Errorf("%w: the query is empty", ErrInvalidQuery)
	case len(q) > MaxSearchQuery:
		return nil, fmt.Errorf("%w: the query is longer than %d characters", ErrInvalidQuery, MaxSearchQuery)
	case strings.Contains(q, "\n"):
		return nil, fmt.Errorf("%w: the query spans lines; lines are searched one at a time", ErrInvalidQuery)
	}
	if !o.Regex && o.CaseSensitive {
		return &matcher{
			candidates: func(text string) func(int) int { return indexFrom(text, q) },
			line:       substringMatches(q),
		}, nil
	}
	if !o.Regex && isASCII(q) {
		lq := asciiLower(q)
		find := substringMatches(lq)
		return &matcher{
			candidates: func(text string) func(int) int { return indexFrom(asciiLower(text), lq) },
			line:       func(line string) [][2]int { return find(asciiLower(line)) },
		}, nil
	}
	pattern := q
	if !o.Regex {
		pattern = regexp.QuoteMeta(q)
	}
	// Checked as typed first, so that an error quotes the user's
	// expression, not the case-folding one.
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidQuery, unwrapSyntax(err))
	}
	if !o.CaseSensitive {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidQuery, unwrapSyntax(err))
	}
	if re.MatchString("") {
		return nil, fmt.Errorf("%w: the expression matches empty text, so it would match every line", ErrInvalidQuery)
	}
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidQuery, unwrapSyntax(err))
	}
	// Across lines, the same expression with ^ and $ at line ends finds
	// every line's match, or an earlier place; only \A and \z mean
	// something else there, and then every line is tried.
	var whole *regexp.Regexp
	if !usesTextEnds(tree) {
		whole, _ = regexp.Compile("(?m)" + pattern)
	}
	lit, fold := requiredLiteral(tree)
	return &matcher{
		candidates: func(text string) func(int) int {
			switch {
			// A line can only match where a literal every match holds is:
			// a substring search finds it much faster than the expression.
			// Folding bytes is exact on ASCII text only.
			case lit != "" && !fold:
				return indexFrom(text, lit)
			case lit != "" && isASCII(text):
				return indexFrom(asciiLower(text), lit)
			case whole != nil:
				return func(from int) int {
					if loc := whole.FindStringIndex(text[from:]); loc != nil {
						return from + loc[0]
					}
					return -1
				}
			}
			return func(from int) int { return from }
		},
		line: func(line string) [][2]int {
			var out [][2]int
			for _, r := range re.FindAllStringIndex(line, maxMatchesPerLine) {
				if r[1] > r[0] {
					out = append(out, [2]int{r[0], r[1]})
				}
			}
			return out
		},
	}, nil
}

// minLiteral is the shortest required literal worth a substring search.
const minLiteral = 3

// requiredLiteral returns the longest literal every match of re contains
// (in lower case when it is matched ignoring case), or "" when none is
// long enough, or when it is not plain ASCII under case folding.
func requiredLiteral(re *syntax.Regexp) (lit string, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		lit, fold = string(re.Rune), re.Flags&syntax.FoldCase != 0
		if fold {
			if !isASCII(lit) {
				return "", false
			}
			lit = asciiLower(lit)
		}
		if len(lit) < minLiteral {
			return "", false
		}
		return lit, fold
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if l, f := requiredLiteral(sub); len(l) > len(lit) {
				lit, fold = l, f
			}
		}
		return lit, fold
	}
	return "", false
}

func usesTextEnds(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, sub := range re.Sub {
		if usesTextEnds(sub) {
			return true
		}
	}
	return false
}

func substringMatches(q string) func(string) [][2]int {
	return func(line string) [][2]int {
		var out [][2]int
		for off := 0; len(out) < maxMatchesPerLine; {
			i := strings.Index(line[off:], q)
			if i < 0 {
				break
			}
			out = append(out, [2]int{off + i, off + i + len(q)})
			off += i + len(q)
		}
		return out
	}
}

// scan returns text's matching lines, at most MaxHitsPerVersion of them,
// and whether there were more.
func (m *matcher) scan(ctx context.Context, text string) ([]lineHit, bool, error) {
	next := m.candidates(text)
	var hits []lineHit
	lineNo := 1 // the line starting at pos
	for pos, n := 0, 0; pos < len(text); n++ {
		if n%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
		}
		at := next(pos)
		if at < 0 {
			break
		}
		start := pos
		if i := strings.LastIndexByte(text[pos:at], '\n'); i >= 0 {
			start = pos + i + 1
		}
		end := len(text)
		if i := strings.IndexByte(text[at:], '\n'); i >= 0 {
			end = at + i
		}
		lineNo += strings.Count(text[pos:start], "\n")
		if matches := m.line(text[start:end]); len(matches) > 0 {
			if len(hits) == MaxHitsPerVersion {
				return hits, true, nil
			}
			line, matches := clipLine(text[start:end], matches)
			hits = append(hits, lineHit{lineNo: lineNo, line: line, matches: matches})
		}
		pos = end + 1
		lineNo++
	}
	return hits, false, nil
}

// clipLine cuts a line longer than MaxHitLine to a window that starts a
// little before its first match, keeping the matches inside it.
func clipLine(line string, matches [][2]int) (string, [][2]int) {
	if len(line) <= MaxHitLine {
		return line, matches
	}
	from := max(matches[0][0]-MaxHitLine/5, 0)
	for from > 0 && !utf8.RuneStart(line[from]) {
		from--
	}
	to := min(from+MaxHitLine, len(line))
	for to < len(line) && to > from && !utf8.RuneStart(line[to]) {
		to--
	}
	var kept [][2]int
	for _, r := range matches {
		if r[0] >= to {
			break
		}
		kept = append(kept, [2]int{r[0] - from, min(r[1], to) - from})
	}
	return line[from:to], kept
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiLower folds ASCII letters only, so offsets stay those of s.
func asciiLower(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
