package restore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"backupd/app/backup"
	"backupd/app/collect/driver"
	"backupd/db"
)

// mergeLines is the restore of platforms without a safe full replace
// (classic IOS, NX-OS): only the lines a person selected from the version
// are typed in configuration mode, each after the parent lines that
// place it (by indentation: "interface Gi0/1" before " description
// uplink"), as a paste of those lines would be. It is NOT a full replace:
// lines not selected, and lines the device has that the version lacks,
// stay as they are, and the pages say so wherever the restore shows.
//
// It stops at the first line the device refuses and leaves configuration
// mode; it saves only when every line went in. There is no undo: the
// device has no timer and a merge has no "before" to go back to line by
// line, so a refusal or a failed verification ends the restore failed,
// saying which lines were sent, never "rolled back".
type mergeLines struct{}

// Apply types target (the plan's lines, MergePlan) in configuration
// mode and saves. Applied.Sent counts the lines the device took, also
// when it refused one.
func (mergeLines) Apply(ctx context.Context, s Session, p driver.Platform, running, target string) (Applied, error) {
	var a Applied
	for _, cmd := range p.Restore.ConfigEnter {
		if out, err := s.Send(ctx, cmd, p.Restore.ApplyError); err != nil {
			return a, &UntouchedError{Err: lineErr(ctx, cmd, out, err, p)}
		}
	}
	for _, line := range planLines(target) {
		out, err := s.Send(ctx, line, p.Restore.ApplyError)
		if err != nil {
			if isLost(ctx, err) {
				return a, err
			}
			// Out of configuration mode, unsaved: what went in stays
			// in the running configuration only.
			for _, cmd := range p.Restore.ConfigExit {
				_, _ = s.Send(ctx, cmd, nil)
			}
			return a, refused(line, out, p.Restore.ApplyError)
		}
		a.Sent++
	}
	a.Passes = 1
	for _, cmd := range p.Restore.ConfigExit {
		if out, err := s.Send(ctx, cmd, p.Restore.ApplyError); err != nil {
			return a, lineErr(ctx, cmd, out, err, p)
		}
	}
	for _, cmd := range p.Restore.Save {
		if out, err := s.Send(ctx, cmd, p.Restore.ApplyError); err != nil {
			return a, &SaveError{Err: lineErr(ctx, cmd, out, err, p)}
		}
	}
	return a, nil
}

// Push sends a change set's lines as a merge sends a restore's: in
// configuration mode, stopping at the first line the device refuses
// (out of configuration mode, unsaved), saved once every line went in.
// The dry run has refused lines a merge cannot type (Blocks).
func (m mergeLines) Push(ctx context.Context, s Session, p driver.Platform, lines []string) error {
	_, err := m.Apply(ctx, s, p, "", strings.Join(lines, "\n"))
	if u, ok := errors.AsType[*UntouchedError](err); ok {
		return u.Err
	}
	return err
}

// Keep has nothing left to do: Apply saved once every line went in.
func (mergeLines) Keep(context.Context, Session, driver.Platform) error { return nil }

// Undo refuses: a merge is never rolled back (the runner does not ask).
func (mergeLines) Undo(context.Context, Session, driver.Platform, string, string) (Applied, error) {
	return Applied{}, errMergeNoUndo
}

var errMergeNoUndo = errors.New("a merge of selected lines cannot be undone")

// Same reports whether configuration a holds every line of plan b under
// its parents, noise ignored: the lines a has beyond them do not count.
func (mergeLines) Same(p driver.Platform, a, b string) bool {
	return len(MissingLines(p, a, b)) == 0
}

// SaveError is a save that failed after every line went in.
type SaveError struct{ Err error }

func (e *SaveError) Error() string { return "saving the configuration: " + e.Err.Error() }
func (e *SaveError) Unwrap() error { return e.Err }

// Merges reports whether platform p restores by a merge of selected
// lines (driver.RestoreMethod.Replaces false) rather than a full replace.
func Merges(p driver.Platform) bool {
	m, ok := driver.LookupRestoreMethod(p.Restore.Method)
	return ok && p.CanRestore() && !m.Replaces
}

// MergeLine is one line a merge types: Number is its line in the version
// (from 1), Parent that it is sent only to place a selected line below
// it.
type MergeLine struct {
	Number int
	Text   string
	Parent bool
}

