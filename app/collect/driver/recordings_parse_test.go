package driver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestRecordingsParse loads every recording in testdata/recordings with the
// loader the replay tests use, so a recording in a shape the loader does not
// understand fails here rather than silently replaying nothing.
func TestRecordingsParse(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "recordings", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 6 {
		t.Fatalf("found %d recordings, want at least the six original ones", len(paths))
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".yaml")
		t.Run(name, func(t *testing.T) {
			rec := loadRecording(t, name)
			if len(rec.steps) == 0 {
				t.Fatal("no command steps")
			}
			for i, s := range rec.steps {
				if s.sent == "" {
					t.Errorf("step %d: empty command line", i)
				}
			}
			if interactive(t, p) && strings.TrimSpace(rec.initPrompt) == "" {
				t.Errorf("interactive session with an empty init_prompt")
			}
			// Extra top-level keys (oxidized_output: the backup Oxidized
			// expects) are test settings, never steps of the session.
			if n, extra := commandEntries(t, p); len(rec.steps) != n {
				t.Errorf("loaded %d steps, the file has %d commands (other keys: %q)", len(rec.steps), n, extra)
			}
		})
	}
}

// commandEntries counts the entries under "commands" and lists the other
// top-level keys.
func commandEntries(t *testing.T, path string) (n int, other []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i].Value, root.Content[i+1]
		if key != "commands" {
			other = append(other, key)
			continue
		}
		if val.Kind == yaml.SequenceNode {
			for _, item := range val.Content {
				n += len(item.Content) / 2
			}
		} else {
			n += len(val.Content) / 2
		}
	}
	return n, other
}

// TestRecordingsIgnoreOxidizedOutput: the expected backup some recordings
// carry (oxidized_output) is not read as a step or as the first prompt.
func TestRecordingsIgnoreOxidizedOutput(t *testing.T) {
	for _, name := range []string{"pfsense_CE_2.7.2", "cumulus_with-motd"} {
		_, other := commandEntries(t, filepath.Join("testdata", "recordings", name+".yaml"))
		if !slices.Contains(other, "oxidized_output") {
			t.Fatalf("%s: no oxidized_output key to ignore (keys %q)", name, other)
		}
		rec := loadRecording(t, name)
		for _, s := range rec.steps {
			if s.sent == "oxidized_output" || strings.Contains(s.reply, "needs to be written by hand") || strings.Contains(s.reply, "<!-- PFsense") {
				t.Errorf("%s: oxidized_output read as a step (%q)", name, s.sent)
			}
		}
		if strings.Contains(rec.initPrompt, "needs to be written by hand") {
			t.Errorf("%s: oxidized_output read into init_prompt", name)
		}
	}
}

// interactive reports whether a recording was made on an interactive shell:
// sessions recorded over SSH exec have a null init_prompt.
func interactive(t *testing.T, path string) bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "init_prompt" {
			return root.Content[i+1].Tag != "!!null"
		}
	}
	return false
}

// The Onyx 3.10 recording rings the terminal bell (\a) while paging; it must
// decode to BEL, not to the letter a.
func TestRecordingsUnescapeBell(t *testing.T) {
	if got := unescapeRuby(`lines 2-24 \e[m\a\r`); got != "lines 2-24 \x1b[m\x07\r" {
		t.Fatalf("unescapeRuby = %q", got)
	}
	rec := loadRecording(t, "mlnxos_Onyx_3.10.4504")
	last := rec.steps[len(rec.steps)-1].reply
	if !strings.Contains(last, "\x07\r\x1b[K") || strings.Contains(last, "a\r\x1b[K") {
		t.Fatalf("bell not decoded in the recorded pager output: %q", last)
	}
}
