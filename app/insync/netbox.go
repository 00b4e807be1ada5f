package insync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// NetBox is a NetBox (3.x or 4.x) source: its devices, filtered, read
// from /api/dcim/devices/ with a read-only API token.
type NetBox struct {
	// URL is NetBox's address (https://netbox.example.com, or with a
	// path prefix when NetBox is served under one).
	URL string
	// Token is the API token: a v1 token (40 hex characters) is sent as
	// "Token …" (NetBox 3.x and 4.x); a v2 token, "nbt_<key>.<secret>"
	// (NetBox 4.5+), as "Bearer …".
	Token string
	// Site, Role and Tag filter by slug (several values: any of them);
	// Status by status value ("" is "active").
	Site, Role, Tag []string
	Status          string
	// Query is more of NetBox's device filters, as a query string
	// ("platform=ios&has_primary_ip=true"); the pagination and field
	// parameters are backupd's own and refused here.
	Query string
	// HostFrom is where the host comes from: "primary_ip4",
	// "primary_ip6", "primary_ip" (NetBox's choice of the two) or "name"
	// ("" is "primary_ip").
	HostFrom string
	// PlatformFrom is "platform" (the platform's slug, the default) or
	// "cf:NAME" (a custom field).
	PlatformFrom string
	// GroupFrom builds the group path, outermost first, from "region"
	// (the site's region and its parents), "site_group" (likewise),
	// "site", "location", "tenant" and "role"; a level the device lacks
	// is left out.
	GroupFrom []string
	// CredentialFrom and TemplateFrom are "" (none), "cf:NAME" (a custom
	// field) or "context:KEY" (a key of the device's rendered config
	// context; KEY may be a dotted path).
	CredentialFrom, TemplateFrom string
	// CAFile is a PEM file of a CA added to the system's roots.
	// Verification is always on.
	CAFile string
	// PageSize is the number of devices asked for per page (0: 1000,
	// NetBox's default MAX_PAGE_SIZE).
	PageSize int
}

// NetBox's host sources and group levels.
var (
	netboxHostFrom  = []string{"primary_ip", "primary_ip4", "primary_ip6", "name"}
	netboxGroupFrom = []string{"region", "site_group", "site", "location", "tenant", "role"}
	// netboxOwnParams are set by the fetch itself.
	netboxOwnParams = []string{"limit", "offset", "start", "cursor", "brief", "fields", "omit", "exclude", "include", "ordering", "format"}
)

// MaxPageSize bounds NetBox.PageSize.
const MaxPageSize = 5000

// Validate checks the configuration as typed, before anything is fetched.
func (n NetBox) Validate() error {
	if _, err := checkBaseURL(n.URL); err != nil {
		return err
	}
	tok := strings.TrimSpace(n.Token)
	if tok == "" {
		return errors.New("token: NetBox needs an API token (a user's token with view permission on devices)")
	}
	if strings.ContainsAny(tok, " \t\r\n") || tok != n.Token {
		return errors.New("token: no spaces or line breaks in a token; paste the token alone, without \"Token \" or \"Bearer \"")
	}
	if n.HostFrom != "" && !slices.Contains(netboxHostFrom, n.HostFrom) {
		return fmt.Errorf("host from %s: one of %s", quote(n.HostFrom), strings.Join(netboxHostFrom, ", "))
	}
	if n.PlatformFrom != "" && n.PlatformFrom != "platform" && !validCF(n.PlatformFrom) {
		return fmt.Errorf("platform from %s: \"platform\" or \"cf:NAME\"", quote(n.PlatformFrom))
	}
	seen := map[string]bool{}
	for _, g := range n.GroupFrom {
		if !slices.Contains(netboxGroupFrom, g) {
			return fmt.Errorf("group from %s: each one of %s", quote(g), strings.Join(netboxGroupFrom, ", "))
		}
		if seen[g] {
			return fmt.Errorf("group from: %s twice", g)
		}
		seen[g] = true
	}
	for name, v := range map[string]string{"credential from": n.CredentialFrom, "template from": n.TemplateFrom} {
		if v != "" && !validCF(v) && !validContext(v) {
			return fmt.Errorf("%s %s: \"cf:NAME\" or \"context:KEY\"", name, quote(v))
		}
	}
	if n.PageSize < 0 || n.PageSize > MaxPageSize {
		return fmt.Errorf("page size: 1 to %d (0 for 1000)", MaxPageSize)
	}
	if strings.ContainsAny(n.Status, "&=?# ") {
		return fmt.Errorf("status %s: one status value, such as active", quote(n.Status))
	}
	if _, err := n.extraQuery(); err != nil {
		return err
	}
	return nil
}

