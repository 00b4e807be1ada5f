package admin

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"backupd/app/insync"
	"backupd/embed"
)

// uiTexts are the interface's texts of language lang, by key.
func uiTexts(t *testing.T, lang string) map[string]string {
	t.Helper()
	names, err := fs.Glob(embed.I18n, "i18n/ui/*."+lang+".json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no %s catalogs: %v", lang, err)
	}
	texts := map[string]string{}
	for _, name := range names {
		raw, err := fs.ReadFile(embed.I18n, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &texts); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return texts
}

var argIndex = regexp.MustCompile(`%\[(\d+)\]s`)

// Every code a sync report may give has a message key with an English
// and a Chinese text; the English is the command line's (insync's)
// very words with the same values in place, and the Chinese puts every
// value and no stray fmt verb. A new code without its texts fails here.
func TestInventorySourceWhyTexts(t *testing.T) {
	en, zh := uiTexts(t, "en"), uiTexts(t, "zh")
	codes := insync.WhyCodes()
	if len(codes) < 40 {
		t.Fatalf("insync gives only %d codes; is WhyCodes broken?", len(codes))
	}
	known := map[string]bool{}
	for _, code := range codes {
		known[code] = true
		key, ok := insyncWhyKeys[code]
		if !ok {
			t.Errorf("code %s has no message key in insyncWhyKeys", code)
			continue
		}
		if key != "insync.why."+code {
			t.Errorf("code %s has key %s, want insync.why.%s", code, key, code)
		}
		if en[key] == "" || zh[key] == "" {
			t.Errorf("key %s: English %q, Chinese %q; both are needed", key, en[key], zh[key])
			continue
		}
		// The values a text takes: %[1]s … %[n]s.
		n := 0
		for _, m := range argIndex.FindAllStringSubmatch(en[key], -1) {
			i, _ := strconv.Atoi(m[1])
			n = max(n, i)
		}
		args, anys := make([]string, n), make([]any, n)
		for i := range args {
			args[i] = fmt.Sprintf("«value %d»", i+1)
			anys[i] = args[i]
		}
		cli := insync.Why{Code: code, Args: args}.String()
		if got := fmt.Sprintf(en[key], anys...); got != cli {
			t.Errorf("key %s in English says\n%q\nthe command line\n%q", key, got, cli)
		}
		got := fmt.Sprintf(zh[key], anys...)
		if strings.Contains(got, "%!") {
			t.Errorf("key %s in Chinese does not take the English's %d values: %q", key, n, got)
		}
		for _, a := range args {
			if !strings.Contains(got, a) {
				t.Errorf("key %s in Chinese leaves out %s: %q", key, a, got)
			}
		}
	}
	for code := range insyncWhyKeys {
		if !known[code] {
			t.Errorf("insyncWhyKeys has %s, a code insync does not give", code)
		}
	}
}

// A reason of several parts is said part by part, each by its key, and
// a code the page has no words for in insync's English.
func TestInventorySourceWhyMessages(t *testing.T) {
	w := insync.Why{Code: insync.WhyUnknownPlatform, Args: []string{"acme-os"},
		More: []insync.Why{{Code: insync.WhyLeftAsIs}, {Code: "from_a_newer_insync"}}}
	got := whyMessages(w)
	want := []inventoryWhy{{Key: keyInsyncWhyUnknownPlatform, Args: []any{"acme-os"}}, {Key: keyInsyncWhyLeftAsIs, Args: []any{}},
		{Text: "from_a_newer_insync"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("whyMessages = %v, want %v", got, want)
	}
	if whyMessages(insync.Why{}) != nil {
		t.Error("no reason gives messages")
	}
}
