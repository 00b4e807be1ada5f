// Package importer reads the device lists of other backup tools —
// Oxidized's and RANCID's router.db, RANCID's .cloginrc — and turns them
// into a plan: which devices, groups and credentials an import creates,
// which devices it updates, which lines it skips and why. The command
// line (backupd import) and the web UI's devices page share it, and both
// check devices with app/inventory, as the API and the CSV import do.
//
// Model and type names map to platforms through the platform registry's
// aliases (driver.Resolve), the one table every interface uses.
//
// Group names are taken as written, at the top of the group tree: a group
// "dc1/core" is one group of that name, not "core" inside "dc1", since
// group names are unique across the whole tree and two sites' "core"
// would otherwise clash. Groups can be rearranged afterwards.
package importer

import (
	"bytes"
	"fmt"
	"net"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"backupd/app/collect/driver"
)

// Limits of one file.
const (
	MaxBytes  = 64 << 20
	MaxLines  = 500_000
	maxFields = 64
)

// Formats.
const (
	Oxidized = "oxidized"
	Rancid   = "rancid"
)

// Entry is one device line of a file.
type Entry struct {
	Line     int
	Name     string
	Host     string
	Model    string // as written
	Platform string // resolved platform ID
	Group    string
	Username string
	Password string
	Enable   string
	// Set by backupd's CSV only; zero values leave a device's own (or
	// the default) as it is.
	Port        int
	LoginMethod string
	Credential  string // an existing credential, by name
	Template    string // an existing template of the platform, by name
	Encoding    string
	Enabled     *bool
	Remarks     *string
	// Zone names the device's zone (any case); "" leaves an existing
	// device's zone, or puts a new one in the import's default zone.
	Zone string
}

// Reason codes: why a line is skipped.
const (
	ReasonBlankName     = "blank_name"
	ReasonNoModel       = "no_model"
	ReasonUnknownModel  = "unknown_model"
	ReasonBadHost       = "bad_host"
	ReasonIPv6Delimiter = "ipv6_delimiter"
	ReasonDuplicate     = "duplicate"
	ReasonNotUp         = "not_up"
	ReasonFieldCount    = "field_count"
	ReasonInvalid       = "invalid"
	ReasonBadGroup      = "bad_group"
	// ReasonShifted: a column holds what another would (Args: the field,
	// its column, one of the Looks kinds); see shifted.go.
	ReasonShifted = "shifted"
	// ReasonOtherDelimiter: the name column holds another delimiter
	// (Args: that delimiter, the file's): the line is not shown.
	ReasonOtherDelimiter = "other_delimiter"
	// ReasonControl: a column that is not secret holds a control
	// character (Args: the field).
	ReasonControl = "control"
	// ReasonBadIPv4: the host is digits and dots but not an IPv4 address.
	ReasonBadIPv4 = "bad_ipv4"
	// ReasonRancidColon: an IPv6 address in a RANCID router.db that uses
	// ":" between its fields.
	ReasonRancidColon = "rancid_colon_ipv6"
)

// Skip is a line that is not imported, and why: Code is one of the Reason
// constants, Args its details (strings and ints), for interfaces that
// translate the message; Error gives it in English.
type Skip struct {
	Line int
	Name string
	Code string
	Args []any
}

