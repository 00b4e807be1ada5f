package insync

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"backupd/app/collect/driver"
	"backupd/db"
)

// The planner compares what a source says (its records) with what the
// store holds (the source's devices, every device's name, the group tree,
// the credentials and templates) and decides, per device, what a sync
// does: the changes ApplyInventorySync applies and the report a person
// reads. It only reads: a dry run is a plan that is not applied, so the
// dry run's report is the real run's (Sync).

// DefaultPlatforms maps the platform names sources commonly give —
// NetBox's platform slugs as people and the device-type library write
// them, LibreNMS's os values — to backupd's platform IDs. A source's own
// Mapping wins over it; a name in neither is tried as a backupd platform
// ID or alias (driver.Resolve: Oxidized models, RANCID types).
var DefaultPlatforms = map[string]string{
	// Cisco
	"cisco-ios": "cisco_ios", "ios": "cisco_ios",
	"cisco-ios-xe": "cisco_xe", "iosxe": "cisco_xe", "ios-xe": "cisco_xe",
	"cisco-nx-os": "cisco_nxos", "cisco-nxos": "cisco_nxos", "nxos": "cisco_nxos", "nx-os": "cisco_nxos",
	"cisco-ios-xr": "cisco_xr", "iosxr": "cisco_xr", "ios-xr": "cisco_xr",
	"cisco-asa": "cisco_asa", "asa": "cisco_asa",
	"ciscowlc": "cisco_wlc", "ciscosb": "cisco_smb",
	// Juniper
	"junos": "juniper_junos", "juniper-junos": "juniper_junos",
	// Arista
	"eos": "arista_eos", "arista-eos": "arista_eos", "arista_eos": "arista_eos",
	// MikroTik
	"routeros": "mikrotik_routeros", "mikrotik-routeros": "mikrotik_routeros",
	// VyOS, FRR, Cumulus, Ubiquiti
	"vyos": "vyos",
	"frr":  "frr", "frrouting": "frr",
	"cumulus": "cumulus_linux", "cumulus-linux": "cumulus_linux",
	"edgeos": "ubiquiti_edgeos", "ubiquiti-edgeos": "ubiquiti_edgeos",
	// Firewalls
	"fortios": "fortinet", "fortinet-fortios": "fortinet", "fortigate": "fortinet",
	"panos": "paloalto_panos", "paloalto-panos": "paloalto_panos", "palo-alto-panos": "paloalto_panos",
	"pfsense": "pfsense", "opnsense": "opnsense",
	// HPE / Aruba / H3C
	"procurve": "hp_procurve", "hp-procurve": "hp_procurve", "aruba-procurve": "hp_procurve",
	"aoscx": "aruba_aoscx", "aruba-aoscx": "aruba_aoscx", "aruba-cx": "aruba_aoscx", "arubaos-cx": "aruba_aoscx",
	"comware": "hp_comware", "hpe-comware": "hp_comware", "hp-comware": "hp_comware",
	// Huawei
	"vrp": "huawei_vrp", "huawei-vrp": "huawei_vrp",
	// Nokia, Extreme, Dell
	"sros": "nokia_sros", "nokia-sros": "nokia_sros", "timos": "nokia_sros",
	"exos": "extreme_exos", "extreme-exos": "extreme_exos", "xos": "extreme_exos",
	"dell-os10": "dell_os10", "dellos10": "dell_os10", "os10": "dell_os10",
	"ftos": "dell_os9", "dell-os9": "dell_os9",
	"ironware": "ruckus_fastiron", "fastiron": "ruckus_fastiron",
	"opengear": "opengear",
}

