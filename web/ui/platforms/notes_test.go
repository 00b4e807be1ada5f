package platforms

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"backupd/app/collect/driver"
	"backupd/embed"
)

// quotedRE finds what a note quotes: commands, paths and privileges,
// which a translation keeps as written.
var quotedRE = regexp.MustCompile("\"[^\"]+\"|`[^`]+`")

// Every built-in platform's note has a translation in each notes file, of
// the note as it is now; the quoted commands are kept; no file names a
// platform that is not built in.
func TestPlatformNotesTranslated(t *testing.T) {
	for _, lang := range noteLangs {
		raw, err := embed.I18n.ReadFile("i18n/platforms." + lang + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]noteTranslation
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("platforms.%s.json: %v", lang, err)
		}
		for _, p := range driver.Builtins() {
			if p.Notes == "" {
				continue
			}
			tr, ok := m[p.ID]
			switch {
			case !ok:
				t.Errorf("%s: %s's note has no translation", lang, p.ID)
				continue
			case tr.EN != p.Notes:
				t.Errorf("%s: %s's note changed since it was translated; translate it again and copy the new English into \"en\"", lang, p.ID)
			case !strings.ContainsFunc(tr.Text, func(r rune) bool { return unicode.Is(unicode.Han, r) }):
				t.Errorf("%s: %s's translation %q is not in the language", lang, p.ID, tr.Text)
			}
			for _, q := range quotedRE.FindAllString(p.Notes, -1) {
				if !strings.Contains(tr.Text, q) {
					t.Errorf("%s: %s's translation lost %s", lang, p.ID, q)
				}
			}
		}
		for id := range m {
			if !driver.IsBuiltin(id) {
				t.Errorf("%s: platforms.%s.json translates %s, which is no built-in platform", lang, lang, id)
			}
		}
	}
}

// A translation shows only for the English it was made from.
func TestPlatformNoteFallsBackToEnglish(t *testing.T) {
	p, _ := driver.Lookup("fortinet")
	if p.Notes == "" {
		t.Skip("fortinet has no note")
	}
	if got := PlatformNote("zh", "fortinet", p.Notes); got == p.Notes || got == "" {
		t.Errorf("no Chinese note for fortinet: %q", got)
	}
	if got := PlatformNote("zh", "fortinet", "A newer note."); got != "A newer note." {
		t.Errorf("a stale translation is shown: %q", got)
	}
	if got := PlatformNote("en", "fortinet", p.Notes); got != p.Notes {
		t.Errorf("English reads %q", got)
	}
}
