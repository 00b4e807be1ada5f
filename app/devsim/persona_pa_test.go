package devsim

import (
	"regexp"
	"strings"
	"testing"

	"backupd/app/collect/driver"
)

func init() {
	// AireOS lists the rogue devices it hears; PowerConnect counts an
	// sFlow lease down.
	perShowVolatile["cisco_wlc"] = true
	perShowVolatile["dell_powerconnect"] = true
}

// maskNoise is the comparison form of text under a platform's noise
// rules: a rule without the mask group drops the lines it matches, one with
// it replaces the group's text.
func maskNoise(rules []*regexp.Regexp, text string) string {
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
			if m := re.FindStringSubmatchIndex(line); m != nil && m[2*g] >= 0 {
				line = line[:m[2*g]] + "#" + line[m[2*g+1]:]
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// Two shows of an unchanged simulated device differ, but only in what the
// platform's noise rules ignore; a real change still shows through them.
func TestPersonaNoisePA(t *testing.T) {
	for _, platform := range []string{"cisco_wlc", "dell_powerconnect"} {
		t.Run(platform, func(t *testing.T) {
			d := startDevice(t, Options{Platform: platform, Seed: 5, ConfigSize: MinConfigSize})
			first, second := showAll(t, d), showAll(t, d)
			if first == second {
				t.Fatal("two shows are identical; the platform prints volatile lines")
			}
			rules := driver.NoiseRules(platform)
			if maskNoise(rules, first) != maskNoise(rules, second) {
				t.Errorf("two shows of an unchanged device differ beyond the noise rules:\n%s", diffLines(first, second))
			}
			d.Mutate(9)
			if maskNoise(rules, showAll(t, d)) == maskNoise(rules, second) {
				t.Error("a real change is hidden by the noise rules")
			}
		})
	}
}

func diffLines(a, b string) string {
	var out []string
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			out = append(out, "- "+al[i], "+ "+bl[i])
		}
	}
	return strings.Join(out, "\n")
}
