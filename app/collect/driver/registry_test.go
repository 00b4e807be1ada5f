package driver

import (
	"regexp"
	"strings"
	"testing"
)

// TestRegistry checks the definitions as a whole: IDs are lower-case
// words, every alias names exactly one platform and never another
// platform's ID, and each definition says who makes it.
func TestRegistry(t *testing.T) {
	idRE := regexp.MustCompile(`^[a-z][a-z0-9_]{1,39}$`)
	owner := map[string]string{}
	for _, p := range Builtins() {
		owner[p.ID] = p.ID
	}
	for _, p := range Builtins() {
		if !idRE.MatchString(p.ID) {
			t.Errorf("%s: not a lower-case identifier", p.ID)
		}
		if p.Vendor == "" {
			t.Errorf("%s: no vendor", p.ID)
		}
		for _, a := range p.Aliases {
			if a != strings.ToLower(a) {
				t.Errorf("%s: alias %q is not lower case", p.ID, a)
			}
			if other, ok := owner[a]; ok && other != p.ID {
				t.Errorf("alias %q of %s is already %s", a, p.ID, other)
			}
			owner[a] = p.ID
		}
		if got, ok := Resolve(p.ID); !ok || got.ID != p.ID {
			t.Errorf("Resolve(%q) = %q %v", p.ID, got.ID, ok)
		}
		for _, a := range p.Aliases {
			if got, ok := Resolve(strings.ToUpper(a)); !ok || got.ID != p.ID {
				t.Errorf("Resolve(%q) = %q %v, want %s", a, got.ID, ok, p.ID)
			}
		}
	}
	if _, ok := Resolve("no-such-platform"); ok {
		t.Error("Resolve found a platform that does not exist")
	}
}

// TestCustomPlatforms checks that administrator-defined platforms join the
// registry, cannot take a built-in ID, and are checked like built-in ones.
func TestCustomPlatforms(t *testing.T) {
	t.Cleanup(func() { _ = SetCustom(nil) })
	mine := Platform{ID: "custom_acme", Name: "ACME OS", DefaultCommands: "show conf",
		Dialogue: Dialogue{Prompt: re(`^acme[>#]$`)}, Noise: []string{`^! generated `}, Strip: []string{`^Generating`}}
	if err := SetCustom([]Platform{mine}); err != nil {
		t.Fatal(err)
	}
	p, ok := Lookup("custom_acme")
	if !ok || !p.Custom {
		t.Fatalf("Lookup(custom_acme) = %+v %v", p, ok)
	}
	if got := len(NoiseRules("custom_acme")); got != 1 {
		t.Errorf("%d noise rules, want 1", got)
	}
	if got := StripOutput("custom_acme", "Generating...\nhostname a\n"); got != "hostname a\n" {
		t.Errorf("StripOutput = %q", got)
	}
	found := false
	for _, id := range IDs() {
		found = found || id == "custom_acme"
	}
	if !found {
		t.Error("IDs() leaves the custom platform out")
	}
	clash := mine
	clash.ID = "cisco_ios"
	if err := SetCustom([]Platform{clash}); err == nil || !strings.Contains(err.Error(), "built-in") {
		t.Errorf("custom platform with a built-in ID: err = %v", err)
	}
	bad := mine
	bad.Noise = []string{`(unclosed`}
	if err := SetCustom([]Platform{bad}); err == nil {
		t.Error("a noise rule that does not compile was accepted")
	}
	// A failed SetCustom leaves the previous set in place.
	if _, ok := Lookup("custom_acme"); !ok {
		t.Error("a rejected SetCustom dropped the platforms already set")
	}
}
