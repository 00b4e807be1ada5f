package notifications

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"backupd/db/outbox"
	"backupd/embed"
)

// Every event kind the rule form offers and the delivery log names has
// a label, in each language: a new kind without one would show as a
// blank box.
func TestEveryEventKindHasALabel(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		raw, err := fs.ReadFile(embed.I18n, "i18n/ui/notifications."+lang+".json")
		if err != nil {
			t.Fatal(err)
		}
		texts := map[string]string{}
		if err := json.Unmarshal(raw, &texts); err != nil {
			t.Fatal(err)
		}
		for _, k := range outbox.EventKinds {
			key := notifEventKeys[k]
			if key == "" || texts[key] == "" {
				t.Errorf("%s: event kind %s has no label (key %q)", lang, k, key)
			}
		}
	}
	if len(notifEventKeys) != len(outbox.EventKinds) {
		t.Errorf("%d labels for %d event kinds", len(notifEventKeys), len(outbox.EventKinds))
	}
}

// A system event (git mirror pushes, change sets) matches only rules of
// scope all: its label in the rule form says so, in each language, and a
// device event's does not.
func TestSystemEventLabelsSayScopeAll(t *testing.T) {
	hints := map[string]string{"en": "rules for all devices only", "zh": "仅适用于“所有设备”的规则"}
	systems := 0
	for lang, hint := range hints {
		raw, err := fs.ReadFile(embed.I18n, "i18n/ui/notifications."+lang+".json")
		if err != nil {
			t.Fatal(err)
		}
		texts := map[string]string{}
		if err := json.Unmarshal(raw, &texts); err != nil {
			t.Fatal(err)
		}
		for _, k := range outbox.EventKinds {
			if got := strings.Contains(texts[notifEventKeys[k]], hint); got != k.System() {
				t.Errorf("%s: the label of %s (system %v) says %q", lang, k, k.System(), texts[notifEventKeys[k]])
			}
			if k.System() && lang == "en" {
				systems++
			}
		}
	}
	if systems < 4 {
		t.Errorf("%d system kinds; want git.push_* and config.push_*", systems)
	}
}
