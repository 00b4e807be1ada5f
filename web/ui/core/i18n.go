package core

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"sort"

	"golang.org/x/text/language"

	"backupd/embed"
	"backupd/web"
)

// Languages of the interface; the first is the default. Each area of the
// interface has a catalog embed/i18n/ui/<area>.<lang>.json per language,
// and together they hold every key.
var Languages = []string{"en", "zh"}

const defaultLang = "en"

// htmlLang is the <html lang> of each language: Simplified Chinese, so
// that browsers pick its glyphs.
var htmlLang = map[string]string{"en": "en", "zh": "zh-CN"}

// catalog maps language → key → text. Texts with arguments use fmt verbs
// (%d, %s; %[2]s to reorder).
type catalog map[string]map[string]string

// loadCatalog reads every area's catalogs, refuses a key two areas both
// define, and checks that the languages hold the same keys.
func loadCatalog() (catalog, error) {
	c := catalog{}
	for _, lang := range Languages {
		files, err := fs.Glob(embed.I18n, "i18n/ui/*."+lang+".json")
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("no catalog i18n/ui/*.%s.json", lang)
		}
		m := map[string]string{}
		from := map[string]string{}
		for _, f := range files {
			raw, err := fs.ReadFile(embed.I18n, f)
			if err != nil {
				return nil, err
			}
			area := map[string]string{}
			if err := json.Unmarshal(raw, &area); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			for k, v := range area {
				if prev, dup := from[k]; dup {
					return nil, fmt.Errorf("key %q is in both %s and %s", k, prev, f)
				}
				m[k], from[k] = v, f
			}
		}
		c[lang] = m
	}
	for _, lang := range Languages[1:] {
		if missing := missingKeys(c[defaultLang], c[lang]); len(missing) > 0 {
			return nil, fmt.Errorf("the %s catalogs lack %d keys of the %s ones: %v", lang, len(missing), defaultLang, missing)
		}
		if extra := missingKeys(c[lang], c[defaultLang]); len(extra) > 0 {
			return nil, fmt.Errorf("the %s catalogs have %d keys the %s ones lack: %v", lang, len(extra), defaultLang, extra)
		}
	}
	return c, nil
}

// missingKeys lists the keys of want that have no text in have.
func missingKeys(want, have map[string]string) []string {
	var out []string
	for k := range want {
		if have[k] == "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func mustLoadCatalog() catalog {
	c, err := loadCatalog()
	if err != nil {
		panic("web/ui: " + err.Error())
	}
	return c
}

// text returns key's text in lang, formatted with args. A key no catalog
// knows shows as itself, which the translation test catches.
func (c catalog) text(lang, key string, args ...any) string {
	s, ok := c[lang][key]
	if !ok {
		if s, ok = c[defaultLang][key]; !ok {
			s = key
		}
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

var langMatcher = language.NewMatcher([]language.Tag{language.English, language.Chinese})

// negotiateLang picks the language of a request: the lang cookie the
// switcher sets, else the best of Accept-Language, else English.
func (u *UI) negotiateLang(r *http.Request) string {
	if c, err := r.Cookie(langCookie); err == nil && supportedLang(c.Value) {
		return c.Value
	}
	return langFromAccept(r.Header.Get("Accept-Language"))
}

func langFromAccept(header string) string {
	if header == "" {
		return defaultLang
	}
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil || len(tags) == 0 {
		return defaultLang
	}
	_, i, conf := langMatcher.Match(tags...)
	if conf == language.No {
		return defaultLang
	}
	return Languages[i]
}

func supportedLang(l string) bool {
	for _, s := range Languages {
		if s == l {
			return true
		}
	}
	return false
}

// SetLanguage is the switcher (POST /lang): it remembers the choice in
// the lang cookie for a year and goes back to the page it was on.
func (u *UI) SetLanguage(w http.ResponseWriter, r *http.Request) error {
	lang := r.PostFormValue("lang")
	if !supportedLang(lang) {
		return &PageError{Status: http.StatusBadRequest, Message: keyErrBadLanguage}
	}
	http.SetCookie(w, &http.Cookie{
		Name: langCookie, Value: lang, Path: "/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, Secure: web.IsHTTPS(r), SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, LocalPath(r.PostFormValue("next"), "/"), http.StatusSeeOther)
	return nil
}
