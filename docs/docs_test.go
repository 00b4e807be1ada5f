// Package docs holds backupd's documentation pages; its tests keep them
// whole: every relative link in README.md and docs/*.md leads to a file
// that exists and, with a #fragment, to a heading of that page; README.md
// links every page; and README.md's test command is the one CI runs.
// (The generated tables are checked where they are generated: the
// platform table by app/collect/driver's TestDocsPlatformTable.)
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// pages returns README.md and every docs/*.md, as paths from this
// directory.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 10 {
		t.Fatalf("only %d pages in docs/: %v", len(docs), docs)
	}
	return append([]string{"../README.md"}, docs...)
}

// link is one link found in a page.
type link struct {
	line   int
	target string
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan   = regexp.MustCompile("`[^`]*`")
	comment    = regexp.MustCompile(`(?s)<!--.*?-->`)
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^()\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	scheme     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	heading    = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// prose returns the page with code blocks, code spans and comments
// blanked out (newlines kept, so offsets still give line numbers): links
// and headings are only looked for in what a reader sees as text.
func prose(page string) string {
	lines := strings.Split(page, "\n")
	in := false
	for i, l := range lines {
		if fence.MatchString(l) {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	text := strings.Join(lines, "\n")
	blank := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, s)
	}
	text = comment.ReplaceAllStringFunc(text, blank)
	// Keep the code span's text out of link targets, but keep the
	// brackets around it: [`file`](target) stays a link.
	return codeSpan.ReplaceAllStringFunc(text, blank)
}

// links returns the links of a page, with their line numbers.
func links(page string) []link {
	text := prose(page)
	var out []link
	for _, re := range []*regexp.Regexp{inlineLink, refLink} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			out = append(out, link{
				line:   strings.Count(text[:m[0]], "\n") + 1,
				target: text[m[2]:m[3]],
			})
		}
	}
	return out
}

// anchors returns the fragments a page's headings (and HTML anchors)
// answer to, made as GitHub makes them: the heading's text without its
// markup, lower case, every character but letters, digits, spaces, '-' and
// '_' dropped, spaces as '-'; a repeated one gets -1, -2, ….
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	text := prose(page)
	// Headings may hold code spans: read their text from the page itself.
	lines, raw := strings.Split(text, "\n"), strings.Split(page, "\n")
	for i, l := range lines {
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		slug := slugify(heading.FindStringSubmatch(raw[i])[2])
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(page, -1) {
		out[m[1]] = true
	}
	return out
}

var linkMarkup = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

func slugify(title string) string {
	title = linkMarkup.ReplaceAllString(title, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestRelativeLinks follows every relative link of README.md and
// docs/*.md: the file must exist, and a #fragment must name a heading of
// the Markdown page it points into.
func TestRelativeLinks(t *testing.T) {
	pageAnchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := pageAnchors[path]; ok {
			return a, nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		pageAnchors[path] = anchors(string(raw))
		return pageAnchors[path], nil
	}
	checked := 0
	for _, page := range pages(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(raw)) {
			if l.target == "" || scheme.MatchString(l.target) || strings.HasPrefix(l.target, "//") {
				continue // a web address, not a file of the repository
			}
			checked++
			where := fmt.Sprintf("%s:%d: link %q", strings.TrimPrefix(page, "../"), l.line, l.target)
			file, fragment, _ := strings.Cut(l.target, "#")
			path := page
			if file != "" {
				if filepath.IsAbs(file) {
					t.Errorf("%s: an absolute path; link relative to the page", where)
					continue
				}
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: no such file (%s)", where, path)
					continue
				}
			}
			if fragment == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				t.Errorf("%s: a #fragment into a file that is not a Markdown page", where)
				continue
			}
			a, err := anchorsOf(path)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if !a[fragment] {
				t.Errorf("%s: %s has no heading #%s", where, path, fragment)
			}
		}
	}
	t.Logf("%d relative links checked", checked)
	if checked < 30 {
		t.Errorf("only %d relative links found: the link finder is broken", checked)
	}
}

// TestREADMELinksEveryPage keeps README.md the door to every page of
// docs/: a page it does not link is a page nobody finds.
func TestREADMELinksEveryPage(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var linked []string
	for _, l := range links(string(raw)) {
		file, _, _ := strings.Cut(l.target, "#")
		linked = append(linked, filepath.Clean(file))
	}
	for _, page := range pages(t)[1:] {
		if !slices.Contains(linked, filepath.Join("docs", page)) {
			t.Errorf("README.md does not link docs/%s", page)
		}
	}
}

// TestREADMETestCommandIsCIs: CI runs the README's test command last,
// so that what a newcomer runs is what CI proves.
func TestREADMETestCommandIsCIs(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, setup, ok := strings.Cut(string(readme), "\n## Set up\n")
	if !ok {
		t.Fatal("README.md has no Set up section")
	}
	setup, _, _ = strings.Cut(setup, "\n## ")
	var readmeCmd string
	for _, l := range strings.Split(setup, "\n") {
		if cmd, comment, ok := strings.Cut(l, "#"); ok && strings.TrimSpace(comment) == "test" {
			readmeCmd = strings.TrimSpace(cmd)
		}
	}
	if !strings.HasPrefix(readmeCmd, "go test ") {
		t.Fatalf("README.md's Set up has no `go test … # test` line (found %q)", readmeCmd)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for _, l := range strings.Split(string(ci), "\n") {
		if l = strings.TrimSpace(l); strings.Contains(l, "go test ") && !strings.HasPrefix(l, "#") {
			last = l
		}
	}
	// CI may clear variables of its own (env -u NAME) before the command.
	ciCmd := last
	for strings.HasPrefix(ciCmd, "env -u ") {
		f := strings.Fields(ciCmd)
		ciCmd = strings.Join(f[3:], " ")
	}
	if ciCmd != readmeCmd {
		t.Errorf(".ci/run's last go test is %q, README.md's test command %q: keep them the same", last, readmeCmd)
	}
}
