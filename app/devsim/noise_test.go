package devsim

import (
	"regexp"
	"strings"
	"testing"

	"backupd/app/collect/driver"
)

// compareForm is text as change detection compares it under a platform's
// noise rules: a rule without the mask group drops the lines it matches,
// one with it replaces the group's text in every match.
func compareForm(rules []*regexp.Regexp, text string) string {
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

// TestNoiseRulesOnSimulator shows the default commands of every platform
// twice on an unchanged simulated device and once after a real change:
// the platform's built-in noise rules make the unchanged shows equal (and
// where the platform prints volatile lines, the shows do differ, so the
// rules are put to work) and leave the change visible.
func TestNoiseRulesOnSimulator(t *testing.T) {
	for _, id := range Platforms() {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
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
			if perShowVolatile[id] && first == second {
				t.Errorf("two shows are identical, yet the platform is listed as printing volatile lines")
			}
			if compareForm(rules, first) != compareForm(rules, second) {
				t.Errorf("two shows of an unchanged device differ once the noise rules apply:\n%s", diffLines(first, second))
			}
			d.Mutate(5)
			if compareForm(rules, show()) == compareForm(rules, second) {
				t.Errorf("a real change is hidden by the noise rules")
			}
		})
	}
}