func validCF(s string) bool {
	name, ok := strings.CutPrefix(s, "cf:")
	return ok && name != "" && !strings.ContainsAny(name, " .")
}

func validContext(s string) bool {
	key, ok := strings.CutPrefix(s, "context:")
	return ok && key != "" && !strings.Contains(key, " ") && !strings.HasPrefix(key, ".") && !strings.HasSuffix(key, ".")
}

// extraQuery parses Query and refuses the parameters the fetch sets.
func (n NetBox) extraQuery() (url.Values, error) {
	q, err := url.ParseQuery(strings.TrimPrefix(strings.TrimSpace(n.Query), "?"))
	if err != nil {
		return nil, fmt.Errorf("query: not a query string (name=value&name=value): %v", err)
	}
	for k := range q {
		if slices.Contains(netboxOwnParams, k) {
			return nil, fmt.Errorf("query: %s is set by backupd itself (pagination and fields); leave it out", k)
		}
	}
	return q, nil
}

// authHeader is the Authorization value for the token.
func (n NetBox) authHeader() string {
	if strings.HasPrefix(n.Token, "nbt_") {
		return "Bearer " + n.Token
	}
	return "Token " + n.Token
}

// needsContext reports whether the config context is read.
func (n NetBox) needsContext() bool {
	return strings.HasPrefix(n.CredentialFrom, "context:") || strings.HasPrefix(n.TemplateFrom, "context:")
}

// devicesURL is the first page's URL.
func (n NetBox) devicesURL(base *url.URL) (*url.URL, error) {
	q, err := n.extraQuery()
	if err != nil {
		return nil, err
	}
	status := n.Status
	if status == "" {
		status = "active"
	}
	q.Set("status", status)
	for _, s := range n.Site {
		q.Add("site", s)
	}
	for _, s := range n.Role {
		q.Add("role", s)
	}
	for _, s := range n.Tag {
		q.Add("tag", s)
	}
	// NetBox 3.x renders the config context into every device unless
	// told not to; 4.x leaves it out unless asked.
	if n.needsContext() {
		q.Set("include", "config_context")
	} else {
		q.Set("exclude", "config_context")
	}
	q.Set("ordering", "id")
	return n.listURL(base, "dcim/devices/", q), nil
}

func (n NetBox) listURL(base *url.URL, path string, q url.Values) *url.URL {
	size := n.PageSize
	if size == 0 {
		size = 1000
	}
	q.Set("limit", strconv.Itoa(size))
	q.Set("offset", "0")
	u := *base
	u.Path = strings.TrimSuffix(base.Path, "/") + "/api/" + path
	u.RawPath = ""
	u.RawQuery = q.Encode()
	return &u
}

// nbRef is a nested object (site, role, platform …) as NetBox gives it.
type nbRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug"`
}

type nbIP struct {
	Address string `json:"address"`
}

// nbDevice is what a fetch reads of a device: the same fields in 3.x and
// 4.x but for the role, device_role before 3.6 and role from 3.6 on
// (device_role gone in 4.0).
type nbDevice struct {
	ID            int64          `json:"id"`
	Name          *string        `json:"name"`
	Platform      *nbRef         `json:"platform"`
	Site          *nbRef         `json:"site"`
	Location      *nbRef         `json:"location"`
	Tenant        *nbRef         `json:"tenant"`
	Role          *nbRef         `json:"role"`
	DeviceRole    *nbRef         `json:"device_role"`
	PrimaryIP     *nbIP          `json:"primary_ip"`
	PrimaryIP4    *nbIP          `json:"primary_ip4"`
	PrimaryIP6    *nbIP          `json:"primary_ip6"`
	CustomFields  map[string]any `json:"custom_fields"`
	ConfigContext map[string]any `json:"config_context"`
}

// nbSite is a site with what the group path needs of it; regions and
// site groups are read as nbTree.
type nbSite struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Region *nbRef `json:"region"`
	Group  *nbRef `json:"group"`
}

type nbTree struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Parent *nbRef `json:"parent"`
}

// nbPage is one page of a NetBox list.
type nbPage[T any] struct {
	Count   *int64  `json:"count"`
	Next    *string `json:"next"`
	Results []T     `json:"results"`
}

