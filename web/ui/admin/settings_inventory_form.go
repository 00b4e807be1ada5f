package admin

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"backupd/app/insync"
	"backupd/app/secret"
	"backupd/db"
	"backupd/web/ui/core"
)

// The inventory source form: what a person typed, or a stored source
// shown for editing, turned into a source's settings and checked before
// it is stored. The token is never part of the form that comes back.

// inventoryForm is the add and edit form as stored or as typed; the
// token is never in it.
type inventoryForm struct {
	ID   int64
	Name string
	Kind string
	// NetBox's fields; lists are comma-separated.
	NBURL, NBSite, NBRole, NBTag, NBStatus, NBQuery  string
	NBHostFrom, NBPlatformFrom, NBGroupFrom          string
	NBCredentialFrom, NBTemplateFrom, NBCAFile       string
	HTTPURL, HTTPHostsLocation, HTTPMap, HTTPVarsMap string
	HTTPPagination, HTTPNextPath, HTTPPageParam      string
	HTTPStart, HTTPTokenHeader, HTTPTokenPrefix      string
	HTTPCAFile                                       string
	Oxidized                                         string
	// Mapping is one "slug = platform" a line.
	Mapping                           string
	LoginMethod, Credential, Template string
	Claim, Enabled                    bool
	Interval                          string
	HasToken, ClearToken              bool
	// Error is a refusal's message key with Args; Detail the settings
	// check's own sentence (English), when it said more.
	Error  string
	Args   []any
	Detail string
}

// askedKind is the kind the form shows: the one its kind links ask for
// (?kind=, the way to another kind without JavaScript), else def.
func askedKind(r *http.Request, def string) string {
	if k := r.URL.Query().Get("kind"); insyncKindKeys[k] != "" {
		return k
	}
	return def
}

// formOfSource is the form as the source is stored.
func formOfSource(src db.InventorySource) inventoryForm {
	f := inventoryForm{ID: src.ID, Name: src.Name, Kind: src.Kind, Enabled: src.Enabled, Interval: strconv.Itoa(src.IntervalMinutes),
		HasToken: len(src.Token) > 0, HTTPPagination: insync.PageNone}
	cfg, err := insync.ParseConfig(src.Config)
	if err != nil {
		return f
	}
	if n := cfg.NetBox; n != nil {
		f.NBURL, f.NBSite, f.NBRole, f.NBTag = n.URL, strings.Join(n.Site, ", "), strings.Join(n.Role, ", "), strings.Join(n.Tag, ", ")
		f.NBStatus, f.NBQuery, f.NBHostFrom, f.NBPlatformFrom = n.Status, n.Query, n.HostFrom, n.PlatformFrom
		f.NBGroupFrom, f.NBCredentialFrom, f.NBTemplateFrom, f.NBCAFile = strings.Join(n.GroupFrom, ", "), n.CredentialFrom, n.TemplateFrom, n.CAFile
	}
	if h := cfg.HTTP; h != nil {
		if h.Preset == "librenms" {
			f.Kind = formKindLibreNMS
		}
		f.HTTPURL, f.HTTPHostsLocation, f.HTTPMap, f.HTTPVarsMap = h.URL, h.HostsLocation, pairLines(h.Map), pairLines(h.VarsMap)
		f.HTTPPagination, f.HTTPNextPath, f.HTTPPageParam = h.Pagination.Kind, h.Pagination.NextPath, h.Pagination.PageParam
		if f.HTTPPagination == "" {
			f.HTTPPagination = insync.PageNone
		}
		if h.Pagination.Start != 0 {
			f.HTTPStart = strconv.Itoa(h.Pagination.Start)
		}
		f.HTTPTokenHeader, f.HTTPTokenPrefix, f.HTTPCAFile = h.TokenHeader, h.TokenPrefix, h.CAFile
	}
	f.Mapping = pairLines(cfg.Mapping)
	f.LoginMethod, f.Credential, f.Template, f.Claim = cfg.Defaults.LoginMethod, cfg.Defaults.Credential, cfg.Defaults.Template, cfg.Claim
	return f
}

// pairLines writes a map as "key = value" lines, by key.
func pairLines(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b.WriteString(k + " = " + m[k] + "\n")
	}
	return b.String()
}