// SourceConfig is an inventory source's settings: the JSON object its
// Config holds. One of NetBox and HTTP says where the devices come from;
// the rest how they become backupd devices. It never holds a secret: the
// token is the source's sealed Token.
//
//	{"netbox": {"url": "https://netbox.example.net", "site": ["par1"], "group_from": ["region", "site"]},
//	 "mapping": {"opengear-os": "opengear"},
//	 "defaults": {"login_method": "ssh", "port": {"ssh": 22}, "credential": "core-login"},
//	 "claim": false}
type SourceConfig struct {
	NetBox *NetBoxConfig `json:"netbox,omitempty"`
	HTTP   *HTTPConfig   `json:"http,omitempty"`
	// Mapping maps the source's platform names (lower case) to backupd
	// platform IDs (or aliases); it wins over DefaultPlatforms.
	Mapping  map[string]string `json:"mapping,omitempty"`
	Defaults Defaults          `json:"defaults"`
	// Claim adopts a device made by hand whose name is a record's name
	// (ignoring case): the source owns it from then on. Off, such a
	// device is left alone and the record skipped.
	Claim bool `json:"claim,omitempty"`
}

// Defaults fill what a record does not say.
type Defaults struct {
	// LoginMethod is "ssh" (the default) or "telnet".
	LoginMethod string `json:"login_method,omitempty"`
	// Port is the port by login method (22 for ssh, 23 for telnet unless
	// set).
	Port map[string]int `json:"port,omitempty"`
	// Platform is the platform (a backupd ID or a name the mapping
	// knows) of a record that names none.
	Platform string `json:"platform,omitempty"`
	// Credential and Template are names used when a record names none.
	Credential string `json:"credential,omitempty"`
	Template   string `json:"template,omitempty"`
}

// NetBoxConfig is NetBox's part of a SourceConfig: NetBox's fields but
// the token, as JSON.
type NetBoxConfig struct {
	URL            string   `json:"url"`
	Site           []string `json:"site,omitempty"`
	Role           []string `json:"role,omitempty"`
	Tag            []string `json:"tag,omitempty"`
	Status         string   `json:"status,omitempty"`
	Query          string   `json:"query,omitempty"`
	HostFrom       string   `json:"host_from,omitempty"`
	PlatformFrom   string   `json:"platform_from,omitempty"`
	GroupFrom      []string `json:"group_from,omitempty"`
	CredentialFrom string   `json:"credential_from,omitempty"`
	TemplateFrom   string   `json:"template_from,omitempty"`
	CAFile         string   `json:"ca_file,omitempty"`
	PageSize       int      `json:"page_size,omitempty"`
}

// HTTPConfig is an HTTP JSON source's part of a SourceConfig: HTTPJSON's
// fields as JSON, but that the token travels in TokenHeader (with
// TokenPrefix before it) rather than in Headers, which hold no secret.
// Preset "librenms" takes LibreNMS's configuration from URL (LibreNMS's
// address) and the token.
type HTTPConfig struct {
	Preset        string            `json:"preset,omitempty"`
	URL           string            `json:"url"`
	Headers       map[string]string `json:"headers,omitempty"`
	TokenHeader   string            `json:"token_header,omitempty"`
	TokenPrefix   string            `json:"token_prefix,omitempty"`
	HostsLocation string            `json:"hosts_location,omitempty"`
	Map           map[string]string `json:"map,omitempty"`
	VarsMap       map[string]string `json:"vars_map,omitempty"`
	Pagination    struct {
		Kind      string `json:"kind,omitempty"`
		NextPath  string `json:"next_path,omitempty"`
		PageParam string `json:"page_param,omitempty"`
		Start     int    `json:"start,omitempty"`
	} `json:"pagination"`
	CAFile string `json:"ca_file,omitempty"`
}

// Action is what a sync does to one device, as the report says.
type Action string

// The actions of a report line.
const (
	ActCreate  Action = "create"
	ActUpdate  Action = "update"
	ActClaim   Action = "claim"
	ActDisable Action = "disable"
	ActEnable  Action = "enable"
	// ActLeave: the device stays as it is (Reason says why).
	ActLeave Action = "leave"
	// ActSkip: the record cannot become a device (Reason says why);
	// nothing is written for it.
	ActSkip Action = "skip"
)

