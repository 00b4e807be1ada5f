package notify_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"backupd/app/notify"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/embed"
)

func readCatalog(t *testing.T, lang string) map[string]string {
	t.Helper()
	raw, err := fs.ReadFile(embed.I18n, "i18n/notify."+lang+".json")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

var verb = regexp.MustCompile(`%(\[\d+\])?[a-z]`)

// Both languages hold the same keys with the same arguments, and every
// key the code names, every event kind and every trigger has a text.
func TestCatalogs(t *testing.T) {
	en, zh := readCatalog(t, "en"), readCatalog(t, "zh")
	for k, v := range en {
		z, ok := zh[k]
		if !ok || z == "" || v == "" {
			t.Errorf("key %q: en %q, zh %q", k, v, z)
			continue
		}
		if a, b := verbs(v), verbs(z); a != b {
			t.Errorf("key %q: en takes %s, zh %s", k, a, b)
		}
	}
	for k := range zh {
		if _, ok := en[k]; !ok {
			t.Errorf("key %q only in zh", k)
		}
	}
	used := regexp.MustCompile(`tr\(lang, "([a-z_]+\.[a-z_.]*[a-z_])"`)
	files, _ := filepath.Glob("*.go")
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range used.FindAllStringSubmatch(string(src), -1) {
			n++
			if _, ok := en[m[1]]; !ok {
				t.Errorf("%s names key %q, which the catalogs lack", f, m[1])
			}
		}
	}
	if n < 10 {
		t.Errorf("found only %d uses of tr in the sources: is the pattern stale?", n)
	}
	for _, k := range append(slices.Clone(outbox.EventKinds), "notification.test") {
		if en["kind."+string(k)] == "" {
			t.Errorf("event kind %s has no text", k)
		}
	}
	// config.restore_failed says which end it was.
	for _, st := range []string{db.RestoreFailed, db.RestoreRolledBack, db.RestoreRollbackFailed, db.RestoreInterrupted} {
		if en["kind.config.restore_failed."+st] == "" {
			t.Errorf("restore end %s has no text", st)
		}
	}
	for _, k := range []string{"schedule", "manual", "syslog", "retry", "api", "cli", "check", "restore", "push", "git_push", "inventory_sync"} {
		if en["trigger."+k] == "" {
			t.Errorf("trigger %s has no text", k)
		}
	}
}

// verbs lists a text's fmt verbs in argument order, so that "%[2]d … %[1]d"
// matches "%d … %d".
func verbs(s string) string {
	out := map[int]string{}
	next := 1
	for _, m := range verb.FindAllStringSubmatch(s, -1) {
		i := next
		if m[1] != "" {
			i = int(m[1][1] - '0')
		}
		out[i] = m[0][len(m[0])-1:]
		next = i + 1
	}
	var b strings.Builder
	for i := 1; i <= len(out); i++ {
		b.WriteString(out[i])
	}
	return b.String()
}

// Every kind renders in both languages without a catalog key showing
// through, and an unknown kind still says something.
func TestEveryKindRenders(t *testing.T) {
	rc := &receiver{}
	srv := newServer(t, rc)
	en := readCatalog(t, "en")
	kinds := []string{"notification.test", "future.kind"}
	for _, k := range outbox.EventKinds {
		kinds = append(kinds, string(k))
	}
	for _, kind := range kinds {
		for _, lang := range []string{"en", "zh"} {
			ev := changedEvent(1, "r1")
			ev.Kind = kind
			body, _ := notify.ChatBody(notify.TypeChat, lang, []notify.Event{ev})
			var p struct{ Text string }
			_ = json.Unmarshal(body, &p)
			for k := range en {
				if strings.Contains(p.Text, k) && !strings.HasPrefix(k, "trigger.") {
					t.Errorf("%s/%s: key %q shows: %q", kind, lang, k, p.Text)
				}
			}
			if kind == "future.kind" && !strings.Contains(p.Text, "future.kind") {
				t.Errorf("unknown kind not named: %q", p.Text)
			}
			ch := notify.Channel{Type: notify.TypeChat, Language: lang, Secret: []byte(srv.URL)}
			if res := notify.Send(context.Background(), ch, []notify.Event{ev}, notify.Options{}); !res.OK() {
				t.Errorf("%s/%s: %+v", kind, lang, res)
			}
		}
	}
	stale := failedEvent(2, "r2")
	stale.Kind, stale.Failure = "backup.stale", nil
	stale.Stale = &notify.Stale{ThresholdSeconds: 48 * 3600}
	body, _ := notify.ChatBody(notify.TypeChat, "en", []notify.Event{stale})
	if !strings.Contains(string(body), "never backed up successfully, threshold 48 h") {
		t.Errorf("stale: %s", body)
	}
	stale.Stale.LastGoodAt = &at
	body, _ = notify.ChatBody(notify.TypeChat, "zh", []notify.Event{stale})
	if !strings.Contains(string(body), "上次成功备份于 2026-11-25 13:40 UTC，阈值 48 小时") {
		t.Errorf("stale zh: %s", body)
	}
	if err := (notify.Channel{Type: notify.TypeChat, Language: "fr", Secret: []byte(srv.URL)}).Validate(); err == nil {
		t.Error("language fr accepted")
	}
}