// parsePairs reads "key = value" lines (blank lines skipped); bad is the
// first line that is not one.
func parsePairs(text string) (m map[string]string, bad string) {
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, line
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = v
	}
	return m, ""
}

// splitComma reads a comma-separated list.
func splitComma(s string) []string {
	var out []string
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// typedForm reads the form as posted.
func typedForm(r *http.Request) inventoryForm {
	t := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	text := func(name string) string { v, _ := core.Field(r, name, maxInventoryTextChars+1); return v }
	return inventoryForm{
		Name: t("name"), Kind: t("kind"),
		NBURL: t("nb_url"), NBSite: t("nb_site"), NBRole: t("nb_role"), NBTag: t("nb_tag"), NBStatus: t("nb_status"),
		NBQuery: t("nb_query"), NBHostFrom: t("nb_host_from"), NBPlatformFrom: t("nb_platform_from"), NBGroupFrom: t("nb_group_from"),
		NBCredentialFrom: t("nb_credential_from"), NBTemplateFrom: t("nb_template_from"), NBCAFile: t("nb_ca_file"),
		HTTPURL: t("http_url"), HTTPHostsLocation: t("http_hosts_location"), HTTPMap: text("http_map"), HTTPVarsMap: text("http_vars_map"),
		HTTPPagination: t("http_pagination"), HTTPNextPath: t("http_next_path"), HTTPPageParam: t("http_page_param"),
		HTTPStart: t("http_start"), HTTPTokenHeader: t("http_token_header"), HTTPTokenPrefix: r.PostFormValue("http_token_prefix"),
		HTTPCAFile: t("http_ca_file"), Oxidized: text("oxidized"), Mapping: text("mapping"),
		LoginMethod: t("login_method"), Credential: t("credential"), Template: t("template"),
		Claim: core.Checked(r, "claim"), Enabled: core.Checked(r, "enabled"), Interval: t("interval"),
		ClearToken: core.Checked(r, "clear_token"),
	}
}

// refusal is a sentence the form shows: a message key with its
// arguments, and the settings check's own words when it has some.
type refusal struct {
	key    string
	args   []any
	detail string
}

func (e *refusal) Error() string { return e.key }

func refuse(key string, args ...any) error { return &refusal{key: key, args: args} }

// buildSettings makes the source's kind and settings from the form, on
// top of the stored settings (prev, nil when adding) so that what the
// form does not show (a page size, default ports, extra headers) stays.
// oxToken is the token a pasted Oxidized configuration carries.
func buildSettings(f inventoryForm, prev *insync.SourceConfig) (kind string, cfg insync.SourceConfig, oxToken string, err error) {
	if prev != nil {
		cfg = *prev
	}
	switch f.Kind {
	case formKindNetBox:
		kind = db.InventoryNetBox
		n := insync.NetBoxConfig{}
		if cfg.NetBox != nil {
			n = *cfg.NetBox
		}
		n.URL, n.Site, n.Role, n.Tag, n.Status, n.Query = f.NBURL, splitComma(f.NBSite), splitComma(f.NBRole), splitComma(f.NBTag), f.NBStatus, f.NBQuery
		n.HostFrom, n.PlatformFrom, n.GroupFrom = f.NBHostFrom, f.NBPlatformFrom, splitComma(f.NBGroupFrom)
		n.CredentialFrom, n.TemplateFrom, n.CAFile = f.NBCredentialFrom, f.NBTemplateFrom, f.NBCAFile
		cfg.NetBox, cfg.HTTP = &n, nil
	case formKindHTTP:
		kind = db.InventoryHTTP
		h := insync.HTTPConfig{}
		if cfg.HTTP != nil && cfg.HTTP.Preset == "" {
			h = *cfg.HTTP
		}
		h.URL, h.HostsLocation, h.TokenHeader, h.TokenPrefix, h.CAFile = f.HTTPURL, f.HTTPHostsLocation, f.HTTPTokenHeader, f.HTTPTokenPrefix, f.HTTPCAFile
		var bad string
		if h.Map, bad = parsePairs(f.HTTPMap); bad != "" {
			return "", cfg, "", refuse(keyInsyncErrPairLine, bad)
		}
		if h.VarsMap, bad = parsePairs(f.HTTPVarsMap); bad != "" {
			return "", cfg, "", refuse(keyInsyncErrPairLine, bad)
		}
		h.Pagination.Kind, h.Pagination.NextPath, h.Pagination.PageParam, h.Pagination.Start = f.HTTPPagination, "", "", 0
		switch f.HTTPPagination {
		case insync.PageNext:
			h.Pagination.NextPath = f.HTTPNextPath
		case insync.PageNumber:
			h.Pagination.PageParam = f.HTTPPageParam
			if f.HTTPStart != "" {
				n, err := strconv.Atoi(f.HTTPStart)
				if err != nil {
					return "", cfg, "", refuse(keyInsyncErrStart)
				}
				h.Pagination.Start = n
			}
		}
		cfg.HTTP, cfg.NetBox = &h, nil
	case formKindLibreNMS:
		kind = db.InventoryHTTP
		cfg.HTTP, cfg.NetBox = &insync.HTTPConfig{Preset: "librenms", URL: f.HTTPURL, CAFile: f.HTTPCAFile}, nil
	case formKindOxidized:
		kind = db.InventoryHTTP
		if strings.TrimSpace(f.Oxidized) == "" {
			return "", cfg, "", refuse(keyInsyncErrOxidizedEmpty)
		}
		h, token, err := oxidizedHTTP(f.Oxidized)
		if err != nil {
			return "", cfg, "", &refusal{key: keyInsyncErrOxidized, detail: err.Error()}
		}
		cfg.HTTP, cfg.NetBox, oxToken = h, nil, token
	default:
		return "", cfg, "", refuse(keyInsyncErrKind)
	}
	var bad string
	if cfg.Mapping, bad = parsePairs(f.Mapping); bad != "" {
		return "", cfg, "", refuse(keyInsyncErrPairLine, bad)
	}
	cfg.Defaults.LoginMethod, cfg.Defaults.Credential, cfg.Defaults.Template = f.LoginMethod, f.Credential, f.Template
	cfg.Claim = f.Claim
	return kind, cfg, oxToken, nil
}

// oxidizedHTTP reads a pasted Oxidized http source as the command line's
// --oxidized does (insync.OxidizedSource): the one header carrying a
// secret becomes the token, never a stored setting.
func oxidizedHTTP(yamlText string) (*insync.HTTPConfig, string, error) {
	hc, token, err := insync.OxidizedSource(yamlText)
	if err != nil {
		return nil, "", err
	}
	return &hc, token, nil
}

// sourceURL is the address the settings send the token to.
func sourceURL(cfg insync.SourceConfig) string {
	switch {
	case cfg.NetBox != nil:
		return cfg.NetBox.URL
	case cfg.HTTP != nil:
		return cfg.HTTP.URL
	}
	return ""
}

// sameOrigin reports whether two URLs have the same scheme, host and
// port (the default port of the scheme when none is written): the token
// goes to the same server.
func sameOrigin(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "http") {
			return "80"
		}
		return "443"
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Hostname(), ub.Hostname()) && port(ua) == port(ub)
}

