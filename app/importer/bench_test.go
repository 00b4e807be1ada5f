package importer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"backupd/app/importer"
)

// routerDB20k is a real-world-shaped Oxidized router.db of n device lines:
// a comment every 50 lines, blank lines, CRLF, a few models, groups and
// logins, and some lines to skip (unknown models, duplicates).
func routerDB20k(n int) (string, int) {
	models := []string{"ios", "nxos", "junos", "eos", "routeros", "fortios", "procurve", "vrp"}
	var b strings.Builder
	skipped := 0
	for i := range n {
		if i%50 == 0 {
			fmt.Fprintf(&b, "# rack %d\r\n\r\n", i/50)
		}
		switch {
		case i%1000 == 999:
			fmt.Fprintf(&b, "odd-%d:nosuchmodel:site%d\r\n", i, i%20)
			skipped++
		case i%1000 == 998:
			fmt.Fprintf(&b, "dev-%d:ios:site%d\r\n", i-1, i%20)
			skipped++
		default:
			fmt.Fprintf(&b, "dev-%d:%s:site%d:user%d:pw%d\r\n", i, models[i%len(models)], i%20, i%5, i%7)
		}
	}
	return b.String(), skipped
}

func TestImport20000Lines(t *testing.T) {
	ctx := context.Background()
	store, sealer := openData(t)
	file, skipped := routerDB20k(20_000)
	parsed, err := importer.ParseOxidized([]byte(file), ":", importer.LegacyMap())
	if err != nil {
		t.Fatal(err)
	}
	p, err := importer.Build(ctx, store, sealer, parsed, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := counts(p), fmt.Sprintf("%d/0/0/%d", 20_000-skipped, skipped); got != want {
		t.Fatalf("counts %s, want %s", got, want)
	}
	if len(p.Groups) != 20 || len(p.Credentials) != 35 {
		t.Errorf("%d groups, %d credentials; want 20 and 35 (5 users x 7 passwords)", len(p.Groups), len(p.Credentials))
	}
	if err := p.Apply(ctx, store, sealer); err != nil {
		t.Fatal(err)
	}
	if n := tableCount(t, store, "devices"); n != 20_000-skipped {
		t.Fatalf("%d devices, want %d", n, 20_000-skipped)
	}
	p, err = importer.Build(ctx, store, sealer, parsed, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := counts(p), fmt.Sprintf("0/0/%d/%d", 20_000-skipped, skipped); got != want {
		t.Fatalf("second plan counts %s, want %s", got, want)
	}
}

// BenchmarkImportRouterDB: parse, plan and apply a 20,000-line router.db
// into an empty data directory (opening it is not timed).
func BenchmarkImportRouterDB(b *testing.B) {
	ctx := context.Background()
	file, _ := routerDB20k(20_000)
	data := []byte(file)
	for b.Loop() {
		b.StopTimer()
		store, sealer := openData(b)
		b.StartTimer()
		parsed, err := importer.ParseOxidized(data, ":", importer.LegacyMap())
		if err != nil {
			b.Fatal(err)
		}
		p, err := importer.Build(ctx, store, sealer, parsed, "", "")
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Apply(ctx, store, sealer); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		store.Close()
		b.StartTimer()
	}
}