// Sendable reports whether a line of a version is configuration a merge
// can type: not blank, not one of the platform's Restore.Drop lines
// (comments, the show command's banner, "end").
func Sendable(p driver.Platform, line string) bool {
	return sendable(drops(p), line)
}

func drops(p driver.Platform) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(p.Restore.Drop))
	for i, d := range p.Restore.Drop {
		out[i] = regexp.MustCompile(d) // checked at registration
	}
	return out
}

func sendable(drop []*regexp.Regexp, line string) bool {
	if strings.TrimSpace(line) == "" {
		return false
	}
	for _, re := range drop {
		if re.MatchString(line) {
			return false
		}
	}
	return true
}

// mergeText is a text's lines as a merge sees them: which it can type,
// the parent of each (by indentation), and the blocks it cannot type
// line by line.
type mergeText struct {
	lines []string
	ok    []bool
	// parent[i] is the line number of line i+1's parent, 0 for none.
	parent []int
	blocks []Block
	// block[i] is the index in blocks of line i+1's block, -1 for none.
	block []int
}

func newMergeText(p driver.Platform, text string) mergeText {
	m := mergeText{lines: versionLines(text)}
	drop := drops(p)
	m.ok, m.parent = make([]bool, len(m.lines)), make([]int, len(m.lines))
	m.blocks, m.block = findBlocks(m.lines)
	var stack []int // line numbers of open parents, indentation rising
	for i, l := range m.lines {
		if m.ok[i] = sendable(drop, l); !m.ok[i] || m.block[i] >= 0 {
			// A block's lines are never a parent: a banner's text
			// indented by a space is not a submode.
			continue
		}
		ind := indentOf(l)
		for len(stack) > 0 && indentOf(m.lines[stack[len(stack)-1]-1]) >= ind {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			m.parent[i] = stack[len(stack)-1]
		}
		stack = append(stack, i+1)
	}
	return m
}

// parents are line n's parents, outermost first.
func (m mergeText) parents(n int) []int {
	var out []int
	for a := m.parent[n-1]; a > 0; a = m.parent[a-1] {
		out = append(out, a)
	}
	slices.Reverse(out)
	return out
}

// Block is a run of lines of a version that a merge cannot type line by
// line, From to To (line numbers, inclusive): a banner, whose text runs
// between two delimiters over several lines (IOS shows the delimiter as
// "^C" whatever was typed, so even a banner on one line cannot be typed
// back as shown); a certificate of a "crypto pki certificate chain" or
// a key's "key-string", whose hexadecimal lines end with "quit"; a
// switch macro ("macro name"), whose lines end with "@". Typed line by
// line, each of these would be a broken block or a different one, so a
// selection that touches one is refused and "select all" leaves it out.
type Block struct {
	From, To int
	// Kind is "banner", "certificate", "key" or "macro".
	Kind string
}

// Reason is why the block cannot be merged, a sentence for the person
// who selected it.
func (b Block) Reason() string {
	switch b.Kind {
	case BlockBanner:
		return "a banner spans several lines and cannot be merged line by line; set it by hand"
	case BlockCertificate:
		return `a certificate's hexadecimal lines end with "quit" and cannot be merged line by line; enroll or import the certificate by hand`
	case BlockKey:
		return `a key's hexadecimal lines end with "quit" and cannot be merged line by line; enter the key by hand`
	default:
		return `a macro's lines end with "@" and cannot be merged line by line; set it by hand`
	}
}

// Lines names the block's lines: "line 7" or "lines 7-12".
func (b Block) Lines() string {
	if b.From == b.To {
		return fmt.Sprintf("line %d", b.From)
	}
	return fmt.Sprintf("lines %d-%d", b.From, b.To)
}

// The kinds of Block.
const (
	BlockBanner      = "banner"
	BlockCertificate = "certificate"
	BlockKey         = "key"
	BlockMacro       = "macro"
)

// Blocks are the blocks of version a merge cannot type line by line.
func Blocks(p driver.Platform, version string) []Block {
	return newMergeText(p, version).blocks
}

// AllLines are the lines of version "select all" takes: every
// configuration line outside the blocks (Blocks), which it leaves out
// rather than fail.
func AllLines(p driver.Platform, version string) []int {
	m := newMergeText(p, version)
	var out []int
	for i := range m.lines {
		if m.ok[i] && m.block[i] < 0 {
			out = append(out, i+1)
		}
	}
	return out
}

