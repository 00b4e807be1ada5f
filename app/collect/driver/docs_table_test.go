package driver_test

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/devsim"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated platform table in docs/platforms.md and the platform count in README.md from the registry")

const (
	tableBegin   = "<!-- platforms:begin (generated from app/collect/driver by TestDocsPlatformTable; go test ./app/collect/driver -run DocsPlatformTable -update-docs) -->"
	tableEnd     = "<!-- platforms:end -->"
	countBegin   = "<!-- platform-count:begin (generated from app/collect/driver by TestDocsPlatformTable; go test ./app/collect/driver -run DocsPlatformTable -update-docs) -->"
	countEnd     = "<!-- platform-count:end -->"
	secretsBegin = "<!-- secrets:begin (generated from app/collect/driver by TestDocsPlatformTable; go test ./app/collect/driver -run DocsPlatformTable -update-docs) -->"
	secretsEnd   = "<!-- secrets:end -->"
	namesBegin   = "<!-- platform-names:begin (generated from app/collect/driver by TestDocsPlatformTable; go test ./app/collect/driver -run DocsPlatformTable -update-docs) -->"
	namesEnd     = "<!-- platform-names:end -->"
)

// platformTable renders the platform table of docs/platforms.md from the
// registry: a first line with the count (README.md repeats it), then each
// platform with what it is proven on, a recording of a real device
// (replayed by TestReplayCaptures) or the simulator (app/devsim).
func platformTable(t *testing.T) string {
	captured := driver.CapturesByPlatform()
	simulated := map[string]bool{}
	for _, id := range devsim.Platforms() {
		simulated[id] = true
	}
	var b strings.Builder
	all := driver.Builtins()
	real := 0
	for _, p := range all {
		if len(captured[p.ID]) > 0 {
			real++
		}
	}
	fmt.Fprintf(&b, "%d platforms; %d of them proven on recorded sessions of real devices, the others on the simulator.\n\n", len(all), real)
	b.WriteString("| ID | Vendor | Platform | Transports | Default commands | Tested against |\n|---|---|---|---|---|---|\n")
	for _, p := range all {
		var proof []string
		if n := len(captured[p.ID]); n > 0 {
			proof = append(proof, fmt.Sprintf("real device (%d capture%s)", n, map[bool]string{true: "s"}[n > 1]))
		}
		if simulated[p.ID] {
			proof = append(proof, "simulator")
		}
		if len(proof) == 0 {
			t.Errorf("%s: proven on nothing: add a recording (replay_*_test.go) or a simulator personality (app/devsim)", p.ID)
		}
		cmds := strings.Split(p.DefaultCommands, "\n")
		for i, c := range cmds {
			cmds[i] = "`" + strings.ReplaceAll(c, "|", `\|`) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", p.ID, p.Vendor, p.Name,
			strings.Join(p.TransportList(), ", "), strings.Join(cmds, "<br>"), strings.Join(proof, ", "))
	}
	return b.String()
}

// platformCount is the first line of the platform table: how many
// platforms there are and how many of them real devices prove.
func platformCount(table string) string {
	line, _, _ := strings.Cut(table, "\n")
	return line + "\n"
}

// TestDocsPlatformTable keeps the platform table of docs/platforms.md and
// the platform count on README.md's front page equal to the registry, so
// that neither can drift.
func TestDocsPlatformTable(t *testing.T) {
	table := platformTable(t)
	checkGenerated(t, "../../../docs/platforms.md", tableBegin, tableEnd, table)
	checkGenerated(t, "../../../README.md", countBegin, countEnd, platformCount(table))
	checkGenerated(t, "../../../docs/platforms.md", namesBegin, namesEnd, platformNames())
	checkGenerated(t, "../../../README.md", secretsBegin, secretsEnd, secretsTable())
}

// secretsTable lists what each built-in platform's secret rules mask,
// by their names: the README's "Secrets in configurations".
func secretsTable() string {
	var b strings.Builder
	b.WriteString("| Platform | What is masked |\n|---|---|\n")
	for _, p := range driver.Builtins() {
		var names []string
		for _, r := range p.SecretSet().Rules() {
			if !slices.Contains(names, r.Name) {
				names = append(names, r.Name)
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", p.ID, strings.Join(names, ", "))
	}
	return b.String()
}

// platformNames renders the names each platform imports under (the
// Oxidized models and RANCID types of foreign_names_test.go, and its
// other aliases), then the models and types no platform has yet.
func platformNames() string {
	var b strings.Builder
	b.WriteString("| Platform | Oxidized models | RANCID types | Other names |\n|---|---|---|---|\n")
	code := func(names []string) string {
		for i, n := range names {
			names[i] = "`" + n + "`"
		}
		return strings.Join(names, ", ")
	}
	of := func(list []foreignName, id string) []string {
		var names []string
		for _, n := range list {
			if n.platform == id {
				names = append(names, n.name)
			}
		}
		return names
	}
	for _, p := range driver.Builtins() {
		ox, rancid := of(oxidizedModels, p.ID), of(rancidTypes, p.ID)
		var other []string
		for _, a := range p.Aliases {
			if !slices.Contains(ox, a) && !slices.Contains(rancid, a) {
				other = append(other, a)
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", p.ID, code(ox), code(rancid), code(other))
	}
	unsupported := func(tool string, list []foreignName) {
		var names []string
		for _, n := range list {
			if n.platform == "" {
				names = append(names, fmt.Sprintf("`%s` (%s)", n.name, n.what))
			}
		}
		fmt.Fprintf(&b, "\n%s (%d of %d): %s.\n", tool, len(names), len(list), strings.Join(names, ", "))
	}
	b.WriteString("\n**Not supported yet.** A line naming one of these is skipped as an unknown model; a\n" +
		"[custom platform](#custom-platforms) can take its devices (write its ID in the file).\n")
	unsupported("RANCID 3.13 types", rancidTypes)
	unsupported("Oxidized models", oxidizedModels)
	return b.String()
}

// checkGenerated compares the text between the markers begin and end (each
// on a line of its own) in the file at path with want, and with
// -update-docs writes want there.
func checkGenerated(t *testing.T, path, begin, end, want string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, begin+"\n"), strings.Index(doc, end)
	if i < 0 || j < i+len(begin)+1 {
		t.Fatalf("%s lacks the generated-text markers %q … %q", path, begin, end)
	}
	got := doc[i+len(begin)+1 : j]
	if got == want {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)+1]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is out of date: run go test ./app/collect/driver -run Docs -update-docs\ngot:\n%s\nwant:\n%s", path, got, want)
}