// Line is one device's line of a report.
type Line struct {
	Action Action
	// Key is the source's key, Name the device's name (the record's, or
	// the device's for one that vanished).
	Key, Name string
	// DeviceID is the device's id (0 for a dry run's create or a
	// skipped record without one; a sync's create has its new device's).
	// Fields are what an update sets; Reason why a line leaves, skips,
	// claims, enables or disables.
	DeviceID int64
	Fields   []string
	Reason   Why
}

// String is the line as a person reads it.
func (l Line) String() string {
	s := string(l.Action) + " " + l.Name
	if l.Key != "" {
		s += " (key " + l.Key + ")"
	}
	if len(l.Fields) > 0 {
		s += ": " + strings.Join(l.Fields, ", ")
	}
	if !l.Reason.IsZero() {
		s += ": " + l.Reason.String()
	}
	return s
}

// Report is what a sync did, or, in a dry run, would do: one line per
// device or record, by name, and the figures by action.
type Report struct {
	Source string
	DryRun bool
	Lines  []Line
	// Error is why the sync changed nothing (a failed fetch), or "".
	Error string
}

// Counts are the report's figures by action ("create": 3 …).
func (r Report) Counts() map[string]int {
	m := map[string]int{}
	for _, l := range r.Lines {
		m[string(l.Action)]++
	}
	return m
}

// State is what the planner reads of the store: the source's devices
// (SyncedDevices), the rest of the store (InventoryView), and the other
// sources' names by id (for the lines that name them).
type State struct {
	Synced      []db.SyncedDevice
	View        db.InventoryView
	SourceNames map[int64]string
}

// fold is a name as the unique name columns compare it (case ignored).
func fold(s string) string { return strings.ToLower(s) }

// PlatformFor maps a source's platform name to a backupd platform ID:
// the source's mapping first, then DefaultPlatforms, then backupd's IDs
// and aliases. The problem says what to add when none knows it.
func PlatformFor(name string, mapping map[string]string) (string, Why) {
	slug := strings.ToLower(strings.TrimSpace(name))
	if slug == "" {
		return "", why(WhyNoPlatform)
	}
	for k, v := range mapping {
		if strings.ToLower(strings.TrimSpace(k)) == slug {
			if p, ok := driver.Resolve(v); ok {
				return p.ID, Why{}
			}
			return "", why(WhyMappingUnknown, slug, v)
		}
	}
	if id, ok := DefaultPlatforms[slug]; ok {
		if _, ok := driver.Lookup(id); ok {
			return id, Why{}
		}
	}
	if p, ok := driver.Resolve(slug); ok {
		return p.ID, Why{}
	}
	return "", why(WhyUnknownPlatform, slug)
}

// platformOf is a source platform's backupd platform, or why it has none.
type platformOf struct {
	id      string
	problem Why
}

// planner holds one plan's lookups.
type planner struct {
	src       db.InventorySource
	cfg       SourceConfig
	st        State
	platforms map[string]platformOf             // source name → id or problem
	byName    map[string]db.InventoryViewDevice // folded name → device
	creds     map[string]int64                  // folded name → id
	templates map[string][]db.DeviceChoice      // folded name → templates of every platform
	groups    map[string][]string               // folded name → the group's path
}

