package devsim

import (
	"strings"
	"testing"

	"backupd/app/collect/driver"
)

func init() {
	// FASTPATH prints the uptime (and EFOS the clock, EdgeSwitch the SNTP
	// time) at the top of every running-config; Onyx the generation time.
	for _, id := range []string{"broadcom_efos", "ubiquiti_edgeswitch", "netgear_prosafe", "mellanox_onyx"} {
		perShowVolatile[id] = true
	}
}

// TestPBNoiseStable shows the default commands of each platform twice
// on an unchanged simulated device, and once after a real change: the
// built-in noise rules make the unchanged shows equal and leave the
// change visible.
func TestPBNoiseStable(t *testing.T) {
	for _, id := range []string{"netgear_prosafe", "broadcom_efos", "ubiquiti_edgeswitch", "fs_os", "lenovo_cnos",
		"tplink_jetstream", "mellanox_onyx", "ruckus_fastiron"} {
		t.Run(id, func(t *testing.T) {
			rules := driver.NoiseRules(id)
			d := startDevice(t, Options{Platform: id, Seed: 11, ConfigSize: 8 << 10})
			show := func() string {
				var b strings.Builder
				for _, cmd := range strings.Split(driver.DefaultCommands(id), "\n") {
					text, ok := d.Show(cmd)
					if !ok {
						t.Fatalf("default command %q not answered", cmd)
					}
					b.WriteString(text)
				}
				return b.String()
			}
			first, second := show(), show()
			if peNoise(rules, first) != peNoise(rules, second) {
				t.Errorf("two shows of an unchanged device differ once the noise rules apply")
			}
			if perShowVolatile[id] && first == second {
				t.Errorf("the two shows are identical; the test proves nothing")
			}
			d.Mutate(5)
			if changed := show(); peNoise(rules, changed) == peNoise(rules, second) {
				t.Errorf("a real change is hidden by the noise rules")
			}
		})
	}
}
