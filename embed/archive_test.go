package embed

import (
	"bytes"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"
)

// TestPackedMatchesTree packs the tree as `make dist` does, opens the
// archive as a release build does, and checks that it is a correct file
// system serving exactly the tree's files, byte for byte, through the
// calls the product makes (Glob, Sub, ReadFile, ServeFileFS).
func TestPackedMatchesTree(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteArchive(&buf, Tree()); err != nil {
		t.Fatal(err)
	}
	packed, err := OpenArchive(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	raw := 0
	for _, fsys := range []fs.FS{Migrations, I18n, Docs, UI} {
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			want, _ := fs.ReadFile(fsys, p)
			got, err := fs.ReadFile(packed, p)
			if err != nil {
				t.Errorf("%s: not in the archive: %v", p, err)
			} else if !bytes.Equal(got, want) {
				t.Errorf("%s: archive content differs", p)
			}
			names = append(names, p)
			raw += len(want)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(names) < 50 {
		t.Fatalf("only %d files in the tree", len(names))
	}
	if err := fstest.TestFS(packed, names...); err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"migrations/*.sql", "i18n/ui/*.zh.json", "ui/templates/*.html"} {
		a, _ := fs.Glob(Tree(), pattern)
		b, _ := fs.Glob(packed, pattern)
		if len(a) == 0 || len(a) != len(b) {
			t.Errorf("Glob(%q): %d in the tree, %d in the archive", pattern, len(a), len(b))
		}
	}
	sub, err := fs.Sub(packed, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := fs.Glob(sub, "*.sql"); len(m) == 0 {
		t.Error("fs.Sub of the archive finds no migrations")
	}
	rec := httptest.NewRecorder()
	http.ServeFileFS(rec, httptest.NewRequest("GET", "/docs/init.js", nil), packed, "docs/init.js")
	if want, _ := fs.ReadFile(Docs, "docs/init.js"); rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), want) {
		t.Errorf("ServeFileFS from the archive: %d, %d bytes", rec.Code, rec.Body.Len())
	}
	t.Logf("%d files, %d bytes in the tree, %d bytes packed", len(names), raw, buf.Len())

	// A damaged archive is refused, not half read.
	if _, err := OpenArchive(buf.Bytes()[:buf.Len()/2]); err == nil {
		t.Error("a truncated archive opened")
	}
}
