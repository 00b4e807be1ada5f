package importer

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"backupd/app/collect/driver"
)

// MaxConfigBytes bounds an Oxidized configuration file.
const MaxConfigBytes = 1 << 20

// OxidizedConfig is what an import takes from Oxidized's own
// configuration file (~/.config/oxidized/config, YAML): the CSV source —
// its router.db, delimiter and column maps — and what lines of the file
// without a login of their own log in with, resolved as Oxidized
// resolves them, from the most to the least specific: the line, its
// group's settings for its model (groups.G.models.M), its group
// (groups.G), its model (models.M), the global settings. The enable
// password is the "enable" variable (vars.enable at each level, and the
// vars_map column). model_map and group_map rename models and groups
// first, as Oxidized's sources do.
//
// Nothing else of the file is read: other sources, inputs' options,
// outputs, hooks. It never holds a secret longer than the import needs
// it, and Describe names which logins are set without showing them.
type OxidizedConfig struct {
	// File is source.csv.file as written ("" when absent); the caller
	// resolves "~" and decides whether to read it.
	File string
	// GPG is source.csv.gpg: the router.db is encrypted.
	GPG bool
	// Delimiter is the delimiter as a literal string; DelimiterRegexp the
	// regular expression as written (/\s*,\s*/) when it is not one.
	Delimiter       string
	DelimiterRegexp string
	delimRe         *regexp.Regexp
	// Map holds source.csv.map and vars_map's enable column.
	Map Map
	// Ignored lists the columns Oxidized reads that backupd does not
	// ("vars_map.ssh_port=6").
	Ignored []string

	global oxLogin
	groups map[string]oxGroup
	models map[string]oxLogin // by lower-case model name
	// modelMap and groupMap rename, first match wins, in file order.
	modelMap, groupMap []oxRename
}

// oxLogin is what one level of the configuration sets; nil pointers are
// not set there, and the next level down is asked.
type oxLogin struct {
	username, password, enable *string
	model                      string // groups.G.model and model: the model of lines without one
	input                      string // input (input.default globally): "ssh, telnet"
}

type oxGroup struct {
	oxLogin
	models map[string]oxLogin
}

// oxRename is one entry of model_map or group_map: a name, or a regular
// expression (written !ruby/regexp /…/), and what it becomes.
type oxRename struct {
	from string
	re   *regexp.Regexp
	to   string
}

func (r oxRename) String() string {
	if r.re != nil {
		return r.from + " → " + r.to
	}
	return strconv.Quote(r.from) + " → " + r.to
}

// ParseOxidizedConfig reads an Oxidized configuration file. A file that
// is not YAML, has no CSV source, uses another source, or maps columns
// that cannot be is a FileError that says so.
func ParseOxidizedConfig(data []byte) (*OxidizedConfig, error) {
	if len(data) > MaxConfigBytes {
		return nil, &FileError{fmt.Sprintf("the Oxidized configuration is larger than %d MiB", MaxConfigBytes>>20)}
	}
	if !utf8.Valid(data) {
		return nil, &FileError{"the Oxidized configuration is not UTF-8 text"}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &FileError{"the Oxidized configuration is not YAML: " + err.Error()}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &FileError{"the Oxidized configuration is empty or not a YAML mapping"}
	}
	root := doc.Content[0]
	c := &OxidizedConfig{groups: map[string]oxGroup{}, models: map[string]oxLogin{}}
	src := child(root, "source")
	if src == nil {
		return nil, &FileError{"the Oxidized configuration has no source section: there is no router.db to import"}
	}
	if d := scalar(child(src, "default")); d != "" && !strings.EqualFold(d, "csv") {
		return nil, &FileError{fmt.Sprintf("the Oxidized configuration uses the %q source; backupd imports the csv source (router.db) only", d)}
	}
	csv := child(src, "csv")
	if csv == nil || csv.Kind != yaml.MappingNode {
		return nil, &FileError{"the Oxidized configuration has no source.csv section: there is no router.db to import"}
	}
	c.File = scalar(child(csv, "file"))
	if g := child(csv, "gpg"); g != nil {
		c.GPG = g.Tag == "!!bool" && strings.EqualFold(g.Value, "true")
	}
	if err := c.readDelimiter(child(csv, "delimiter")); err != nil {
		return nil, err
	}
	if err := c.readMaps(child(csv, "map"), child(csv, "vars_map")); err != nil {
		return nil, err
	}
	c.global = readLogin(root)
	c.global.input = scalar(child(child(root, "input"), "default"))
	for _, kv := range pairs(child(root, "models")) {
		c.models[strings.ToLower(kv[0].Value)] = readLogin(kv[1])
	}
	for _, kv := range pairs(child(root, "groups")) {
		g := oxGroup{oxLogin: readLogin(kv[1]), models: map[string]oxLogin{}}
		for _, m := range pairs(child(kv[1], "models")) {
			g.models[strings.ToLower(m[0].Value)] = readLogin(m[1])
		}
		c.groups[kv[0].Value] = g
	}
	var err error
	if c.modelMap, err = readRenames("model_map", child(root, "model_map")); err != nil {
		return nil, err
	}
	if c.groupMap, err = readRenames("group_map", child(root, "group_map")); err != nil {
		return nil, err
	}
	return c, nil
}

