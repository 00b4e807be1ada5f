//go:build !packed

package embed

import (
	"embed"
	"io/fs"
)

// The files as they are in the tree; Packed() lists the same patterns.

//go:embed migrations/*.sql migrations/postgres/*.sql
var treeMigrations embed.FS

//go:embed i18n/*.json i18n/ui/*.json
var treeI18n embed.FS

//go:embed docs/index.html docs/init.js
var treeDocs embed.FS

//go:embed ui/templates/*.html ui/static/*
var treeUI embed.FS

func init() {
	Migrations, I18n, Docs, UI = treeMigrations, treeI18n, treeDocs, treeUI
}

// Tree returns the files of all four as one file system: what the packed
// archive of a release build holds.
func Tree() fs.FS {
	files := map[string][]byte{}
	for _, fsys := range []fs.FS{treeMigrations, treeI18n, treeDocs, treeUI} {
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files[p], err = fs.ReadFile(fsys, p)
			return err
		})
		if err != nil {
			panic("embed: reading the embedded tree: " + err.Error())
		}
	}
	return newMemFS(files)
}
