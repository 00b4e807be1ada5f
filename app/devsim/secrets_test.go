package devsim

import (
	"strings"
	"testing"

	"backupd/app/collect/driver"
)

// Every personality's configuration is masked by its platform's secret
// rules: no secret the simulator put in it (passwords, hashes, salts,
// keys, communities, in every form the personality writes them)
// survives, in any case, and no line without one changes.
func TestPersonalitySecretsMasked(t *testing.T) {
	mark := func(string) string { return "<secret:000000>" }
	for _, id := range Platforms() {
		t.Run(id, func(t *testing.T) {
			d, err := NewDevice(Options{Platform: id, Hostname: "lab-" + id, Username: "netops", Password: "x"})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			text := showAll(t, d)
			secrets := d.Secrets()
			masked := driver.SecretsOf(id).Mask(text, mark, nil)
			checkMasked(t, text, masked, secrets)
		})
	}
}

// checkMasked fails when masked (text with its secrets masked) still
// holds one of secrets, in any case, or changed a line holding none.
func checkMasked(t *testing.T, text, masked string, secrets []string) {
	t.Helper()
	lower := strings.ToLower(masked)
	for _, s := range secrets {
		if strings.Contains(lower, strings.ToLower(s)) {
			for _, l := range strings.Split(masked, "\n") {
				if strings.Contains(strings.ToLower(l), strings.ToLower(s)) {
					t.Errorf("secret %q survives masking in: %s", s, l)
					break
				}
			}
		}
	}
	before, after := strings.Split(text, "\n"), strings.Split(masked, "\n")
	if len(before) != len(after) {
		t.Fatalf("masking made %d lines of %d", len(after), len(before))
	}
	for i := range before {
		if before[i] == after[i] {
			continue
		}
		holds := false
		for _, s := range secrets {
			if strings.Contains(strings.ToLower(before[i]), strings.ToLower(s)) {
				holds = true
				break
			}
		}
		if !holds {
			t.Errorf("line %d holds no secret but was masked:\n  %s\n→ %s", i+1, before[i], after[i])
		}
	}
}
