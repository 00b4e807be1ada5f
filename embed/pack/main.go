// Command pack writes the archive a release build embeds (build tag
// "packed"): every file of the tree's migrations, translations, docs page
// and web interface. `make dist` runs it; the archive is not committed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"

	"backupd/embed"
)

func main() {
	out := flag.String("o", "embed/packed.gz", "where to write the archive")
	flag.Parse()
	var buf bytes.Buffer
	if err := embed.WriteArchive(&buf, embed.Tree()); err != nil {
		fmt.Fprintln(os.Stderr, "pack:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "pack:", err)
		os.Exit(1)
	}
	n := 0
	_ = fs.WalkDir(embed.Tree(), ".", func(_ string, d fs.DirEntry, _ error) error {
		if d != nil && !d.IsDir() {
			n++
		}
		return nil
	})
	fmt.Printf("%s: %d files, %d bytes\n", *out, n, buf.Len())
}
