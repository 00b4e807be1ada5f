package insync

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// HTTPJSON is a generic HTTP JSON inventory, read as Oxidized's
// `source: http` reads it, so that an Oxidized configuration maps onto it
// one to one (see ParseOxidizedHTTP): a URL answering a JSON array of
// objects (or an object holding one at HostsLocation), a Map of fields to
// dotted paths into each object, and optional pagination.
type HTTPJSON struct {
	URL string
	// Headers are sent with every request (X-Auth-Token, Authorization
	// …). Their values are taken as secrets: they never appear in an
	// error. The caller keeps them sealed.
	Headers map[string]string
	// HostsLocation is the dotted path to the array of devices ("" is
	// the answer itself).
	HostsLocation string
	// Map maps a field to a dotted path into a device's object. Fields:
	// name (required), ip or host, model or platform, group, key,
	// credential, template; username, password and any other field go
	// to Vars under their own name, as Oxidized makes them node
	// attributes.
	Map map[string]string
	// VarsMap maps Vars entries to dotted paths (Oxidized's vars_map:
	// enable, ssh_port …).
	VarsMap map[string]string
	// Pagination: none, a next link, or page numbers.
	Pagination Pagination
	// CAFile is a PEM file of a CA added to the system's roots.
	CAFile string
}

// Pagination kinds.
const (
	PageNone   = "none"
	PageNext   = "next"
	PageNumber = "page"
)

// Pagination says how an HTTP JSON source pages.
type Pagination struct {
	// Kind is "none" (or ""), "next" or "page".
	Kind string
	// NextPath is, for "next", the dotted path of the next page's URL in
	// an answer (Oxidized's pagination_key_name); a missing, null or
	// empty value ends.
	NextPath string
	// PageParam is, for "page", the query parameter of the page number,
	// starting at Start (0 is 1); the first empty page ends.
	PageParam string
	Start     int
}

// Dotted paths: "a.b.c", with an array index as Oxidized writes it
// ("interfaces[0].address"). Keys holding a dot cannot be reached.

// mapFields are the Map keys with a place of their own in a Record.
var mapFields = []string{"name", "ip", "host", "model", "platform", "group", "key", "credential", "template"}

// Validate checks the configuration as typed.
func (h HTTPJSON) Validate() error {
	if _, err := checkBaseURL(h.URL); err != nil {
		return err
	}
	if strings.TrimSpace(h.Map["name"]) == "" {
		return errors.New("map: name is required (the dotted path of each device's name, as Oxidized's map.name)")
	}
	for _, pair := range [][2]string{{"ip", "host"}, {"model", "platform"}} {
		if h.Map[pair[0]] != "" && h.Map[pair[1]] != "" {
			return fmt.Errorf("map: %s and %s are the same field; give one", pair[0], pair[1])
		}
	}
	for _, m := range []map[string]string{h.Map, h.VarsMap} {
		for k, p := range m {
			if k == "" {
				return errors.New("map: a field without a name")
			}
			if _, err := parsePath(p); err != nil {
				return fmt.Errorf("map %s: %w", k, err)
			}
		}
	}
	if h.HostsLocation != "" {
		if _, err := parsePath(h.HostsLocation); err != nil {
			return fmt.Errorf("hosts location: %w", err)
		}
	}
	for k, v := range h.Headers {
		if k == "" || strings.ContainsAny(k, " :\r\n") {
			return fmt.Errorf("header %s: not a header name", quote(k))
		}
		if strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("header %s: no line breaks in a value", k)
		}
	}
	switch h.Pagination.Kind {
	case "", PageNone:
	case PageNext:
		if _, err := parsePath(h.Pagination.NextPath); err != nil || h.Pagination.NextPath == "" {
			return errors.New("pagination: the dotted path of the next page's link is required (Oxidized's pagination_key_name)")
		}
	case PageNumber:
		if h.Pagination.PageParam == "" || strings.ContainsAny(h.Pagination.PageParam, "&=?# ") {
			return errors.New("pagination: the query parameter of the page number is required (page)")
		}
		if h.Pagination.Start < 0 {
			return errors.New("pagination: the first page number is 0 or more")
		}
	default:
		return fmt.Errorf("pagination %s: none, next or page", quote(h.Pagination.Kind))
	}
	return nil
}

