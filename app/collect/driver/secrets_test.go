package driver

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The secret rules are proven three ways: forms seeded here (every form a
// platform writes a secret in, each with a value of the test's), the
// recordings of real devices (testdata/recordings, whose secrets their
// contributors replaced by placeholders, listed in recordedSecrets), and
// the simulator's personalities (app/devsim's TestPersonalitySecretsMasked).

// secretCases are one platform's seeded forms: in Masked, each {S} is a
// secret (the test puts a value of its own there; {S:text} puts text,
// for a form that takes only some characters) and the line must lose
// it; a form may be several lines ("\n"), and a line of it without {S}
// (a block's begin or end line) stays as it is, as Plain lines, which
// hold no secret, do.
type secretCases struct {
	Masked []string
	Plain  []string
}

var seededSecrets = map[string]secretCases{}

// seed adds a platform's cases, from an init function of the family's
// secrets_<family>_test.go.
func seed(platform string, c secretCases) {
	if _, dup := seededSecrets[platform]; dup {
		panic("secret cases seeded twice for " + platform)
	}
	seededSecrets[platform] = c
}

var seedMark = regexp.MustCompile(`\{S(?::([^}]*))?\}`)

// fill puts values into a seeded line: the line, and its values.
func fill(line string, n *int) (string, []string) {
	var values []string
	out := seedMark.ReplaceAllStringFunc(line, func(m string) string {
		v := seedMark.FindStringSubmatch(m)[1]
		if v == "" {
			*n++
			v = fmt.Sprintf("Sq%02dx7Kp%dvZ", *n, *n%10)
		}
		values = append(values, v)
		return v
	})
	return out, values
}

var testMark = func(string) string { return "<secret:000000>" }

func TestSecretsSeeded(t *testing.T) {
	for _, id := range BuiltinIDs() {
		t.Run(id, func(t *testing.T) {
			c, ok := seededSecrets[id]
			if !ok || len(c.Masked) == 0 {
				t.Fatalf("no seeded secret forms: add them to the family's secrets_*_test.go")
			}
			s := SecretsOf(id)
			n := 0
			var lines, values []string
			for _, form := range c.Masked {
				// A form of several lines (a block) is seeded whole.
				for _, l := range strings.Split(form, "\n") {
					line, vs := fill(l, &n)
					lines = append(lines, line)
					values = append(values, strings.Join(vs, "\x00"))
				}
			}
			text := strings.Join(append(append([]string{}, lines...), c.Plain...), "\n") + "\n"
			counts := make([]int, len(s.Rules()))
			masked := strings.Split(s.Mask(text, testMark, counts), "\n")
			for i, line := range lines {
				if values[i] == "" {
					// A line around secrets (a block's begin or end)
					// stays as it is.
					if masked[i] != line {
						t.Errorf("a line without {S} changed:\n  %s\n→ %s", line, masked[i])
					}
					continue
				}
				for _, v := range strings.Split(values[i], "\x00") {
					if strings.Contains(masked[i], v) {
						t.Errorf("secret %q survives in %q (from %q)", v, masked[i], line)
					}
				}
			}
			for j, p := range c.Plain {
				if got := masked[len(lines)+j]; got != p {
					t.Errorf("a line without a secret changed:\n  %s\n→ %s", p, got)
				}
			}
			// Every rule of the platform's own is shown to work.
			for i, r := range s.Rules() {
				if counts[i] == 0 && r.Name != privateKeyBlock.Name {
					t.Errorf("rule %q masks none of the seeded forms: seed its form", r.Name)
				}
			}
		})
	}
}

// recordedSecrets are, per recording of a real device, the values its
// contributors left in place of its secrets: masking must remove each and
// change no other line. A recording without secrets lists none (and then
// no line may change).
var recordedSecrets = map[string][]string{}

// recorded adds a recording's values from a family's test file.
func recorded(file string, values ...string) {
	if _, dup := recordedSecrets[file]; dup {
		panic("recorded secrets listed twice for " + file)
	}
	recordedSecrets[file] = values
}

// recordedText is what a recording's commands printed, as the session
// returns it: each reply without its echo and the prompt after it.
func recordedText(t *testing.T, file string) string {
	rec := loadRecording(t, file)
	var b strings.Builder
	for _, st := range rec.steps {
		lines := CleanLines([]byte(st.reply))
		if len(lines) < 2 {
			continue
		}
		b.WriteString(strings.Join(lines[1:len(lines)-1], "\n"))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestSecretsRecorded(t *testing.T) {
	files := map[string]string{}
	for _, c := range captures {
		files[c.file] = c.platform
	}
	for _, c := range keyedCaptures {
		if !c.otherDevice {
			files[c.file] = c.platform
		}
	}
	for file, platform := range files {
		t.Run(file, func(t *testing.T) {
			values, ok := recordedSecrets[file]
			if !ok {
				t.Fatalf("the recording's secrets are not listed: add recorded(%q, …)", file)
			}
			text := recordedText(t, file)
			masked := SecretsOf(platform).Mask(text, testMark, nil)
			before, after := strings.Split(text, "\n"), strings.Split(masked, "\n")
			for i := range before {
				holds := false
				for _, v := range values {
					if strings.Contains(before[i], v) {
						holds = true
					}
					if strings.Contains(after[i], v) {
						t.Errorf("%s: secret %q survives in %q", platform, v, after[i])
					}
				}
				if !holds && before[i] != after[i] {
					t.Errorf("%s: a line without a secret changed:\n  %s\n→ %s", platform, before[i], after[i])
				}
			}
			for _, v := range values {
				if !strings.Contains(text, v) {
					t.Errorf("listed secret %q is not in the recording", v)
				}
			}
		})
	}
}

// Every platform masks the body of a PEM private key, in the forms
// configurations embed one (bare, indented, FortiOS's quoted value), and
// keeps its BEGIN and END lines and the certificate next to it.
func TestPrivateKeyBlockEverywhere(t *testing.T) {
	text := strings.Join([]string{
		"-----BEGIN CERTIFICATE-----",
		"MIIBszCCAVmgAwIBAgIUCertificateIsPublic",
		"-----END CERTIFICATE-----",
		"-----BEGIN RSA PRIVATE KEY-----",
		"MIIEowIBAAKCAQEAsecretRsaKeyLine1",
		"secretRsaKeyLine2==",
		"-----END RSA PRIVATE KEY-----",
		`        set private-key "-----BEGIN ENCRYPTED PRIVATE KEY-----`,
		"MIIFHDBOBgkqhkiG9w0BBQ0wQTApsecretEncLine",
		`-----END ENCRYPTED PRIVATE KEY-----"`,
		"   -----BEGIN OPENSSH PRIVATE KEY-----",
		"   b3BlbnNzaC1rZXktdjEAAAAAsecretSshLine",
		"   -----END OPENSSH PRIVATE KEY-----",
		"hostname after-the-keys",
	}, "\n") + "\n"
	for _, id := range BuiltinIDs() {
		masked := SecretsOf(id).Mask(text, testMark, nil)
		before, after := strings.Split(text, "\n"), strings.Split(masked, "\n")
		for i := range before {
			secret := strings.Contains(before[i], "secret")
			switch {
			case secret && strings.Contains(after[i], "secret") && !strings.Contains(after[i], "<secret:"):
				t.Errorf("%s: a private key line survives: %q", id, after[i])
			case secret && !strings.Contains(after[i], "<secret:000000>"):
				t.Errorf("%s: %q masked as %q", id, before[i], after[i])
			case !secret && after[i] != before[i]:
				t.Errorf("%s: %q changed into %q", id, before[i], after[i])
			}
		}
	}
}

// Every built-in rule has needles, so that masking runs an expression
// only on the few lines that can hold its secret (BenchmarkMask in
// app/redact measures it).
func TestSecretRulesHaveNeedles(t *testing.T) {
	for _, id := range BuiltinIDs() {
		s := SecretsOf(id)
		for i, r := range s.Rules() {
			if s.c[i].needles == nil {
				t.Errorf("%s: rule %q has no literal of 3 bytes or more that every match holds", id, r.Name)
			}
		}
	}
}

// A rule whose literal has letters beyond ASCII still finds its lines in
// any case: the text's other letters are not lower-cased for needles.
func TestSecretRuleWithNonASCIILiteral(t *testing.T) {
	s, err := newSecrets([]SecretRule{{Name: "mot de passe", Match: `(?i)^MOT DE PASSÉ (?P<secret>\S+)`}})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Mask("mot de passÉ Geheim\nhostname x\n", testMark, nil)
	if got != "mot de passÉ <secret:000000>\nhostname x\n" {
		t.Fatalf("masked %q", got)
	}
}
