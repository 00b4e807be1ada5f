package testkit

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Sample is one line of a Prometheus text exposition.
type Sample struct {
	Family, Name string
	Labels       map[string]string
	Value        string
}

// Exposition checks what a metrics endpoint served, line by line: every
// family under a non-empty # HELP and a # TYPE before its first sample,
// each family's lines together, histogram and summary lines only with
// their _bucket, _sum and _count suffixes, and labels that parse. It
// returns the samples and each family's type.
func Exposition(t *testing.T, text string) ([]Sample, map[string]string) {
	t.Helper()
	help, types := map[string]string{}, map[string]string{}
	done := map[string]bool{}
	var samples []Sample
	current := ""
	for n, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		n++
		switch {
		case strings.HasPrefix(line, "# HELP "):
			name, text, _ := strings.Cut(strings.TrimPrefix(line, "# HELP "), " ")
			if strings.TrimSpace(text) == "" {
				t.Errorf("line %d: %s has no help text", n, name)
			}
			help[name] = text
		case strings.HasPrefix(line, "# TYPE "):
			name, typ, _ := strings.Cut(strings.TrimPrefix(line, "# TYPE "), " ")
			if _, dup := types[name]; dup {
				t.Errorf("line %d: a second TYPE for %s", n, name)
			}
			types[name] = typ
		case strings.HasPrefix(line, "#"):
		default:
			s, ok := parseSample(line)
			if !ok {
				t.Errorf("line %d does not parse: %q", n, line)
				continue
			}
			s.Family = s.Name
			if _, known := types[s.Name]; !known {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if base, cut := strings.CutSuffix(s.Name, suffix); cut {
						if typ := types[base]; typ == "histogram" || typ == "summary" {
							s.Family = base
						}
					}
				}
			}
			typ, typed := types[s.Family]
			if !typed || help[s.Family] == "" {
				t.Errorf("line %d: %s has no # HELP and # TYPE before it", n, s.Family)
			}
			if typ == "histogram" && s.Name == s.Family {
				t.Errorf("line %d: histogram %s without _bucket, _sum or _count", n, s.Name)
			}
			if s.Family != current {
				if done[s.Family] {
					t.Errorf("line %d: the lines of %s are not together", n, s.Family)
				}
				done[current], current = true, s.Family
			}
			samples = append(samples, s)
		}
	}
	return samples, types
}

// parseSample reads `name{label="value",…} value`.
func parseSample(line string) (Sample, bool) {
	s := Sample{Labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end <= 0 {
		return s, false
	}
	s.Name, line = line[:end], line[end:]
	if line[0] == '{' {
		line = line[1:]
		for !strings.HasPrefix(line, "}") {
			name, rest, ok := strings.Cut(line, `="`)
			if !ok || name == "" {
				return s, false
			}
			var v strings.Builder
			i := 0
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
					if rest[i] == 'n' {
						v.WriteByte('\n')
						continue
					}
				}
				v.WriteByte(rest[i])
			}
			if i == len(rest) {
				return s, false
			}
			s.Labels[strings.TrimSpace(name)] = v.String()
			line = strings.TrimPrefix(rest[i+1:], ",")
		}
		line = line[1:]
	}
	s.Value = strings.TrimSpace(line)
	return s, s.Value != "" && !strings.Contains(s.Value, " ")
}

// Promtool runs promtool (Prometheus' own parser and linter) with args
// and stdin, in a subtest: `Promtool(t, text, "check", "metrics")`.
// Without promtool on PATH the subtest is skipped, unless CI is set: CI
// installs promtool (.ci/metrics), so there it must run.
func Promtool(t *testing.T, stdin string, args ...string) {
	t.Helper()
	name := args
	if len(name) > 2 {
		name = name[:2]
	}
	t.Run("promtool "+strings.Join(name, " "), func(t *testing.T) {
		bin, err := exec.LookPath("promtool")
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("promtool is not on PATH; .ci/metrics installs it before the tests run")
			}
			t.Skip("promtool not found: install Debian's prometheus package (or run .ci/metrics) to check with it")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	})
}