// bannerLine is a banner's first line: "banner motd ^C", "banner
// login ^CText", "banner #Text#" (the type is optional, motd then).
var bannerLine = regexp.MustCompile(`^banner(?:\s+(?:motd|login|exec|incoming|slip-ppp|prompt-timeout|config-save))?\s+(\S.*)$`)

// findBlocks finds the blocks of lines and, for each line, the index of
// its block (-1 for none). A block whose end is missing runs to the
// last line: better a block too long than a half banner sent.
func findBlocks(lines []string) ([]Block, []int) {
	var blocks []Block
	in := make([]int, len(lines))
	for i := range in {
		in[i] = -1
	}
	var chain bool // inside "crypto pki certificate chain"
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\r")
		t := strings.TrimSpace(l)
		ind := indentOf(l)
		if ind == 0 && t != "" {
			chain = strings.HasPrefix(t, "crypto pki certificate chain ") || strings.HasPrefix(t, "crypto ca certificate chain ")
		}
		end, kind := -1, ""
		switch {
		case ind == 0 && bannerLine.MatchString(l):
			kind, end = BlockBanner, bannerEnd(lines, i, bannerLine.FindStringSubmatch(l)[1])
		case ind > 0 && chain && strings.HasPrefix(t, "certificate "):
			kind, end = BlockCertificate, hexEnd(lines, i)
		case ind > 0 && t == "key-string":
			kind, end = BlockKey, hexEnd(lines, i)
		case ind == 0 && strings.HasPrefix(t, "macro name "):
			kind, end = BlockMacro, len(lines)-1
			for j := i + 1; j < len(lines); j++ {
				if strings.TrimSpace(lines[j]) == "@" {
					end = j
					break
				}
			}
		}
		if kind == "" {
			continue
		}
		for j := i; j <= end; j++ {
			in[j] = len(blocks)
		}
		blocks = append(blocks, Block{From: i + 1, To: end + 1, Kind: kind})
		i = end
	}
	return blocks, in
}

// bannerEnd is the index of a banner's last line: the line with the
// closing delimiter, which is the first character of rest, or "^C" (how
// IOS shows any delimiter).
func bannerEnd(lines []string, i int, rest string) int {
	delim := rest[:1]
	if strings.HasPrefix(rest, "^C") {
		delim = "^C"
	}
	if strings.Contains(rest[len(delim):], delim) {
		return i
	}
	for j := i + 1; j < len(lines); j++ {
		if strings.Contains(lines[j], delim) {
			return j
		}
	}
	return len(lines) - 1
}

// hexEnd is the index of the last line of a certificate or key-string
// that starts at line i: its "quit", or, without one, its last
// hexadecimal line (IOS also shows a certificate by reference on one
// line, "certificate ca 01 nvram:…", which is a block of itself).
func hexEnd(lines []string, i int) int {
	end := i
	for j := i + 1; j < len(lines); j++ {
		t := strings.TrimSpace(lines[j])
		switch {
		case t == "quit":
			return j
		case t == "":
		case indentOf(lines[j]) > indentOf(lines[i]) && isHexLine(t):
			end = j
		default:
			return end
		}
	}
	return end
}

func isHexLine(t string) bool {
	for _, r := range t {
		if !strings.ContainsRune("0123456789ABCDEFabcdef \t", r) {
			return false
		}
	}
	return true
}

// MaxSelected bounds a selection.
const MaxSelected = 20000