// checkInventory checks the settings as a sync reads them, with the
// token the source will have (insync's own check), and returns them as
// stored.
func checkInventory(kind string, cfg insync.SourceConfig, token string) (json.RawMessage, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	if len(raw) > db.MaxInventoryConfigBytes {
		return nil, refuse(keyInsyncErrTooLong)
	}
	parsed, err := insync.ParseConfig(raw)
	if err != nil {
		return nil, &refusal{key: keyInsyncErrSettings, detail: err.Error()}
	}
	if parsed.HTTP != nil {
		for k := range parsed.HTTP.Headers {
			if insync.SecretHeader(k) {
				return nil, &refusal{key: keyInsyncErrSettings, detail: "header " + k + " carries a secret, which the settings never keep"}
			}
		}
	}
	if _, err := parsed.Fetcher(kind, token); err != nil {
		return nil, &refusal{key: keyInsyncErrSettings, detail: err.Error()}
	}
	return raw, nil
}

// interval reads the interval in minutes.
func (f inventoryForm) interval() (int, error) {
	if f.Interval == "" {
		return 0, refuse(keyInsyncErrInterval, db.MaxInventoryInterval)
	}
	n, err := strconv.Atoi(f.Interval)
	if err != nil || n < 0 || n > db.MaxInventoryInterval {
		return 0, refuse(keyInsyncErrInterval, db.MaxInventoryInterval)
	}
	return n, nil
}

