package devsim

import (
	"regexp"
	"strings"
	"testing"

	"backupd/app/collect/driver"
)

func init() {
	// The Network-M3 export encrypts its secrets and its passphrase check
	// with a new salt at every export.
	perShowVolatile["eaton_network"] = true
	// NetScaler prints its ENCMTHD secrets encrypted anew at every show.
	perShowVolatile["citrix_netscaler"] = true
}

// peNoise is text as change detection compares it under the platform's
// built-in rules: lines a rule matches are dropped, the mask group of a
// rule that has one is replaced in every match.
func peNoise(rules []*regexp.Regexp, text string) string {
	var out []string
lines:
	for _, line := range strings.Split(text, "\n") {
		for _, re := range rules {
			g := re.SubexpIndex(driver.MaskGroup)
			if g < 0 {
				if re.MatchString(line) {
					continue lines
				}
				continue
			}
			line = re.ReplaceAllStringFunc(line, func(m string) string {
				sub := re.FindStringSubmatchIndex(m)
				return m[:sub[2*g]] + "#" + m[sub[2*g+1]:]
			})
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// TestPENoiseStable backs the default commands of each platform twice
// from an unchanged simulated device, once more after the device's clock
// moved on and it saved, and after a real change: the built-in noise rules
// make the unchanged shows equal and leave the change visible.
func TestPENoiseStable(t *testing.T) {
	for _, id := range []string{"citrix_netscaler", "a10_acos", "alliedtelesis_awplus", "perle_iolan", "eaton_network"} {
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
			d.Mutate(5)
			changed := show()
			if peNoise(rules, changed) == peNoise(rules, second) {
				t.Errorf("a real change is hidden by the noise rules")
			}
			if perShowVolatile[id] && first == second {
				t.Errorf("the two shows are identical; the test proves nothing")
			}
		})
	}
}
