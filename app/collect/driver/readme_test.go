package driver_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/devsim"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the platform table in README.md from the registry")

const (
	tableBegin = "<!-- platforms:begin (generated from app/collect/driver by TestREADMEPlatformTable; go test ./app/collect/driver -run README -update-readme) -->"
	tableEnd   = "<!-- platforms:end -->"
)

// platformTable renders the README's platform table from the registry:
// each platform with what it is proven on, a recording of a real device
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

// TestREADMEPlatformTable keeps the README's platform table equal to the
// registry, so that it cannot drift.
func TestREADMEPlatformTable(t *testing.T) {
	const path = "../../../README.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i, j := strings.Index(readme, tableBegin), strings.Index(readme, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the platform table markers %q … %q", tableBegin, tableEnd)
	}
	want := platformTable(t)
	got := readme[i+len(tableBegin)+1 : j]
	if got == want {
		return
	}
	if *updateREADME {
		if err := os.WriteFile(path, []byte(readme[:i+len(tableBegin)+1]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's platform table is out of date: run go test ./app/collect/driver -run README -update-readme\ngot:\n%s\nwant:\n%s", got, want)
}