// readDelimiter takes source.csv.delimiter: a Ruby regular expression
// (!ruby/regexp /:/) or a string; ":" when absent.
func (c *OxidizedConfig) readDelimiter(n *yaml.Node) error {
	c.Delimiter = ":"
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return nil
	}
	if n.Tag != "!ruby/regexp" {
		if n.Value == "" {
			return &FileError{"source.csv.delimiter is empty"}
		}
		c.Delimiter = n.Value
		return nil
	}
	body, flags, ok := rubyRegexp(n.Value)
	if !ok {
		return &FileError{fmt.Sprintf("source.csv.delimiter %q is not a regular expression /…/", n.Value)}
	}
	if lit, ok := regexpLiteral(body); ok && flags == "" {
		c.Delimiter = lit
		return nil
	}
	re, err := compileRuby(body, flags)
	if err != nil || re.MatchString("") {
		return &FileError{fmt.Sprintf("source.csv.delimiter %s is not a regular expression backupd can split lines with", n.Value)}
	}
	c.Delimiter, c.DelimiterRegexp, c.delimRe = "", n.Value, re
	return nil
}

// oxidizedColumns are the fields of source.csv.map that backupd reads
// (Map's fields, "input" besides); vars_map gives only enable.
var oxidizedColumns = []string{"name", "ip", "model", "group", "username", "password", "input"}

func (c *OxidizedConfig) readMaps(m, vars *yaml.Node) error {
	c.Map = Map{}
	column := func(section string, kv [2]*yaml.Node) (int, error) {
		n, err := strconv.Atoi(kv[1].Value)
		if kv[1].Kind != yaml.ScalarNode || err != nil || n < 0 || n >= maxFields {
			return 0, &FileError{fmt.Sprintf("source.csv.%s.%s: the column must be a number from 0 to %d", section, kv[0].Value, maxFields-1)}
		}
		return n, nil
	}
	for _, kv := range pairs(m) {
		n, err := column("map", kv)
		if err != nil {
			return err
		}
		if k := strings.ToLower(kv[0].Value); slices.Contains(oxidizedColumns, k) {
			c.Map[k] = n
		} else {
			c.Ignored = append(c.Ignored, fmt.Sprintf("map.%s=%d", kv[0].Value, n))
		}
	}
	for _, kv := range pairs(vars) {
		n, err := column("vars_map", kv)
		if err != nil {
			return err
		}
		if strings.EqualFold(kv[0].Value, "enable") {
			c.Map["enable"] = n
		} else {
			c.Ignored = append(c.Ignored, fmt.Sprintf("vars_map.%s=%d", kv[0].Value, n))
		}
	}
	if _, ok := c.Map["name"]; !ok {
		return &FileError{"source.csv.map has no name column, which Oxidized requires too"}
	}
	return c.Map.checkSecretColumns("source.csv.map and vars_map")
}