// Fetch reads every device the filters select and returns one record per
// device, in NetBox's id order. Any failure is an error and no records.
func (n NetBox) Fetch(ctx context.Context, opts Options) ([]Record, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	base, _ := checkBaseURL(n.URL)
	h := http.Header{}
	h.Set("Authorization", n.authHeader())
	g, err := newGetter("NetBox", base, n.CAFile, h, []string{n.Token}, opts)
	if err != nil {
		return nil, err
	}
	defer g.close()

	first, err := n.devicesURL(base)
	if err != nil {
		return nil, err
	}
	devices, err := fetchAll[nbDevice](ctx, g, first, "devices")
	if err != nil {
		return nil, err
	}
	var sites map[int64]nbSite
	var regions, siteGroups map[int64]nbTree
	if slices.Contains(n.GroupFrom, "region") || slices.Contains(n.GroupFrom, "site_group") {
		list, err := fetchAll[nbSite](ctx, g, n.listURL(base, "dcim/sites/", url.Values{}), "sites")
		if err != nil {
			return nil, err
		}
		sites = make(map[int64]nbSite, len(list))
		for _, s := range list {
			sites[s.ID] = s
		}
	}
	if slices.Contains(n.GroupFrom, "region") {
		if regions, err = fetchTree(ctx, g, n.listURL(base, "dcim/regions/", url.Values{}), "regions"); err != nil {
			return nil, err
		}
	}
	if slices.Contains(n.GroupFrom, "site_group") {
		if siteGroups, err = fetchTree(ctx, g, n.listURL(base, "dcim/site-groups/", url.Values{}), "site groups"); err != nil {
			return nil, err
		}
	}
	out := make([]Record, 0, len(devices))
	for _, d := range devices {
		out = append(out, n.record(d, sites, regions, siteGroups))
	}
	return out, nil
}

func fetchTree(ctx context.Context, g *getter, first *url.URL, what string) (map[int64]nbTree, error) {
	list, err := fetchAll[nbTree](ctx, g, first, what)
	if err != nil {
		return nil, err
	}
	m := make(map[int64]nbTree, len(list))
	for _, t := range list {
		m[t.ID] = t
	}
	return m, nil
}

// fetchAll follows a NetBox list's next links to the end and checks that
// the objects received are as many as the first page's count said.
func fetchAll[T any](ctx context.Context, g *getter, u *url.URL, what string) ([]T, error) {
	var out []T
	var count int64 = -1
	seen := map[string]bool{}
	for page := 1; ; page++ {
		if page > g.opts.maxPages() {
			return nil, fmt.Errorf("NetBox %s: more than %d pages of %s; raise the page size or narrow the filters", redactURL(u), g.opts.maxPages(), what)
		}
		seen[u.String()] = true
		var p nbPage[T]
		if err := g.get(ctx, u, page, &p); err != nil {
			return nil, err
		}
		if p.Count == nil {
			return nil, fmt.Errorf("NetBox %s (page %d): the answer has no count of %s: is this NetBox's API (a list answers with count, next and results)?", redactURL(u), page, what)
		}
		if count < 0 {
			count = *p.Count
		} else if *p.Count != count {
			return nil, fmt.Errorf("NetBox %s (page %d): the number of %s changed from %d to %d during the fetch (edited in NetBox meanwhile); nothing was taken, try again", redactURL(u), page, what, count, *p.Count)
		}
		out = append(out, p.Results...)
		if int64(len(out)) > count {
			return nil, fmt.Errorf("NetBox %s (page %d): %d %s received but NetBox counted %d (the inventory changed during the fetch); nothing was taken, try again", redactURL(u), page, len(out), what, count)
		}
		if p.Next == nil || *p.Next == "" {
			break
		}
		if len(p.Results) == 0 {
			return nil, fmt.Errorf("NetBox %s (page %d): an empty page that still links to a next one; nothing was taken", redactURL(u), page)
		}
		next, err := g.resolve(*p.Next)
		if err != nil {
			return nil, fmt.Errorf("NetBox %s (page %d): %w", redactURL(u), page, err)
		}
		if seen[next.String()] {
			return nil, fmt.Errorf("NetBox %s (page %d): the next link points back to a page already read; nothing was taken", redactURL(u), page)
		}
		u = next
	}
	if int64(len(out)) != count {
		return nil, fmt.Errorf("NetBox %s: %d %s received but NetBox counted %d (a page was short, or the inventory changed during the fetch); nothing was taken, try again", redactURL(u), len(out), what, count)
	}
	return out, nil
}