// Fetch reads every page and returns one record per device object, in
// the source's order. Any failure is an error and no records.
func (h HTTPJSON) Fetch(ctx context.Context, opts Options) ([]Record, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	base, _ := checkBaseURL(h.URL)
	hdr := http.Header{}
	var secrets []string
	for k, v := range h.Headers {
		hdr.Set(k, v)
		secrets = append(secrets, v)
		// "Bearer abc", "Token abc": the bare key too.
		if _, key, ok := strings.Cut(v, " "); ok {
			secrets = append(secrets, key)
		}
	}
	for _, v := range base.Query() {
		secrets = append(secrets, v...) // ?api_key=…
	}
	g, err := newGetter("the HTTP source", base, h.CAFile, hdr, secrets, opts)
	if err != nil {
		return nil, err
	}
	defer g.close()

	var out []Record
	u := base
	seen := map[string]bool{}
	pageNo := h.Pagination.Start
	if h.Pagination.Kind == PageNumber {
		if pageNo == 0 {
			pageNo = 1
		}
		u = withParam(base, h.Pagination.PageParam, pageNo)
	}
	for page := 1; ; page++ {
		if page > g.opts.maxPages() {
			return nil, fmt.Errorf("the HTTP source %s: more than %d pages; check the pagination settings", redactURL(base), g.opts.maxPages())
		}
		seen[u.String()] = true
		var doc any
		if err := g.get(ctx, u, page, &doc); err != nil {
			return nil, err
		}
		hosts, err := h.hosts(doc)
		if err != nil {
			return nil, fmt.Errorf("the HTTP source %s (page %d): %w", redactURL(u), page, err)
		}
		for _, e := range hosts {
			out = append(out, h.record(e, len(out)+1))
		}
		switch h.Pagination.Kind {
		case PageNext:
			v, _ := lookPath(doc, h.Pagination.NextPath)
			link, _ := scalar(v)
			if link == "" {
				return out, nil
			}
			next, err := g.resolve(link)
			if err != nil {
				return nil, fmt.Errorf("the HTTP source %s (page %d): %w", redactURL(u), page, err)
			}
			if seen[next.String()] {
				return nil, fmt.Errorf("the HTTP source %s (page %d): the next link points back to a page already read; nothing was taken", redactURL(u), page)
			}
			u = next
		case PageNumber:
			if len(hosts) == 0 {
				return out, nil
			}
			pageNo++
			u = withParam(base, h.Pagination.PageParam, pageNo)
		default:
			return out, nil
		}
	}
}

// hosts is the array of device entries in one answer.
func (h HTTPJSON) hosts(doc any) ([]any, error) {
	v := doc
	if h.HostsLocation != "" {
		var ok bool
		if v, ok = lookPath(doc, h.HostsLocation); !ok {
			return nil, fmt.Errorf("the answer has nothing at %s (hosts location): check the path", quote(h.HostsLocation))
		}
	}
	switch x := v.(type) {
	case []any:
		return x, nil
	case nil:
		return nil, nil
	}
	where := "the answer"
	if h.HostsLocation != "" {
		where = "what is at " + quote(h.HostsLocation)
	}
	return nil, fmt.Errorf("%s is not an array of devices: set the hosts location to the path of the array", where)
}

// record maps one entry; n counts entries from 1 for problems.
func (h HTTPJSON) record(e any, n int) Record {
	obj, ok := e.(map[string]any)
	if !ok {
		return Record{Problem: why(WhyEntryNotObject, strconv.Itoa(n))}
	}
	var r Record
	var problems []Why
	get := func(field, path string) string {
		if path == "" {
			return ""
		}
		v, found := lookPath(obj, path)
		if !found || v == nil {
			return ""
		}
		s, ok := scalar(v)
		if !ok {
			problems = append(problems, why(WhyNotSingleValue, field, quoted(path)))
		}
		return s
	}
	r.Name = strings.TrimSpace(get("name", h.Map["name"]))
	r.Host = strings.TrimSpace(get("ip", h.Map["ip"]+h.Map["host"]))
	if pfx, err := netip.ParsePrefix(r.Host); err == nil {
		r.Host = pfx.Addr().String() // NetBox's "10.0.0.1/24" through a map
	}
	if r.Host == "" {
		// As Oxidized: without an address, the name is looked up.
		r.Host = r.Name
	}
	r.Platform = get("model", h.Map["model"]+h.Map["platform"])
	if g := strings.TrimSpace(get("group", h.Map["group"])); g != "" {
		r.Group = []string{g}
	}
	r.Key = get("key", h.Map["key"])
	if r.Key == "" {
		r.Key = r.Name
	}
	r.Credential = get("credential", h.Map["credential"])
	r.Template = get("template", h.Map["template"])
	r.Vars = h.vars(obj, get)
	if len(problems) > 0 {
		slices.SortFunc(problems, func(a, b Why) int { return strings.Compare(a.String(), b.String()) })
		r.Problem = problems[0].and(problems[1:]...)
	}
	if r.Problem.IsZero() && r.Name == "" {
		r.Problem = why(WhyEntryNoName, strconv.Itoa(n), quoted(h.Map["name"]))
	}
	r.check()
	return r
}