// Reason says in English why the line is skipped.
func (s Skip) Reason() string {
	arg := func(i int) any {
		if i < len(s.Args) {
			return s.Args[i]
		}
		return ""
	}
	switch s.Code {
	case ReasonBlankName:
		return "no device name"
	case ReasonNoModel:
		return "no model or type"
	case ReasonUnknownModel:
		return fmt.Sprintf(`unknown model "%s" (see `+"`backupd platform list`"+` for the names backupd knows)`, arg(0))
	case ReasonBadHost:
		return fmt.Sprintf(`bad host "%s": must be an IP address or a DNS name`, arg(0))
	case ReasonBadIPv4:
		return fmt.Sprintf(`bad host "%s": not an IPv4 address (four numbers from 0 to 255, without leading zeros), and a DNS name does not end in a number`, arg(0))
	case ReasonIPv6Delimiter:
		return fmt.Sprintf(`the line holds an IPv6 address, which contains the delimiter "%s"; write the file with another delimiter (for example --delimiter ';' or ',') as Oxidized users do`, arg(0))
	case ReasonRancidColon:
		return `the line holds an IPv6 address, but this router.db puts ":" between its fields (the format before RANCID 3), ` +
			`and an IPv6 address is full of ":"; RANCID 3 changed the delimiter to ";" for this reason. ` +
			`Convert the file to name;type;state (RANCID 3's format) and import it again`
	case ReasonDuplicate:
		return fmt.Sprintf(`duplicate name "%s": first on line %v`, arg(0), arg(1))
	case ReasonNotUp:
		return fmt.Sprintf(`state is "%s": only devices that are "up" are imported`, arg(0))
	case ReasonFieldCount:
		if n, ok := arg(2).(int); ok && n > 0 {
			return fmt.Sprintf("%v fields, at least %v expected (the line, %d bytes, is not shown; is the delimiter right?)", arg(0), arg(1), n)
		}
		return fmt.Sprintf("%v fields, at least %v expected", arg(0), arg(1))
	case ReasonOtherDelimiter:
		return fmt.Sprintf(`the name column holds "%s": the file seems to use another delimiter than "%s" (--delimiter); the line is not shown`, arg(0), arg(1))
	case ReasonShifted:
		return fmt.Sprintf("the %v column (%v) holds %s, not a %v; the columns seem shifted, or the file has another layout: "+
			"check the column map shown above (--map sets it); nothing of this line is imported", arg(0), arg(1), lookPhrases[fmt.Sprint(arg(2))], arg(0))
	case ReasonControl:
		return fmt.Sprintf("the %v column holds a control character (shown escaped)", arg(0))
	case ReasonBadGroup:
		return fmt.Sprintf(`bad group name "%s": at most %v characters`, arg(0), arg(1))
	case ReasonInvalid:
		return fmt.Sprint(arg(0))
	case ReasonBadPort:
		return fmt.Sprintf(`bad port "%s": must be a number from 1 to 65535`, arg(0))
	case ReasonBadEnabled:
		return fmt.Sprintf(`enabled is "%s": write true or false`, arg(0))
	case ReasonNoCredential:
		return fmt.Sprintf(`no credential named "%s"`, arg(0))
	case ReasonNoTemplate:
		return fmt.Sprintf(`no template named "%s" for platform %v`, arg(0), arg(1))
	case ReasonNoZone:
		return fmt.Sprintf(`no zone named "%s" (see `+"`backupd collector zone list`)", arg(0))
	case ReasonCredentialUse:
		return fmt.Sprintf(`you may not use credential "%s": %v needs the credentials.use permission on it`, arg(0), arg(1))
	}
	return s.Code
}

// lookPhrases say in English what a misplaced value looks like.
var lookPhrases = map[string]string{
	LooksIP:       "an IP address",
	LooksHash:     "what looks like a password hash",
	LooksSecret:   "what looks like a password",
	LooksPlatform: "a platform or model name",
}

// Parsed is what a file holds: its device lines and the lines skipped.
type Parsed struct {
	Format    string
	Delimiter string
	// Map is the column map an Oxidized router.db was read with.
	Map     Map
	Entries []Entry
	Skipped []Skip
}

// FileError is about the whole file: not text, too large, a bad map.
type FileError struct{ Message string }

func (e *FileError) Error() string { return e.Message }

// Map is Oxidized's source.csv.map: the column (from 0) of each field.
// A field missing from the map is not read; without ip, the host is the
// name.
type Map map[string]int

// MapFields are the fields a map may name.
var MapFields = []string{"name", "ip", "model", "group", "username", "password", "enable"}

// DefaultMap is the layout Oxidized's documentation gives its CSV source
// (docs/Configuration.md, "Advanced Configuration"):
// name:model:username:password:enable, the enable password being
// vars_map's enable.
func DefaultMap() Map {
	return Map{"name": 0, "model": 1, "username": 2, "password": 3, "enable": 4}
}

// LegacyMap is backupd's default before it took Oxidized's:
// name:model:group:username:password. Files written for it need
// --map name=0,model=1,group=2,username=3,password=4.
func LegacyMap() Map {
	return Map{"name": 0, "model": 1, "group": 2, "username": 3, "password": 4}
}

// secretFields are the fields of a map whose values are never shown.
var secretFields = []string{"password", "enable"}

// checkSecretColumns refuses a map that reads a password column as a
// field that is shown (a name, a group, …): the secret would be printed
// on every page. The password and the enable password may share one.
func (m Map) checkSecretColumns(what string) error {
	for _, sec := range secretFields {
		c, ok := m[sec]
		if !ok {
			continue
		}
		for _, k := range sortedKeys(m) {
			if k != sec && !contains(secretFields, k) && m[k] == c {
				return &FileError{fmt.Sprintf("%s: %s and %s both read column %d; a password column cannot be another field too", what, sec, k, c)}
			}
		}
	}
	return nil
}