// readLogin reads username, password, vars.enable, model and input of
// one level. For the username and password a key present with no value
// (or "nil", as Oxidized's documentation writes it for devices that ask
// only for a password) sets them empty; an enable variable with no value
// is not set, as Oxidized ignores it. An enable of true or false (enable
// without a password, or not at all) is an empty enable password: the
// platform's enable step runs when its prompt needs it.
func readLogin(n *yaml.Node) oxLogin {
	var l oxLogin
	text := func(v *yaml.Node) *string {
		s := ""
		if v.Kind == yaml.ScalarNode && v.Tag != "!!null" && v.Value != "nil" {
			s = v.Value
		}
		return &s
	}
	if v := child(n, "username"); v != nil {
		l.username = text(v)
	}
	if v := child(n, "password"); v != nil {
		l.password = text(v)
	}
	if v := child(child(n, "vars"), "enable"); v != nil && v.Kind == yaml.ScalarNode && v.Tag != "!!null" && v.Value != "nil" {
		s := v.Value
		if v.Tag == "!!bool" {
			s = ""
		}
		l.enable = &s
	}
	l.model = scalar(child(n, "model"))
	if in := child(n, "input"); in != nil && in.Kind == yaml.ScalarNode {
		l.input = in.Value
	}
	return l
}

