package notifications

import (
	"encoding/json"
	"io/fs"
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