// ParseMap reads "name=0,model=1,ip=2".
func ParseMap(s string) (Map, error) {
	m := Map{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok {
			return nil, &FileError{fmt.Sprintf("column map: %q is not field=column", part)}
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n >= maxFields {
			return nil, &FileError{fmt.Sprintf("column map: %q: the column must be a number from 0 to %d", part, maxFields-1)}
		}
		if !contains(MapFields, k) {
			return nil, &FileError{fmt.Sprintf("column map: unknown field %q; known: %s", k, strings.Join(MapFields, ", "))}
		}
		if _, dup := m[k]; dup {
			return nil, &FileError{fmt.Sprintf("column map: field %q given twice", k)}
		}
		m[k] = n
	}
	for _, need := range []string{"name", "model"} {
		if _, ok := m[need]; !ok {
			return nil, &FileError{fmt.Sprintf("column map: the %s column is required", need)}
		}
	}
	if err := m.checkSecretColumns("column map"); err != nil {
		return nil, err
	}
	return m, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// lines splits a file into lines, without a byte order mark or CR, and
// calls fn with each non-blank, non-comment line and its number.
func lines(data []byte, fn func(n int, line string)) error {
	if len(data) > MaxBytes {
		return &FileError{fmt.Sprintf("the file is larger than %d MiB", MaxBytes>>20)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return &FileError{"the file is not UTF-8 text"}
	}
	n := 0
	for len(data) > 0 {
		n++
		if n > MaxLines {
			return &FileError{fmt.Sprintf("the file has more than %d lines", MaxLines)}
		}
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		s := strings.TrimSpace(strings.TrimSuffix(string(line), "\r"))
		if s == "" || s[0] == '#' {
			continue
		}
		fn(n, s)
	}
	return nil
}

// resolver caches model lookups: a large file names few models.
type resolver map[string]string

func (r resolver) resolve(model string) (string, bool) {
	k := strings.ToLower(model)
	if id, ok := r[k]; ok {
		return id, id != ""
	}
	p, ok := driver.Resolve(k)
	r[k] = p.ID
	return p.ID, ok
}

// finish checks what is common to every format: a name, a known model,
// a name not repeated in the file.
func (p *Parsed) add(res resolver, seen map[string]int, e Entry) {
	skip := func(code string, args ...any) {
		p.Skipped = append(p.Skipped, newSkip(e.Line, e.Name, code, args...))
	}
	switch {
	case e.Name == "":
		skip(ReasonBlankName)
		return
	case e.Model == "":
		skip(ReasonNoModel)
		return
	}
	for _, f := range [...]struct{ field, v string }{{"name", e.Name}, {"model", e.Model}, {"host", e.Host}, {"group", e.Group}} {
		if hasControl(f.v) {
			skip(ReasonControl, f.field)
			return
		}
	}
	id, ok := res.resolve(e.Model)
	if !ok {
		skip(ReasonUnknownModel, e.Model)
		return
	}
	e.Platform = id
	k := Fold(e.Name)
	if first, dup := seen[k]; dup {
		skip(ReasonDuplicate, e.Name, first)
		return
	}
	seen[k] = e.Line
	p.Entries = append(p.Entries, e)
}

// Fold folds ASCII letters only, as the database's NOCASE names do.
func Fold(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// ParseOxidized reads an Oxidized CSV router.db: fields split by delim
// (":" when empty; `\t` or "tab" for a tab), read by the column map m
// (DefaultMap when nil).
func ParseOxidized(data []byte, delim string, m Map) (*Parsed, error) {
	switch delim {
	case "":
		delim = ":"
	case `\t`, "tab":
		delim = "\t"
	}
	if m == nil {
		m = DefaultMap()
	}
	need := 0
	for _, k := range []string{"name", "model", "ip"} {
		if c, ok := m[k]; ok && c+1 > need {
			need = c + 1
		}
	}
	return parseOxidized(data, oxidizedLayout{delim: delim, m: m, need: need}, nil)
}

// oxidizedLayout is how the lines of a router.db are split and read.
type oxidizedLayout struct {
	delim string         // the delimiter, or
	re    *regexp.Regexp // a regular expression for it (an Oxidized configuration's)
	m     Map
	need  int // fields a line must have
}

func (l oxidizedLayout) split(line string) []string {
	if l.re != nil {
		return l.re.Split(line, maxFields+1)
	}
	return strings.SplitN(line, l.delim, maxFields+1)
}

// parseOxidized reads a router.db by layout; resolve, when set, completes
// each entry from an Oxidized configuration (get reads a column by
// field).
func parseOxidized(data []byte, l oxidizedLayout, resolve func(e *Entry, get func(string) string)) (*Parsed, error) {
	if looksEncrypted(data) {
		return nil, &FileError{"the router.db is encrypted with GPG (source.csv.gpg), which backupd does not decrypt: " +
			"decrypt it first (gpg --decrypt router.db > router.txt) and import that file"}
	}
	splitsIPv6 := strings.Contains(l.delim, ":") || l.re != nil && l.re.MatchString(":")
	join := l.delim
	if l.re != nil {
		join = ":"
	}
	p := &Parsed{Format: Oxidized, Delimiter: l.delim, Map: l.m}
	res, seen := resolver{}, map[string]int{}
	err := lines(data, func(n int, line string) {
		fields := l.split(line)
		skip := func(name, code string, args ...any) {
			p.Skipped = append(p.Skipped, newSkip(n, name, code, args...))
		}
		get := func(k string) string {
			c, ok := l.m[k]
			if !ok || c >= len(fields) {
				return ""
			}
			return strings.TrimSpace(fields[c])
		}
		if splitsIPv6 {
			if at := holdsIPv6(fields, join); at >= 0 {
				// The columns before the address are where the map says.
				name := ""
				if c, ok := l.m["name"]; ok && c < at {
					name = get("name")
				}
				skip(name, ReasonIPv6Delimiter, join)
				return
			}
		}
		if len(fields) < l.need {
			// The line does not split as the map says: which part is the
			// name and which a password cannot be told, so none is shown.
			skip("", ReasonFieldCount, len(fields), l.need, len(line))
			return
		}
		if d := l.otherDelimiter(get("name")); d != "" {
			skip("", ReasonOtherDelimiter, d, join)
			return
		}
		unset := func(v string) string {
			if resolve != nil && v == "nil" {
				return ""
			}
			return v
		}
		for _, c := range [...]struct {
			field string
			look  func(string) string
		}{{"model", shiftedGroup}, {"group", shiftedGroup}, {"username", res.shiftedUsername}} {
			if kind := c.look(unset(get(c.field))); kind != "" {
				skip(get("name"), ReasonShifted, c.field, l.m[c.field], kind)
				return
			}
		}
		e := Entry{Line: n, Name: get("name"), Host: get("ip"), Model: get("model"), Group: get("group"),
			Username: get("username"), Password: get("password"), Enable: get("enable")}
		if resolve != nil {
			resolve(&e, get)
		}
		if e.Host == "" {
			e.Host = e.Name
		}
		p.add(res, seen, e)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// otherDelimiters are the delimiters router.db files are written with.
const otherDelimiters = ",;|\t:"

// otherDelimiter returns a delimiter (other than the layout's) found in
// a name: the file is split by another one, and the "name" may hold the
// whole line, passwords and all. An IP address as the name may hold ":".
func (l oxidizedLayout) otherDelimiter(name string) string {
	for _, d := range otherDelimiters {
		ds := string(d)
		switch {
		case !strings.Contains(name, ds):
			continue
		case l.re != nil && l.re.MatchString(ds), l.re == nil && strings.Contains(l.delim, ds):
			continue
		case d == ':' && looksIP(name):
			continue
		}
		return ds
	}
	return ""
}

// holdsIPv6 returns where a run of three or more fields starts that,
// joined again by the delimiter, is an IPv6 address (the delimiter split
// it), or -1.
func holdsIPv6(fields []string, delim string) int {
	if len(fields) < 3 {
		return -1
	}
	for i := range fields {
		s := strings.TrimSpace(fields[i])
		for j := i + 1; j < len(fields) && j < i+8; j++ {
			s += delim + strings.TrimSpace(fields[j])
			// Empty fields alone ("r1:ios:::") join into "::", which is
			// no device's address.
			if j-i >= 2 && strings.Trim(s, ":[] ") != "" {
				if ip := net.ParseIP(strings.Trim(s, "[]")); ip != nil && strings.Contains(s, ":") {
					return i
				}
			}
		}
	}
	return -1
}

// ParseRancid reads a RANCID router.db: "name;type;state[;comment]", or
// "name:type:state[:comment]" as RANCID before 3.0 wrote it (the file's
// first device line decides). Only devices in state "up" are imported.
// cloginrc, when not nil, is a .cloginrc whose "add user" and "add
// password" lines give the devices' credentials.
func ParseRancid(data []byte, cloginrc []byte) (*Parsed, error) {
	var rc *Cloginrc
	if cloginrc != nil {
		var err error
		if rc, err = ParseCloginrc(cloginrc); err != nil {
			return nil, err
		}
	}
	p := &Parsed{Format: Rancid}
	res, seen := resolver{}, map[string]int{}
	err := lines(data, func(n int, line string) {
		if p.Delimiter == "" {
			p.Delimiter = ":"
			if strings.Contains(line, ";") {
				p.Delimiter = ";"
			}
		}
		if p.Delimiter == ":" && holdsIPv6(strings.Split(line, ":"), ":") >= 0 {
			p.Skipped = append(p.Skipped, newSkip(n, "", ReasonRancidColon))
			return
		}
		fields := strings.SplitN(line, p.Delimiter, 4)
		name := strings.TrimSpace(fields[0])
		if len(fields) < 3 {
			p.Skipped = append(p.Skipped, newSkip(n, "", ReasonFieldCount, len(fields), 3, len(line)))
			return
		}
		if state := strings.TrimSpace(fields[2]); !strings.EqualFold(state, "up") {
			p.Skipped = append(p.Skipped, newSkip(n, name, ReasonNotUp, state))
			return
		}
		e := Entry{Line: n, Name: name, Host: name, Model: strings.TrimSpace(fields[1])}
		if rc != nil {
			e.Username, e.Password, e.Enable = rc.For(name)
		}
		p.add(res, seen, e)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Cloginrc is the credentials part of a .cloginrc: "add user GLOB USER"
// and "add password GLOB PASSWORD [ENABLE]". As clogin does, the first
// line whose glob matches the device name wins, for each of the two.
type Cloginrc struct {
	users     []rcRule
	passwords []rcRule
}

type rcRule struct {
	glob   string
	values []string
}

// ParseCloginrc reads the "add user" and "add password" lines of a
// .cloginrc; every other line is left alone.
func ParseCloginrc(data []byte) (*Cloginrc, error) {
	rc := &Cloginrc{}
	err := lines(data, func(n int, line string) {
		words := tclWords(line)
		if len(words) < 4 || words[0] != "add" {
			return
		}
		r := rcRule{glob: strings.ToLower(words[2]), values: words[3:]}
		switch words[1] {
		case "user":
			rc.users = append(rc.users, r)
		case "password":
			rc.passwords = append(rc.passwords, r)
		}
	})
	if err != nil {
		return nil, &FileError{".cloginrc: " + err.Error()}
	}
	return rc, nil
}

// For returns the user, password and enable password for a device name.
func (rc *Cloginrc) For(name string) (user, password, enable string) {
	name = strings.ToLower(name)
	for _, r := range rc.users {
		if globMatch(r.glob, name) {
			user = r.values[0]
			break
		}
	}
	for _, r := range rc.passwords {
		if globMatch(r.glob, name) {
			password = r.values[0]
			if len(r.values) > 1 {
				enable = r.values[1]
			}
			break
		}
	}
	return user, password, enable
}

// globMatch is Tcl's "string match": *, ? and [...]; a malformed pattern
// matches nothing.
func globMatch(glob, name string) bool {
	ok, err := path.Match(glob, name)
	return err == nil && ok
}

// tclWords splits a line into words as Tcl would for the simple cases a
// .cloginrc holds: words separated by blanks, {braced} or "quoted".
func tclWords(line string) []string {
	var words []string
	for i := 0; i < len(line) && len(words) < maxFields; {
		switch c := line[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '{':
			end := strings.IndexByte(line[i+1:], '}')
			if end < 0 {
				words = append(words, line[i+1:])
				return words
			}
			words = append(words, line[i+1:i+1+end])
			i += end + 2
		case c == '"':
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				words = append(words, line[i+1:])
				return words
			}
			words = append(words, line[i+1:i+1+end])
			i += end + 2
		default:
			end := strings.IndexAny(line[i:], " \t")
			if end < 0 {
				end = len(line) - i
			}
			words = append(words, line[i:i+end])
			i += end
		}
	}
	return words
}

// sortSkips orders skipped lines by line number.
func sortSkips(s []Skip) {
	sort.SliceStable(s, func(a, b int) bool { return s[a].Line < s[b].Line })
}