func readRenames(section string, n *yaml.Node) ([]oxRename, error) {
	var out []oxRename
	for _, kv := range pairs(n) {
		r := oxRename{from: kv[0].Value, to: scalar(kv[1])}
		if kv[0].Tag == "!ruby/regexp" {
			body, flags, ok := rubyRegexp(kv[0].Value)
			var err error
			if ok {
				r.re, err = compileRuby(body, flags)
			}
			if !ok || err != nil {
				return nil, &FileError{fmt.Sprintf("%s: %s is not a regular expression backupd can read", section, kv[0].Value)}
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// child is the value of key in a YAML mapping (nil when absent or when n
// is not a mapping); an alias is followed once.
func child(n *yaml.Node, key string) *yaml.Node {
	for _, kv := range pairs(n) {
		if kv[0].Value == key {
			return kv[1]
		}
	}
	return nil
}

// pairs lists a mapping's keys and values, aliases followed once.
func pairs(n *yaml.Node) [][2]*yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		v := n.Content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		out = append(out, [2]*yaml.Node{n.Content[i], v})
	}
	return out
}

// scalar is a scalar's text, "" for anything else or null.
func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return strings.TrimSpace(n.Value)
}

// rubyRegexp splits "/body/flags".
func rubyRegexp(s string) (body, flags string, ok bool) {
	s = strings.TrimSpace(s)
	end := strings.LastIndexByte(s, '/')
	if !strings.HasPrefix(s, "/") || end < 1 {
		return "", "", false
	}
	return s[1:end], s[end+1:], true
}

// compileRuby compiles a Ruby regular expression's body with its flags
// (i: any case, m: "." matches a newline; x is refused).
func compileRuby(body, flags string) (*regexp.Regexp, error) {
	prefix := ""
	for _, f := range flags {
		switch f {
		case 'i':
			prefix += "i"
		case 'm':
			prefix += "s"
		default:
			return nil, fmt.Errorf("flag %q", f)
		}
	}
	if prefix != "" {
		body = "(?" + prefix + ")" + body
	}
	return regexp.Compile(body)
}

// regexpLiteral is the text a regular expression matches when it matches
// exactly one text (":", "\t", "\|", "::").
func regexpLiteral(body string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body):
			i++
			switch e := body[i]; {
			case e == 't':
				b.WriteByte('\t')
			case strings.IndexByte(`\.+*?()|[]{}^$/-:;,# `, e) >= 0:
				b.WriteByte(e)
			default:
				return "", false // \s, \d, \w …
			}
		case strings.IndexByte(`.+*?()|[]{}^$\`, c) >= 0:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), b.Len() > 0
}

// rename applies model_map or group_map.
func rename(list []oxRename, v string) string {
	for _, r := range list {
		if r.re != nil && r.re.MatchString(v) || r.re == nil && r.from == v {
			return r.to
		}
	}
	return v
}

// levels are the configuration's levels for a line of group and model,
// most specific first.
func (c *OxidizedConfig) levels(group, model string) []oxLogin {
	var out []oxLogin
	g, inGroup := c.groups[group]
	if inGroup {
		if m, ok := g.models[model]; ok {
			out = append(out, m)
		}
		out = append(out, g.oxLogin)
	}
	if m, ok := c.models[model]; ok {
		out = append(out, m)
	}
	return append(out, c.global)
}

// pick is the line's own value, or the first level that sets one.
func pick(own string, levels []oxLogin, field func(oxLogin) *string) string {
	if own != "" {
		return own
	}
	for _, l := range levels {
		if v := field(l); v != nil {
			return *v
		}
	}
	return ""
}

// resolve completes a line as Oxidized would: "nil" fields unset, models
// and groups renamed, the address without a prefix length, the model and
// the login taken from the configuration where the line has none, and
// the login method from the input list (the first of ssh and telnet the
// platform offers).
func (c *OxidizedConfig) resolve(e *Entry, get func(string) string) {
	for _, f := range []*string{&e.Name, &e.Host, &e.Model, &e.Group, &e.Username, &e.Password, &e.Enable} {
		if *f == "nil" {
			*f = ""
		}
	}
	if e.Model != "" {
		e.Model = rename(c.modelMap, e.Model)
	}
	if e.Group != "" {
		e.Group = rename(c.groupMap, e.Group)
	}
	if host, _, cut := strings.Cut(e.Host, "/"); cut && host != "" {
		e.Host = host
	}
	if e.Model == "" {
		if g, ok := c.groups[e.Group]; ok && g.model != "" {
			e.Model = g.model
		} else {
			e.Model = c.global.model
		}
	}
	levels := c.levels(e.Group, strings.ToLower(e.Model))
	e.Username = pick(e.Username, levels, func(l oxLogin) *string { return l.username })
	e.Password = pick(e.Password, levels, func(l oxLogin) *string { return l.password })
	e.Enable = pick(e.Enable, levels, func(l oxLogin) *string { return l.enable })
	input := get("input")
	for _, l := range levels {
		if input != "" && input != "nil" {
			break
		}
		input = l.input
	}
	if p, ok := driver.Resolve(strings.ToLower(e.Model)); ok {
		for _, in := range strings.Split(input, ",") {
			if in = strings.ToLower(strings.TrimSpace(in)); p.OffersTransport(in) {
				e.LoginMethod = in
				break
			}
		}
	}
}

// ParseRouterDB reads a router.db as this configuration describes it.
// A file encrypted with GPG is refused with what to do instead.
func (c *OxidizedConfig) ParseRouterDB(data []byte) (*Parsed, error) {
	need := 0
	for _, k := range []string{"name", "ip"} {
		if col, ok := c.Map[k]; ok && col+1 > need {
			need = col + 1
		}
	}
	l := oxidizedLayout{delim: c.Delimiter, re: c.delimRe, m: c.Map, need: need}
	p, err := parseOxidized(data, l, c.resolve)
	if p != nil && c.delimRe != nil {
		p.Delimiter = c.DelimiterRegexp
	}
	return p, err
}

// OxidizedMapping is how a configuration is read, for a person: what
// the import shows before its plan. Logins appear as the fields a level
// sets ("username", "password", "enable"), never their values.
type OxidizedMapping struct {
	Delimiter string // quoted, or the regular expression as written
	Regexp    bool
	Columns   string   // "name=0,ip=1,…"
	Ignored   []string // columns Oxidized reads that backupd does not
	Global    []string // fields the global settings set
	Model     string   // the model of lines without one
	Input     string   // input.default
	Levels    []OxidizedLevel
	ModelMap  []string // "cisco" → ios, /procurve/ → procurve
	GroupMap  []string
}

// OxidizedLevel is a group, a model, or a group's model with a login.
type OxidizedLevel struct {
	Kind   string // "model", "group" or "group_model"
	Group  string // for "group" and "group_model"
	Model  string // for "model" and "group_model"
	Fields []string
}

// Mapping describes the configuration.
func (c *OxidizedConfig) Mapping() OxidizedMapping {
	m := OxidizedMapping{Delimiter: strconv.Quote(c.Delimiter), Columns: c.Map.String(), Ignored: c.Ignored,
		Global: c.global.sets(), Model: c.global.model, Input: c.global.input}
	if c.delimRe != nil {
		m.Delimiter, m.Regexp = c.DelimiterRegexp, true
	}
	for _, name := range sortedKeys(c.models) {
		if f := c.models[name].sets(); len(f) > 0 {
			m.Levels = append(m.Levels, OxidizedLevel{Kind: "model", Model: name, Fields: f})
		}
	}
	for _, name := range sortedKeys(c.groups) {
		g := c.groups[name]
		if f := g.sets(); len(f) > 0 {
			m.Levels = append(m.Levels, OxidizedLevel{Kind: "group", Group: name, Fields: f})
		}
		for _, model := range sortedKeys(g.models) {
			if f := g.models[model].sets(); len(f) > 0 {
				m.Levels = append(m.Levels, OxidizedLevel{Kind: "group_model", Group: name, Model: model, Fields: f})
			}
		}
	}
	for _, r := range c.modelMap {
		m.ModelMap = append(m.ModelMap, r.String())
	}
	for _, r := range c.groupMap {
		m.GroupMap = append(m.GroupMap, r.String())
	}
	return m
}

// Describe is Mapping in English lines, for the command line.
func (c *OxidizedConfig) Describe() []string {
	m := c.Mapping()
	fields := func(f []string) string {
		return strings.ReplaceAll(strings.Join(f, ", "), "enable", "enable password")
	}
	var out []string
	if m.Regexp {
		out = append(out, "delimiter: regular expression "+m.Delimiter)
	} else {
		out = append(out, "delimiter: "+m.Delimiter)
	}
	out = append(out, "columns: "+m.Columns)
	if len(m.Ignored) > 0 {
		out = append(out, "not read (backupd has no such setting): "+strings.Join(m.Ignored, ", "))
	}
	if len(m.Global) > 0 {
		out = append(out, "lines without their own login take the global "+fields(m.Global))
	}
	if m.Model != "" {
		out = append(out, "lines without a model: "+m.Model)
	}
	if m.Input != "" {
		out = append(out, "login method: the first of "+strconv.Quote(m.Input)+" that the platform offers")
	}
	var models, groups []string
	groupModels := map[string][]string{}
	for _, l := range m.Levels {
		switch l.Kind {
		case "model":
			models = append(models, l.Model+" ("+fields(l.Fields)+")")
		case "group":
			groups = append(groups, l.Group+" ("+fields(l.Fields)+")")
		default:
			groupModels[l.Group] = append(groupModels[l.Group], l.Model+" ("+fields(l.Fields)+")")
		}
	}
	if len(models) > 0 {
		out = append(out, "models with their own login: "+strings.Join(models, "; "))
	}
	if len(groups) > 0 {
		out = append(out, "groups with their own login: "+strings.Join(groups, "; "))
	}
	for _, g := range sortedKeys(groupModels) {
		out = append(out, "group "+g+", models with their own login: "+strings.Join(groupModels[g], "; "))
	}
	if len(m.ModelMap) > 0 {
		out = append(out, "model_map: "+strings.Join(m.ModelMap, ", "))
	}
	if len(m.GroupMap) > 0 {
		out = append(out, "group_map: "+strings.Join(m.GroupMap, ", "))
	}
	return out
}

// sets lists the login fields a level sets.
func (l oxLogin) sets() []string {
	var s []string
	for _, f := range []struct {
		v    *string
		name string
	}{{l.username, "username"}, {l.password, "password"}, {l.enable, "enable"}} {
		if f.v != nil {
			s = append(s, f.name)
		}
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// String writes a map as --map takes it, in column order.
func (m Map) String() string {
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(a, b int) bool { return m[keys[a]] < m[keys[b]] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, ",")
}

// looksEncrypted reports a file encrypted with GPG: ASCII armour, or a
// binary OpenPGP message, which starts with a session key packet.
func looksEncrypted(data []byte) bool {
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("-----BEGIN PGP MESSAGE-----")) {
		return true
	}
	if len(data) < 2 || data[0]&0x80 == 0 {
		return false
	}
	tag := data[0] & 0x3f // new format
	if data[0]&0x40 == 0 {
		tag = (data[0] >> 2) & 0x0f // old format
	}
	return tag == 1 || tag == 3
}
