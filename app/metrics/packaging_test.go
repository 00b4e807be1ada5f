package metrics

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"backupd/internal/testkit"
)

// metricName finds the metric names in a PromQL expression: ours and the
// process and Go runtime ones.
var metricName = regexp.MustCompile(`\b(?:backupd|process|go)_[a-z0-9_]+\b`)

// published reports whether name is a series backupd serves: a family of
// the table, or a histogram's or summary's _bucket, _sum or _count.
func published(name string) bool {
	if f, ok := families[name]; ok {
		return f.typ != histogram
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, cut := strings.CutSuffix(name, suffix); cut {
			if f, ok := families[base]; ok && (f.typ == histogram || f.typ == summary) {
				return true
			}
		}
	}
	return false
}

func checkNames(t *testing.T, where, expr string) {
	t.Helper()
	names := metricName.FindAllString(expr, -1)
	if len(names) == 0 {
		t.Errorf("%s: %q names no backupd metric", where, expr)
	}
	for _, name := range names {
		if !published(name) {
			t.Errorf("%s: %s is not a metric backupd serves (in %q)", where, name, expr)
		}
	}
}

type dashboardPanel struct {
	ID      int              `json:"id"`
	Type    string           `json:"type"`
	Title   string           `json:"title"`
	Panels  []dashboardPanel `json:"panels"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
}

// The Grafana dashboard parses, every panel queries something, every
// query names only metrics backupd serves, and (with promtool) every query
// is valid PromQL.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "packaging", "grafana", "backupd.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID        string           `json:"uid"`
		Title      string           `json:"title"`
		Panels     []dashboardPanel `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("backupd.json: %v", err)
	}
	if dash.UID == "" || dash.Title == "" {
		t.Error("the dashboard needs a uid and a title")
	}
	var exprs []string
	ids := map[int]bool{}
	var walk func([]dashboardPanel)
	walk = func(panels []dashboardPanel) {
		for _, p := range panels {
			if ids[p.ID] {
				t.Errorf("panel id %d used twice", p.ID)
			}
			ids[p.ID] = true
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q queries nothing", p.Title)
			}
			for _, target := range p.Targets {
				checkNames(t, "panel "+p.Title, target.Expr)
				exprs = append(exprs, target.Expr)
			}
		}
	}
	walk(dash.Panels)
	if len(exprs) < 20 {
		t.Errorf("only %d queries; the dashboard lost panels", len(exprs))
	}
	for _, v := range dash.Templating.List {
		if v.Definition != "" {
			checkNames(t, "variable "+v.Name, v.Definition)
		}
	}
	// Grafana's variables replaced by what they stand for, each query is
	// checked by Prometheus' own parser as a recording rule.
	vars := strings.NewReplacer("$__rate_interval", "5m", "$__range", "1d", "$instance", ".*")
	var rules []map[string]string
	for i, e := range exprs {
		rules = append(rules, map[string]string{"record": fmt.Sprintf("dashboard:query_%d", i), "expr": vars.Replace(e)})
	}
	promtoolRules(t, map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
}

// The alert rules name only metrics backupd serves (promtool checks their
// syntax and their unit tests in CI, but cannot know our names).
func TestAlertRulesNameOurMetrics(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "packaging", "prometheus", "backupd-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			n++
			if r.Expr == `up{job="backupd"} == 0` {
				continue // Prometheus' own series for the target
			}
			checkNames(t, "alert "+r.Alert, r.Expr)
		}
	}
	if n < 6 {
		t.Errorf("only %d rules", n)
	}
}

// promtoolRules runs `promtool check rules` on a rules file written from
// v (JSON is YAML).
func promtoolRules(t *testing.T, v any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	testkit.Promtool(t, "", "check", "rules", path)
}
