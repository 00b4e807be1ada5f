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

	"github.com/danielgtaylor/huma/v2"

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
	raw, err := fs.ReadFile(embed.I18n, "i18n/openapi.zh.json")
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
			if k == "examples" {
				exampleObjects(val, fn)
				continue
			}
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

// exampleObjects lets fn replace the summary and description of each
// OpenAPI Example Object in a map of them (a media type's examples). The
// example values are data and stay as they are; a JSON Schema "examples"
// (an array of values) is left alone entirely.
func exampleObjects(v any, fn func(string) string) {
	named, ok := v.(map[string]any)
	if !ok {
		return
	}
	for _, ex := range named {
		obj, ok := ex.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range []string{"summary", "description"} {
			if s, ok := obj[k].(string); ok {
				obj[k] = fn(s)
			}
		}
	}
}

// Versions of the OpenAPI document that are served: the generated 3.1 one
// at /openapi.json and its 3.0 downgrade, for older tools, at
// /openapi-3.0.json.
const (
	Version31 = "3.1"
	Version30 = "3.0"
)

// documents renders the served documents once per version and language.
type documents struct {
	once sync.Once
	api  *API
	docs map[string][]byte // by version + " " + language
	err  error
}

// Document renders the OpenAPI document of a version ("3.1" or "3.0") in a
// language of Languages.
func (a *API) Document(version, lang string) ([]byte, error) {
	var raw []byte
	var err error
	switch version {
	case Version31:
		raw, err = json.Marshal(a.OpenAPI())
	case Version30:
		raw, err = downgrade(a.OpenAPI())
	default:
		return nil, fmt.Errorf("no OpenAPI version %q", version)
	}
	if err != nil || lang == Languages[0] {
		return raw, err
	}
	table, err := Translations()
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	ProseStrings(doc, func(s string) string {
		if zh, ok := table[s]; ok {
			return zh
		}
		return s
	})
	return json.Marshal(doc)
}

// downgrade is Huma's 3.0 downgrade with one more step: a $ref with a
// description beside it (which 3.0 ignores, and linters flag) becomes an
// allOf of the one reference, which keeps the description.
func downgrade(o *huma.OpenAPI) ([]byte, error) {
	raw, err := o.Downgrade()
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	wrapRefSiblings(doc)
	return json.Marshal(doc)
}

func wrapRefSiblings(v any) {
	switch t := v.(type) {
	case map[string]any:
		if ref, ok := t["$ref"]; ok && len(t) > 1 {
			delete(t, "$ref")
			t["allOf"] = []any{map[string]any{"$ref": ref}}
		}
		for k, val := range t {
			if dataKeys[k] {
				continue
			}
			wrapRefSiblings(val)
		}
	case []any:
		for _, item := range t {
			wrapRefSiblings(item)
		}
	}
}

func (d *documents) get(version, lang string) ([]byte, error) {
	d.once.Do(func() {
		d.docs = map[string][]byte{}
		for _, v := range []string{Version31, Version30} {
			for _, l := range Languages {
				doc, err := d.api.Document(v, l)
				if err != nil {
					d.err = err
					return
				}
				d.docs[v+" "+l] = doc
			}
		}
	})
	if d.err != nil {
		return nil, d.err
	}
	return d.docs[version+" "+lang], nil
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

// MountDocs serves /openapi.json, its OpenAPI 3.0 downgrade
// /openapi-3.0.json, and /docs (Swagger UI from embedded assets). Like the
// contract's /openapi.json and /docs, they need no API key.
func (a *API) MountDocs(mux *http.ServeMux) {
	docs := &documents{api: a}
	log := a.deps.Log
	if log == nil {
		log = slog.Default()
	}
	serve := func(version string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, err := docs.get(version, language(r))
			if err != nil {
				log.Error("render openapi document", "version", version, "err", err)
				http.Error(w, "internal server error", http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-cache")
			_, _ = w.Write(body)
		}
	}
	mux.HandleFunc("GET /openapi.json", serve(Version31))
	mux.HandleFunc("GET /openapi-3.0.json", serve(Version30))
	mux.HandleFunc("GET /docs", func(w http.ResponseWriter, r *http.Request) {
		lang := language(r)
		title, back := "backupd API", "← Back to backupd"
		if lang == "zh" {
			title, back = "backupd API 文档", "← 返回 backupd"
		}
		var buf bytes.Buffer
		if err := docsPage.Execute(&buf, map[string]string{
			"Lang": lang, "Title": title, "Back": back, "SpecURL": "/openapi.json?lang=" + lang,
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
	sub, err := fs.Sub(embed.DocsAssets, "docs/swagger-ui")
	if err != nil {
		panic(err) // a constant path into the binary's own files
	}
	assets, err := loadDocsAssets(sub)
	if err != nil {
		panic(err) // the binary's own files; TestDocsAssets loads them
	}
	mux.HandleFunc("GET /docs/assets/{name}", func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		a.serve(w, r)
	})
}