// checkLengths refuses a form too long to be meant.
func (f inventoryForm) checkLengths(token string) error {
	for _, v := range []string{f.NBURL, f.HTTPURL, f.NBQuery} {
		if len(v) > maxInventoryURLChars {
			return refuse(keyInsyncErrTooLong)
		}
	}
	for _, v := range []string{f.HTTPMap, f.HTTPVarsMap, f.Mapping, f.Oxidized} {
		if len(v) > maxInventoryTextChars {
			return refuse(keyInsyncErrTooLong)
		}
	}
	if len(token) > maxInventoryToken {
		return refuse(keyInsyncErrTooLong)
	}
	if f.Name == "" {
		return refuse(keyInsyncErrName)
	}
	return nil
}

// renderRefused shows the form again as typed with the refusal.
func (u *handlers) renderRefused(w http.ResponseWriter, r *http.Request, f inventoryForm, err error) error {
	var rf *refusal
	var fe *db.ErrInvalidField
	switch {
	case errors.As(err, &rf):
		f.Error, f.Args, f.Detail = rf.key, rf.args, rf.detail
	case errors.Is(err, db.ErrNameExists):
		f.Error, f.Args = keyInsyncErrNameTaken, []any{f.Name}
	case errors.As(err, &fe):
		f.Error, f.Detail = keyInsyncErrSettings, fe.Field+" "+fe.Message
	default:
		return err
	}
	if insyncKindKeys[f.Kind] == "" {
		f.Kind = formKindNetBox // the form shows a kind's fields
	}
	title := keyInsyncAddTitle
	if f.ID != 0 {
		title = keyInsyncEditTitle
	}
	return u.Render(w, r, http.StatusUnprocessableEntity, "settings_inventory_form.html", title, f)
}

// settled is what a source keeps of its form: its kind, its settings
// as stored, its interval in minutes, and the token typed or carried by
// a pasted Oxidized source ("" when none: the stored one stays, unless
// the form clears it).
type settled struct {
	kind    string
	config  json.RawMessage
	minutes int
	token   string
}

// settle reads the typed form and token into what the source keeps, on
// top of the stored source (nil when adding): the one path of adding and
// editing. The settings are checked as a sync reads them, with the token
// the source will have; a stored token goes only to the scheme, host and
// port it went to.
func (u *handlers) settle(f inventoryForm, token string, stored *db.InventorySource) (settled, error) {
	if err := f.checkLengths(token); err != nil {
		return settled{}, err
	}
	if token != "" && f.ClearToken {
		return settled{}, refuse(keyInsyncErrTokenAndClear)
	}
	minutes, err := f.interval()
	if err != nil {
		return settled{}, err
	}
	var prev insync.SourceConfig
	var prevp *insync.SourceConfig
	if stored != nil {
		if p, err := insync.ParseConfig(stored.Config); err == nil {
			prev, prevp = p, &p
		}
	}
	kind, cfg, oxToken, err := buildSettings(f, prevp)
	if err != nil {
		return settled{}, err
	}
	if oxToken != "" {
		if token != "" {
			return settled{}, refuse(keyInsyncErrTwoTokens)
		}
		token = oxToken
	}
	check := token
	if token == "" && !f.ClearToken && stored != nil && len(stored.Token) > 0 {
		// The stored token goes only where it went: a new scheme, host
		// or port needs it typed again.
		if !sameOrigin(sourceURL(prev), sourceURL(cfg)) {
			return settled{}, refuse(keyInsyncErrTokenMoved)
		}
		if check, err = u.Sealer.Open(stored.Token, secret.PurposeInventoryToken); err != nil {
			return settled{}, refuse(keyInsyncErrTokenSealed)
		}
	}
	raw, err := checkInventory(kind, cfg, check)
	if err != nil {
		return settled{}, err
	}
	return settled{kind: kind, config: raw, minutes: minutes, token: token}, nil
}
