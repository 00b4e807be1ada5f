package cli_test

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"backupd/app/insync"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated parts of docs/inventory-sync.md")

const (
	platformsBegin = "<!-- inventory-platforms:begin (generated from insync.DefaultPlatforms by TestDocsInventoryPlatforms; go test ./app/cli -run DocsInventoryPlatforms -update-docs) -->"
	platformsEnd   = "<!-- inventory-platforms:end -->"
)

// platformTable renders insync.DefaultPlatforms: one row per backupd
// platform, the source names that map to it.
func platformTable() string {
	by := map[string][]string{}
	for slug, id := range insync.DefaultPlatforms {
		by[id] = append(by[id], slug)
	}
	var b strings.Builder
	b.WriteString("| backupd platform | Source names mapped to it |\n|---|---|\n")
	for _, id := range slices.Sorted(maps.Keys(by)) {
		slugs := by[id]
		slices.Sort(slugs)
		fmt.Fprintf(&b, "| `%s` | `%s` |\n", id, strings.Join(slugs, "`, `"))
	}
	return b.String()
}

// TestDocsInventoryPlatforms keeps the default mapping table of
// docs/inventory-sync.md equal to insync.DefaultPlatforms.
func TestDocsInventoryPlatforms(t *testing.T) {
	const path = "../../docs/inventory-sync.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, want := string(raw), platformTable()
	i, j := strings.Index(doc, platformsBegin+"\n"), strings.Index(doc, platformsEnd)
	if i < 0 || j < i+len(platformsBegin)+1 {
		t.Fatalf("%s lacks the generated-text markers %q … %q", path, platformsBegin, platformsEnd)
	}
	got := doc[i+len(platformsBegin)+1 : j]
	if got == want {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(path, []byte(doc[:i+len(platformsBegin)+1]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is out of date: run go test ./app/cli -run DocsInventoryPlatforms -update-docs\ngot:\n%s\nwant:\n%s", path, got, want)
}
