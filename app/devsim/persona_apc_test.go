package devsim

import (
	"testing"

	"backupd/app/collect/driver"
)

func init() {
	// config.ini's header names the time it was generated: every
	// download.
	perShowVolatile["apc_aos"] = true
}

// TestAPCNoiseStable downloads config.ini twice from an unchanged card a
// second apart and once after a real change: the built-in noise rules
// make the two downloads equal and leave the change visible.
func TestAPCNoiseStable(t *testing.T) {
	rules := driver.NoiseRules("apc_aos")
	d := startDevice(t, Options{Platform: "apc_aos", Seed: 11, ConfigSize: 8 << 10})
	show := func() string {
		text, ok := d.Show(driver.DefaultCommands("apc_aos"))
		if !ok {
			t.Fatal("the default command is not one of the card's files")
		}
		return text
	}
	first, second := show(), show()
	if first == second {
		t.Fatal("two downloads are identical; the test proves nothing")
	}
	if peNoise(rules, first) != peNoise(rules, second) {
		t.Errorf("two downloads of an unchanged card differ once the noise rules apply")
	}
	d.Mutate(5)
	if peNoise(rules, show()) == peNoise(rules, second) {
		t.Errorf("a real change is hidden by the noise rules")
	}
}
