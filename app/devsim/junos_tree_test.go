package devsim

import (
	"regexp"
	"strings"
	"testing"
)

// A generated Junos configuration reads back exactly as it was written,
// so a loaded backup prints as the backup.
func TestJunosTreeRoundTrip(t *testing.T) {
	d := startDevice(t, Options{Platform: "juniper_junos", Seed: 3})
	body := d.RunningConfig()
	if !strings.HasPrefix(body, "version ") || strings.Contains(body, "## Last commit") {
		t.Fatalf("running configuration starts %q", body[:min(len(body), 60)])
	}
	tree, errs := parseJunos("terminal", body, nil)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if got := tree.render(); got != body {
		t.Errorf("round trip differs in %d lines", linesOnlyIn(got, body)+linesOnlyIn(body, got))
	}
}

// Load errors read as the device prints them (a vJunos 25.4 capture).
func TestJunosLoadErrors(t *testing.T) {
	metric := "protocols {\n    ospf {\n        topology default {\n            metric 65450;\n        }\n    }\n}\n"
	_, errs := parseJunos("terminal", metric, regexp.MustCompile(`^metric `))
	want := "terminal:4:(18) syntax error: metric\n  [edit protocols ospf topology default]\n    'metric 65450;'\n      syntax error"
	if len(errs) != 2 || errs[0].String() != want {
		t.Fatalf("errors %q, want %q then a warning", errs, want)
	}

	block := strings.ReplaceAll(metric, "ospf", "ospf3")
	tree, errs := parseJunos("terminal", block, regexp.MustCompile(`^topology`))
	var got []string
	for _, e := range errs {
		got = append(got, e.String())
	}
	wantAll := "terminal:3:(16) syntax error: topology\n  [edit protocols ospf3]\n    'topology default {'\n      syntax error\n" +
		"terminal:5:(9) error recovery ignores input until this point: }\n  [edit protocols ospf3]\n    '}'\n      error recovery ignores input until this point\n" +
		"[edit protocols]\n  'ospf3'\n    warning: statement has no contents; ignored"
	if strings.Join(got, "\n") != wantAll {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), wantAll)
	}
	if tree.render() != "" {
		t.Errorf("refused block left %q", tree.render())
	}

	cand := &jnode{}
	errs = applySetLines(cand, "terminal", "set protocols ospf topology default metric 65450\n", regexp.MustCompile(`metric`))
	if len(errs) != 1 || errs[0].String() != "terminal:1:(36) syntax error: metric" {
		t.Errorf("set errors %q", errs)
	}

	_, errs = parseJunos("terminal", "system {\n    host-name r1\n}\n", nil)
	if len(errs) == 0 || !strings.HasPrefix(errs[0].String(), "terminal:2:(13) syntax error: host-name") {
		t.Errorf("missing semicolon: %q", errs)
	}
}

func TestJunosCompareAndEdits(t *testing.T) {
	active, _ := parseJunos("a", "system {\n    host-name r1;\n    services {\n        ssh;\n    }\n}\nprotocols {\n    ospf {\n        area 0.0.0.0;\n    }\n}\n", nil)
	cand := active.clone()
	cand.applySet(strings.Fields("system host-name r2"))
	cand.applySet(strings.Fields("protocols ospf topology default"))
	if !cand.applyDelete(strings.Fields("system services")) {
		t.Fatal("delete of system services found nothing")
	}
	if cand.applyDelete(strings.Fields("system ntp")) {
		t.Error("delete of a missing statement reported success")
	}
	got := compareJunos(active, cand)
	want := "[edit system]\n-  host-name r1;\n-  services {\n-      ssh;\n-  }\n+  host-name r2;\n[edit protocols ospf]\n+    topology default;\n"
	if got != want {
		t.Errorf("compare:\n%s\nwant:\n%s", got, want)
	}
	if compareJunos(active, active.clone()) != "" {
		t.Error("no change compares as a change")
	}

	merged := active.clone()
	more, _ := parseJunos("m", "system {\n    host-name r3;\n    ntp {\n        server 192.0.2.1;\n    }\n}\n", nil)
	merged.merge(more)
	if r := merged.render(); !strings.Contains(r, "host-name r3;") || strings.Contains(r, "host-name r1;") || !strings.Contains(r, "server 192.0.2.1;") || !strings.Contains(r, "ssh;") {
		t.Errorf("merge gave:\n%s", r)
	}
	dropped := active.clone()
	dropped.dropLines(regexp.MustCompile(`^services`))
	if strings.Contains(dropped.render(), "ssh") {
		t.Error("dropLines kept the dropped block")
	}
}
