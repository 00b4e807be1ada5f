package platforms

import (
	"encoding/json"
	"sync"

	"backupd/embed"
)

// The built-in platforms' notes are written in English in their
// definitions (app/collect/driver); embed/i18n/platforms.<lang>.json
// holds them in other languages, each entry with the English note it
// translates. A note changed in the code shows in English until its
// translation is brought up to date (TestPlatformNotesTranslated fails
// meanwhile): a stale translation is never shown.

// noteTranslation is one entry of a platforms.<lang>.json.
type noteTranslation struct {
	EN   string `json:"en"`
	Text string `json:"text"`
}

var (
	notesOnce   sync.Once
	notesByLang map[string]map[string]noteTranslation
)

// noteLangs are the languages with a notes file besides English.
var noteLangs = []string{"zh"}

func loadNotes() {
	notesByLang = map[string]map[string]noteTranslation{}
	for _, lang := range noteLangs {
		raw, err := embed.I18n.ReadFile("i18n/platforms." + lang + ".json")
		if err != nil {
			continue // TestPlatformNotesTranslated reads every file
		}
		m := map[string]noteTranslation{}
		if json.Unmarshal(raw, &m) == nil {
			notesByLang[lang] = m
		}
	}
}

// PlatformNote is the built-in platform id's note, english, in lang when
// a translation of that very text exists, else english.
func PlatformNote(lang, id, english string) string {
	notesOnce.Do(loadNotes)
	if t, ok := notesByLang[lang][id]; ok && t.EN == english && t.Text != "" {
		return t.Text
	}
	return english
}