// vars is the Map's other fields and the VarsMap, read from one entry;
// nil when there are none.
func (h HTTPJSON) vars(obj map[string]any, get func(field, path string) string) map[string]string {
	var out map[string]string
	set := func(k, path string) {
		if v := get(k, path); v != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	for _, k := range sortedKeys(h.Map) {
		if !slices.Contains(mapFields, k) {
			set(k, h.Map[k])
		}
	}
	for _, k := range sortedKeys(h.VarsMap) {
		set(k, h.VarsMap[k])
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// withParam is u with the query parameter name set to n.
func withParam(u *url.URL, name string, n int) *url.URL {
	c := *u
	q := c.Query()
	q.Set(name, strconv.Itoa(n))
	c.RawQuery = q.Encode()
	return &c
}

// pathStep is one step of a dotted path: a key, or an index.
type pathStep struct {
	key   string
	index int // -1: a key
}

// parsePath reads a dotted path as Oxidized does: keys separated by dots,
// each optionally followed by array indexes ("hosts[0].ip", "a[1][2]").
func parsePath(p string) ([]pathStep, error) {
	if p == "" {
		return nil, nil
	}
	var steps []pathStep
	for _, part := range strings.Split(p, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key == "" && rest == "" {
			return nil, fmt.Errorf("path %s has an empty part", quote(p))
		}
		if key != "" {
			steps = append(steps, pathStep{key: key, index: -1})
		}
		if !strings.Contains(part, "[") {
			continue
		}
		if rest == "" {
			return nil, fmt.Errorf("path %s: an array index is a number in brackets (hosts[0])", quote(p))
		}
		for idx := range strings.SplitSeq("["+rest, "[") {
			if idx == "" {
				continue
			}
			num, ok := strings.CutSuffix(idx, "]")
			i, err := strconv.Atoi(num)
			if !ok || err != nil || i < 0 || i > 1<<20 {
				return nil, fmt.Errorf("path %s: an array index is a number in brackets (hosts[0])", quote(p))
			}
			steps = append(steps, pathStep{index: i})
		}
	}
	if len(steps) > 64 {
		return nil, fmt.Errorf("path %s is too deep", quote(p))
	}
	return steps, nil
}

// lookPath follows a dotted path into decoded JSON; found is false when
// a step is missing (or the path does not parse).
func lookPath(v any, p string) (any, bool) {
	steps, err := parsePath(p)
	if err != nil {
		return nil, false
	}
	for _, s := range steps {
		if s.index < 0 {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s.key]; !ok {
				return nil, false
			}
			continue
		}
		a, ok := v.([]any)
		if !ok || s.index >= len(a) {
			return nil, false
		}
		v = a[s.index]
	}
	return v, true
}

// LibreNMS is the HTTP JSON configuration of LibreNMS's device list,
// GET /api/v0/devices with an X-Auth-Token header: the answer holds the
// devices at "devices" (all at once, no pagination); the name is the
// hostname, the host its ip (the hostname when LibreNMS has none), the
// platform LibreNMS's os, the key its device_id. type=active leaves out
// ignored and disabled devices.
func LibreNMS(baseURL, token string) HTTPJSON {
	return HTTPJSON{
		URL:           strings.TrimSuffix(strings.TrimSpace(baseURL), "/") + "/api/v0/devices?type=active",
		Headers:       map[string]string{"X-Auth-Token": token},
		HostsLocation: "devices",
		Map: map[string]string{
			"name":  "hostname",
			"ip":    "ip",
			"model": "os",
			"key":   "device_id",
		},
	}
}