// Selection checks the line numbers a person selected from version for a
// merge and returns them sorted, once each, without the lines that are
// not configuration (blank, comments): a selection of whole ranges
// ("select all") needs no care. Numbers outside the version, a line of
// a block that cannot be typed line by line (Blocks: a banner, a
// certificate), and a selection with no configuration line in it are
// refused with a sentence that names the lines.
func Selection(p driver.Platform, version string, selected []int) ([]int, error) {
	m := newMergeText(p, version)
	if len(selected) == 0 {
		return nil, ErrNoSelection
	}
	if len(selected) > MaxSelected {
		return nil, &db.ErrInvalidField{Field: "lines", Message: fmt.Sprintf("at most %d lines", MaxSelected)}
	}
	out := make([]int, 0, len(selected))
	touched := map[int]bool{}
	for _, n := range selected {
		if n < 1 || n > len(m.lines) {
			return nil, &db.ErrInvalidField{Field: "lines",
				Message: fmt.Sprintf("line %d is not in the version, which has %d lines", n, len(m.lines))}
		}
		if b := m.block[n-1]; b >= 0 {
			touched[b] = true
			continue
		}
		if m.ok[n-1] {
			out = append(out, n)
		}
	}
	if len(touched) > 0 {
		var why []string
		for i, b := range m.blocks {
			if touched[i] {
				why = append(why, fmt.Sprintf("%s %s: %s", b.Lines(), are(b), b.Reason()))
			}
		}
		return nil, &db.ErrInvalidField{Field: "lines", Message: strings.Join(why, "; ") +
			" (leave these lines out of the selection)"}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		return nil, &db.ErrInvalidField{Field: "lines",
			Message: "the selected lines are blank lines or comments; select configuration lines"}
	}
	return out, nil
}

// are is "is a banner" or "are a banner", as the block's lines are one
// or several.
func are(b Block) string {
	if b.From == b.To {
		return "is a " + b.Kind
	}
	return "are a " + b.Kind
}

// ErrNoSelection refuses a merge without lines.
var ErrNoSelection = errors.New("this device's platform cannot replace its whole configuration: " +
	"select the lines of the version to merge (a merge, not a full replace)")

// ErrSelectionNotMerge refuses lines for a platform that replaces.
var ErrSelectionNotMerge = errors.New("this device's platform replaces the whole configuration: " +
	"a restore puts back the whole version, so lines cannot be selected")

// MergePlan is what a merge of the selected lines of version types, in
// order: each selected line after its parent lines (the nearest line
// above it with less indentation, and so on up), each parent once. The
// selection is Selection's.
func MergePlan(p driver.Platform, version string, selected []int) []MergeLine {
	m := newMergeText(p, version)
	lines := m.lines
	sel := map[int]bool{}
	for _, n := range selected {
		sel[n] = true
	}
	sent := map[int]bool{}
	var out []MergeLine
	for _, n := range selected {
		if n < 1 || n > len(lines) || !m.ok[n-1] || m.block[n-1] >= 0 || sent[n] {
			continue
		}
		for _, a := range m.parents(n) {
			if !sent[a] {
				sent[a] = true
				out = append(out, MergeLine{Number: a, Text: strings.TrimRight(lines[a-1], " \t\r"), Parent: !sel[a]})
			}
		}
		sent[n] = true
		out = append(out, MergeLine{Number: n, Text: strings.TrimRight(lines[n-1], " \t\r")})
	}
	return out
}

// PlanText is a plan as the runner applies and verifies it.
func PlanText(plan []MergeLine) string {
	var b strings.Builder
	for _, l := range plan {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " \t")) }

func versionLines(text string) []string {
	return strings.Split(strings.TrimSuffix(strings.ReplaceAll(text, "\r\n", "\n"), "\n"), "\n")
}

func planLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// MissingLines are the lines of plan that configuration lacks at their
// place (under the same parents), noise ignored on both sides.
func MissingLines(p driver.Platform, configuration, plan string) []string {
	f, err := backup.NewNoiseFilter(p.ID, nil)
	if err != nil {
		f = nil
	}
	have := map[string]bool{}
	for _, path := range linePaths(p, f.Strip(configuration)) {
		have[path.key] = true
	}
	var missing []string
	for _, path := range linePaths(p, f.Strip(plan)) {
		if !have[path.key] {
			missing = append(missing, path.line)
		}
	}
	return missing
}

type linePath struct{ key, line string }

// linePaths names each configuration line of text by itself and its
// parents.
func linePaths(p driver.Platform, text string) []linePath {
	m := newMergeText(p, text)
	var out []linePath
	for i, l := range m.lines {
		if !m.ok[i] || m.block[i] >= 0 {
			continue
		}
		var key strings.Builder
		for _, a := range m.parents(i + 1) {
			key.WriteString(strings.TrimSpace(m.lines[a-1]))
			key.WriteByte(0)
		}
		key.WriteString(strings.TrimSpace(l))
		out = append(out, linePath{key: key.String(), line: strings.TrimSpace(l)})
	}
	return out
}