// record turns one device into a record.
func (n NetBox) record(d nbDevice, sites map[int64]nbSite, regions, siteGroups map[int64]nbTree) Record {
	r := Record{Key: strconv.FormatInt(d.ID, 10)}
	if d.Name != nil {
		r.Name = *d.Name
	}
	r.Host, r.Problem = n.host(d)
	switch {
	case n.PlatformFrom == "" || n.PlatformFrom == "platform":
		if d.Platform != nil {
			r.Platform = d.Platform.Slug
		}
	default:
		r.Platform = customField(d.CustomFields, strings.TrimPrefix(n.PlatformFrom, "cf:"))
	}
	role := d.Role
	if role == nil {
		role = d.DeviceRole
	}
	for _, level := range n.GroupFrom {
		switch level {
		case "region", "site_group":
			if d.Site == nil {
				continue
			}
			s, ok := sites[d.Site.ID]
			ref, tree := s.Region, regions
			if level == "site_group" {
				ref, tree = s.Group, siteGroups
			}
			if ok && ref != nil {
				r.Group = append(r.Group, treePath(ref, tree)...)
			}
		case "site":
			r.Group = appendRef(r.Group, d.Site)
		case "location":
			r.Group = appendRef(r.Group, d.Location)
		case "tenant":
			r.Group = appendRef(r.Group, d.Tenant)
		case "role":
			r.Group = appendRef(r.Group, role)
		}
	}
	r.Credential = n.pick(n.CredentialFrom, d)
	r.Template = n.pick(n.TemplateFrom, d)
	r.check()
	return r
}

// host is the device's host and, when it has none to give, the problem.
func (n NetBox) host(d nbDevice) (string, Why) {
	var ip *nbIP
	switch n.HostFrom {
	case "name":
		if d.Name == nil {
			return "", Why{}
		}
		return *d.Name, Why{}
	case "primary_ip4":
		ip = d.PrimaryIP4
	case "primary_ip6":
		ip = d.PrimaryIP6
	default:
		ip = d.PrimaryIP
	}
	from := n.HostFrom
	if from == "" {
		from = "primary_ip"
	}
	if ip == nil || ip.Address == "" {
		return "", why(WhyNetBoxNoIP, from)
	}
	addr, _, _ := strings.Cut(ip.Address, "/")
	if _, err := netip.ParseAddr(addr); err != nil {
		return addr, why(WhyNetBoxBadIP, from, quoted(ip.Address))
	}
	return addr, Why{}
}

// pick reads a "cf:NAME" or "context:KEY" value of the device.
func (n NetBox) pick(from string, d nbDevice) string {
	if name, ok := strings.CutPrefix(from, "cf:"); ok {
		return customField(d.CustomFields, name)
	}
	if key, ok := strings.CutPrefix(from, "context:"); ok {
		v, _ := lookPath(map[string]any(d.ConfigContext), key)
		s, _ := scalar(v)
		return s
	}
	return ""
}

// customField is a custom field's value as text: a text or number as it
// is, a selection's value (3.x gives {"value", "label"}, 4.x the value),
// an object's name (an object custom field), "" for anything else.
func customField(cf map[string]any, name string) string {
	v, ok := cf[name]
	if !ok || v == nil {
		return ""
	}
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"value", "name"} {
			if s, ok := scalar(m[k]); ok && s != "" {
				return s
			}
		}
		return ""
	}
	s, _ := scalar(v)
	return s
}

// treePath is the names from the root of a region or site group tree
// down to ref (ref alone when the tree is unknown), bounded against a
// cycle.
func treePath(ref *nbRef, tree map[int64]nbTree) []string {
	path := []string{ref.Name}
	id := ref.ID
	for range 64 {
		t, ok := tree[id]
		if !ok || t.Parent == nil {
			break
		}
		path = append(path, t.Parent.Name)
		id = t.Parent.ID
	}
	slices.Reverse(path)
	return path
}

func appendRef(path []string, ref *nbRef) []string {
	if ref == nil || ref.Name == "" {
		return path
	}
	return append(path, ref.Name)
}

// scalar is a JSON scalar as text: a string as it is, a number as
// written, true/false; ok is false for null, objects and arrays.
func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}
