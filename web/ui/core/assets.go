package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"backupd/embed"
)

// assets are the static files, held in memory (they are small), with a
// content hash for each URL. The style sheets under css/ are served as
// one app.css and the scripts under js/ as one app.js, each in file-name
// order, so that every area of the interface keeps its own file and a
// page still loads one of each.
type assets struct {
	files  map[string][]byte
	hashes map[string]string
}

// bundles are the served files made of a folder's files.
var bundles = []struct{ name, dir, ext string }{
	{"app.css", "css", ".css"},
	{"app.js", "js", ".js"},
}

func mustLoadAssets() assets {
	a, err := loadAssets()
	if err != nil {
		panic("web/ui: " + err.Error())
	}
	return a
}

func loadAssets() (assets, error) {
	fsys, err := fs.Sub(embed.UI, "ui/static")
	if err != nil {
		return assets{}, err
	}
	a := assets{files: map[string][]byte{}, hashes: map[string]string{}}
	bundled := map[string]*bytes.Buffer{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		for _, bu := range bundles {
			if path.Dir(p) == bu.dir && path.Ext(p) == bu.ext {
				// WalkDir goes in lexical order: the bundle is in file-name
				// order.
				if bundled[bu.name] == nil {
					bundled[bu.name] = &bytes.Buffer{}
				}
				fmt.Fprintf(bundled[bu.name], "/* %s */\n", p)
				bundled[bu.name].Write(b)
				bundled[bu.name].WriteString("\n")
				return nil
			}
		}
		a.files[p] = b
		return nil
	})
	if err != nil {
		return assets{}, err
	}
	for _, bu := range bundles {
		if bundled[bu.name] == nil {
			return assets{}, errors.New("no files in static/" + bu.dir)
		}
		a.files[bu.name] = bundled[bu.name].Bytes()
	}
	for name, b := range a.files {
		sum := sha256.Sum256(b)
		a.hashes[name] = hex.EncodeToString(sum[:6])
	}
	return a, nil
}

func (a assets) url(name string) string {
	h, ok := a.hashes[name]
	if !ok {
		// A template names a file that does not exist: the page test
		// catches it as a 404 on the URL.
		return "/static/" + name
	}
	return "/static/" + name + "?v=" + h
}

// handler serves the static files, cached for a year (their URLs change
// with their content), no directory listings.
func (a assets) handler() http.Handler {
	start := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		name := strings.TrimPrefix(r.URL.Path, "/static/")
		b, ok := a.files[name]
		if !ok {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Set("ETag", `"`+a.hashes[name]+`"`)
		http.ServeContent(w, r, name, start, bytes.NewReader(b))
	})
}
