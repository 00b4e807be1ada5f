package apiv1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"

	"backupd/embed"
)

// Languages the description is served in; the first is the default.
var Languages = []string{"en", "zh"}

// translatedKeys are the OpenAPI keys whose string values are prose.
var translatedKeys = map[string]bool{"summary": true, "description": true, "title": true}

// dataKeys hold example or literal values, never prose, however they look.
var dataKeys = map[string]bool{"example": true, "examples": true, "default": true, "enum": true, "const": true}

// Translations returns the zh table: English text → Chinese text.
func Translations() (map[string]string, error) {
	raw, err := embed.I18n.ReadFile("i18n/openapi.zh.json")
	if err != nil {
		return nil, err
	}
	table := map[string]string{}
	if err := json.Unmarshal(raw, &table); err != nil {
		return nil, fmt.Errorf("openapi.zh.json: %w", err)
	}
	return table, nil
}

// ProseStrings calls fn for every translatable string of a decoded OpenAPI
// document, letting fn replace it.
func ProseStrings(v any, fn func(string) string) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if dataKeys[k] {
				continue
			}
			if s, ok := val.(string); ok && translatedKeys[k] {
				t[k] = fn(s)
				continue
			}
			// Properties are named by the schema, not prose, even when a
			// property is called "description" or "title".
			t[k] = ProseStrings(val, fn)
		}
	case []any:
		for i := range t {
			t[i] = ProseStrings(t[i], fn)
		}
	}
	return v
}

// documents renders /openapi.json once per language.
type documents struct {
	once  sync.Once
	api   *API
	byLng map[string][]byte
	err   error
}

func (d *documents) get(lang string) ([]byte, error) {
	d.once.Do(func() {
		d.byLng = map[string][]byte{}
		en, err := json.Marshal(d.api.OpenAPI())
		if err != nil {
			d.err = err
			return
		}
		d.byLng["en"] = en
		table, err := Translations()
		if err != nil {
			d.err = err
			return
		}
		var doc any
		if err := json.Unmarshal(en, &doc); err != nil {
			d.err = err
			return
		}
		ProseStrings(doc, func(s string) string {
			if zh, ok := table[s]; ok {
				return zh
			}
			return s
		})
		zh, err := json.Marshal(doc)
		if err != nil {
			d.err = err
			return
		}
		d.byLng["zh"] = zh
	})
	if d.err != nil {
		return nil, d.err
	}
	return d.byLng[lang], nil
}

// language picks a supported language from ?lang=, defaulting to English.
func language(r *http.Request) string {
	lang := r.URL.Query().Get("lang")
	for _, l := range Languages {
		if l == lang {
			return l
		}
	}
	return Languages[0]
}

var docsPage = template.Must(template.ParseFS(embed.Docs, "docs/index.html"))

// MountDocs serves /openapi.json and /docs (Swagger UI from embedded assets).
func (a *API) MountDocs(mux *http.ServeMux) {
	docs := &documents{api: a}
	log := a.deps.Log
	if log == nil {
		log = slog.Default()
	}
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		body, err := docs.get(language(r))
		if err != nil {
			log.Error("render openapi document", "err", err)
			http.Error(w, "internal server error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(body)
	})
	mux.HandleFunc("GET /docs", func(w http.ResponseWriter, r *http.Request) {
		lang := language(r)
		title := "backupd API"
		if lang == "zh" {
			title = "backupd API 文档"
		}
		var buf bytes.Buffer
		if err := docsPage.Execute(&buf, map[string]string{
			"Lang": lang, "Title": title, "SpecURL": "/openapi.json?lang=" + lang,
		}); err != nil {
			log.Error("render docs page", "err", err)
			http.Error(w, "internal server error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		_, _ = w.Write(buf.Bytes())
	})
	mux.HandleFunc("GET /docs/init.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, embed.Docs, "docs/init.js")
	})
	// Only the embedded files, by name: no directory listing, and nothing
	// of Swagger UI that the page does not load.
	assets, err := fs.Sub(embed.DocsAssets, "docs/swagger-ui")
	if err != nil {
		panic(err) // a constant path into the binary's own files
	}
	mux.HandleFunc("GET /docs/assets/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if !fs.ValidPath(name) || name == "." {
			http.NotFound(w, r)
			return
		}
		if info, err := fs.Stat(assets, name); err != nil || info.IsDir() {
			http.NotFound(w, r)
			return
		}
		http.ServeFileFS(w, r, assets, name)
	})
}