// Plan decides what a sync of src does with records, given the store's
// state: the report (one line per record and per device of the source
// that vanished) and the changes to apply. It writes nothing.
func Plan(src db.InventorySource, cfg SourceConfig, records []Record, st State) (Report, []db.InventoryChange) {
	p := &planner{src: src, cfg: cfg, st: st, platforms: map[string]platformOf{},
		byName: make(map[string]db.InventoryViewDevice, len(st.View.Devices)), creds: map[string]int64{},
		templates: map[string][]db.DeviceChoice{}, groups: map[string][]string{}}
	for _, d := range st.View.Devices {
		p.byName[fold(d.Name)] = d
	}
	for _, c := range st.View.Credentials {
		p.creds[fold(c.Name)] = c.ID
	}
	for _, t := range st.View.Templates {
		p.templates[fold(t.Name)] = append(p.templates[fold(t.Name)], t)
	}
	for _, path := range st.View.GroupPaths {
		if len(path) > 0 {
			p.groups[fold(path[len(path)-1])] = path
		}
	}
	synced := make(map[string]db.SyncedDevice, len(st.Synced))
	for _, d := range st.Synced {
		synced[d.Key] = d
	}

	recs := slices.Clone(records)
	slices.SortStableFunc(recs, func(a, b Record) int { return compareKeys(a.Key, b.Key) })
	// Names (and keys) given twice: every record holding one is
	// skipped, for the source must say which device the name is.
	nameKeys := map[string][]string{}
	keyCount := map[string]int{}
	for _, r := range recs {
		if r.Problem.IsZero() {
			nameKeys[fold(r.Name)] = append(nameKeys[fold(r.Name)], r.Key)
		}
		keyCount[r.Key]++
	}

	var rep Report
	rep.Source = src.Name
	var changes []db.InventoryChange
	seen := map[string]bool{}
	add := func(l Line, c *db.InventoryChange) {
		rep.Lines = append(rep.Lines, l)
		if c != nil {
			changes = append(changes, *c)
		}
	}
	for _, r := range recs {
		// A record seen, even a bad one, keeps its device from being
		// disabled: a bad record is not a vanished device, and a typo
		// in the source must not switch a device's backups off.
		key := r.Key
		if key == "" {
			key = r.Name
		}
		first := !seen[key]
		seen[key] = true
		cur, has := synced[key]
		line := Line{Key: key, Name: r.Name}
		if has {
			line.DeviceID = cur.DeviceID
		}
		if !first || keyCount[key] > 1 {
			line.Action, line.Reason = ActSkip, why(WhyKeyReused, key)
			add(line, nil)
			continue
		}
		want, problem := p.device(r)
		if problem.IsZero() && len(nameKeys[fold(r.Name)]) > 1 {
			problem = why(WhyDuplicateName, strings.Join(nameKeys[fold(r.Name)], ", "))
		}
		if problem.IsZero() && len(key) > db.MaxInventoryKey {
			problem = why(WhyKeyTooLong, strconv.Itoa(db.MaxInventoryKey))
		}
		if problem.IsZero() {
			problem = p.nameTaken(r.Name, cur, has)
		}
		if !problem.IsZero() {
			line.Action, line.Reason = ActSkip, problem
			if has {
				line.Reason = line.Reason.and(why(WhyLeftAsIs))
			}
			add(line, nil)
			continue
		}
		if !has {
			p.planNew(r, key, want, &line, add)
			continue
		}
		fields, was := diff(cur.Device, want)
		switch {
		case !cur.Enabled && !cur.DisabledBySync:
			line.Action, line.Reason = ActLeave, why(WhyDisabledByPerson)
			add(line, nil)
			continue
		case !cur.Enabled:
			add(Line{Action: ActEnable, Key: key, Name: r.Name, DeviceID: cur.DeviceID, Reason: why(WhyBackInSource)},
				&db.InventoryChange{Kind: db.InventoryEnable, Key: key, DeviceID: cur.DeviceID})
		}
		if len(fields) == 0 {
			if cur.Enabled {
				line.Action, line.Reason = ActLeave, why(WhyUnchanged)
				add(line, nil)
			}
			continue
		}
		line.Action, line.Fields = ActUpdate, fields
		add(line, &db.InventoryChange{Kind: db.InventoryUpdate, Key: key, DeviceID: cur.DeviceID, Device: want, Fields: fields, Was: was})
	}
	for _, d := range st.Synced {
		if seen[d.Key] {
			continue
		}
		line := Line{Key: d.Key, Name: d.Device.Name, DeviceID: d.DeviceID}
		switch {
		case d.Enabled:
			line.Action, line.Reason = ActDisable, why(WhyGone)
			add(line, &db.InventoryChange{Kind: db.InventoryDisable, Key: d.Key, DeviceID: d.DeviceID})
		case d.DisabledBySync:
			line.Action, line.Reason = ActLeave, why(WhyGoneDisabled)
			add(line, nil)
		default:
			line.Action, line.Reason = ActLeave, why(WhyGoneDisabledByHand)
			add(line, nil)
		}
	}
	// Lines by name, then key; an enable before its device's update.
	order := func(a Action) int {
		if a == ActEnable {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(rep.Lines, func(a, b Line) int {
		return cmp.Or(strings.Compare(fold(a.Name), fold(b.Name)), compareKeys(a.Key, b.Key), cmp.Compare(order(a.Action), order(b.Action)))
	})
	return rep, changes
}

// planNew plans a record whose key the source has not given a device:
// a create, or a claim of the device made by hand that has its name.
func (p *planner) planNew(r Record, key string, want db.InventoryDevice, line *Line, add func(Line, *db.InventoryChange)) {
	d, taken := p.byName[fold(r.Name)]
	if !taken {
		line.Action = ActCreate
		add(*line, &db.InventoryChange{Kind: db.InventoryCreate, Key: key, Device: want})
		return
	}
	// nameTaken let only a device made by hand through.
	line.DeviceID = d.ID
	if !p.cfg.Claim {
		line.Action, line.Reason = ActLeave, why(WhyHandMadeNoClaim)
		add(*line, nil)
		return
	}
	line.Action, line.Reason = ActClaim, why(WhyClaimed)
	add(*line, &db.InventoryChange{Kind: db.InventoryClaim, Key: key, DeviceID: d.ID, Was: db.InventoryDevice{Name: d.Name}})
}

// nameTaken says why name cannot be the device's (zero if it can): another device,
// of another source or of this one under another key, has it. A device
// made by hand is left to planNew.
func (p *planner) nameTaken(name string, cur db.SyncedDevice, has bool) Why {
	d, ok := p.byName[fold(name)]
	if !ok || has && d.ID == cur.DeviceID {
		return Why{}
	}
	switch {
	case d.SourceID == nil:
		if has {
			return why(WhyNameTakenByHand, d.Name)
		}
		return Why{}
	case *d.SourceID != p.src.ID:
		src := p.st.SourceNames[*d.SourceID]
		if src == "" {
			src = "#" + strconv.FormatInt(*d.SourceID, 10)
		}
		return why(WhyNameTakenOtherSrc, src)
	default:
		k := ""
		if d.Key != nil {
			k = *d.Key
		}
		return why(WhyNameTakenThisSrc, k)
	}
}

// device is the device r describes, or the problem that keeps it from
// being one.
func (p *planner) device(r Record) (db.InventoryDevice, Why) {
	if !r.Problem.IsZero() {
		return db.InventoryDevice{}, r.Problem
	}
	if pr := nameProblem(r.Name); pr != "" {
		return db.InventoryDevice{}, why(nameWhy[pr], quoted(r.Name))
	}
	slug := r.Platform
	if strings.TrimSpace(slug) == "" {
		slug = p.cfg.Defaults.Platform
	}
	pl, ok := p.platforms[slug]
	if !ok {
		pl.id, pl.problem = PlatformFor(slug, p.cfg.Mapping)
		p.platforms[slug] = pl
	}
	if !pl.problem.IsZero() {
		return db.InventoryDevice{}, pl.problem
	}
	d := db.InventoryDevice{Name: r.Name, Host: r.Host, Platform: pl.id}
	var problem Why
	if d.LoginMethod, d.Port, problem = loginOf(r, p.cfg.Defaults); !problem.IsZero() {
		return d, problem
	}
	if len(r.Group) > db.MaxInventoryGroupDepth {
		return d, why(WhyGroupTooDeep, strconv.Itoa(len(r.Group)), strconv.Itoa(db.MaxInventoryGroupDepth))
	}
	for i, g := range r.Group {
		if pr := nameProblem(g); pr != "" {
			return d, why(groupWhy[pr], quoted(g))
		}
		if at, ok := p.groups[fold(g)]; ok && !foldEqual(at[:len(at)-1], r.Group[:i]) {
			return d, why(WhyGroupElsewhere, quoted(g), strings.Join(at, " / "))
		}
	}
	d.GroupPath = r.Group
	if cred := cmp.Or(r.Credential, p.cfg.Defaults.Credential); cred != "" {
		id, ok := p.creds[fold(cred)]
		if !ok {
			return d, why(WhyUnknownCredential, quoted(cred))
		}
		d.CredentialID = &id
	}
	if tname := cmp.Or(r.Template, p.cfg.Defaults.Template); tname != "" {
		var other string
		for _, t := range p.templates[fold(tname)] {
			if t.Platform == d.Platform {
				id := t.ID
				d.TemplateID = &id
				break
			}
			other = t.Platform
		}
		if d.TemplateID == nil {
			if other != "" {
				return d, why(WhyTemplateOtherPlat, quoted(tname), other, d.Platform)
			}
			return d, why(WhyUnknownTemplate, quoted(tname))
		}
	}
	return d, Why{}
}

// nameProblem says why s cannot be a device's or a group's name ("" when
// it can).
func nameProblem(s string) string {
	switch {
	case s != strings.TrimSpace(s):
		return nameSpaces
	case !utf8.ValidString(s):
		return nameNotUTF8
	case utf8.RuneCountInString(s) > 100:
		return nameTooLong
	case strings.ContainsFunc(s, unicode.IsControl):
		return nameControl
	}
	return ""
}

// foldEqual compares group paths as the store's names compare.
func foldEqual(a, b []string) bool {
	return slices.EqualFunc(a, b, func(x, y string) bool { return fold(x) == fold(y) })
}

// diff names the fields in which want differs from cur, and cur's values
// of them (what an update must still find).
func diff(cur, want db.InventoryDevice) ([]string, db.InventoryDevice) {
	var fields []string
	var was db.InventoryDevice
	if cur.Name != want.Name {
		fields, was.Name = append(fields, db.InventoryFieldName), cur.Name
	}
	if cur.Host != want.Host {
		fields, was.Host = append(fields, db.InventoryFieldHost), cur.Host
	}
	if cur.Port != want.Port {
		fields, was.Port = append(fields, db.InventoryFieldPort), cur.Port
	}
	if cur.Platform != want.Platform {
		fields, was.Platform = append(fields, db.InventoryFieldPlatform), cur.Platform
	}
	if cur.LoginMethod != want.LoginMethod {
		fields, was.LoginMethod = append(fields, db.InventoryFieldLoginMethod), cur.LoginMethod
	}
	if !foldEqual(cur.GroupPath, want.GroupPath) {
		fields, was.GroupPath = append(fields, db.InventoryFieldGroup), cur.GroupPath
	}
	if !sameID(cur.CredentialID, want.CredentialID) {
		fields, was.CredentialID = append(fields, db.InventoryFieldCredentialID), cur.CredentialID
	}
	if !sameID(cur.TemplateID, want.TemplateID) {
		fields, was.TemplateID = append(fields, db.InventoryFieldTemplateID), cur.TemplateID
	}
	return fields, was
}

func sameID(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// compareKeys orders keys as numbers when both are (NetBox's ids), else
// as text.
func compareKeys(a, b string) int {
	if isDigits(a) && isDigits(b) {
		return cmp.Or(cmp.Compare(len(strings.TrimLeft(a, "0")), len(strings.TrimLeft(b, "0"))), strings.Compare(a, b))
	}
	return strings.Compare(a, b)
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
