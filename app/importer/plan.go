package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"backupd/app/collect/driver"
	"backupd/app/inventory"
	"backupd/app/secret"
	"backupd/db"
)

// Actions of a planned line.
const (
	Create    = "create"
	Update    = "update"
	Unchanged = "unchanged"
)

// Row is one device line the import acts on.
type Row struct {
	Line    int
	Action  string
	Device  db.Device
	Changes []string // for Update: the fields that change
	// Group and Credential name what the device is placed in and logs in
	// with ("" when the file says nothing); NewGroup and NewCredential
	// say that the import creates them.
	Group         string
	NewGroup      bool
	Credential    string
	NewCredential int // 1-based index into Plan.Credentials; 0: an existing one or none
	// Zone names the device's zone.
	Zone string
	// CredentialUse says how the line uses an existing credential
	// (inventory.UseAttach or UseAddress), "" when it uses none.
	CredentialUse string
}

// NewCredential is a credential the import creates. The secrets stay
// plain only in memory until Apply seals them.
type NewCredential struct {
	Name, Username, Password, Enable string
}

// Plan is what an import does: every device line with its action, the
// lines skipped, and the groups and credentials created.
type Plan struct {
	Format      string
	Rows        []Row
	Skipped     []Skip
	Groups      []string
	Credentials []NewCredential
}

// Counts of a plan.
func (p *Plan) Counts() (created, updated, unchanged, skipped int) {
	for _, r := range p.Rows {
		switch r.Action {
		case Create:
			created++
		case Update:
			updated++
		default:
			unchanged++
		}
	}
	return created, updated, unchanged, len(p.Skipped)
}

// Build plans the import of parsed into the store: a device whose name is
// already known (compared as names are, ASCII case folded) is updated,
// others are created. Each device is checked by inventory.CheckDevice;
// one that fails is skipped with the reason. Credentials are compared
// with the store's (opened with sealer), so that the same login is never
// stored twice, and neither are groups. defaultGroup, when not empty,
// is the group of lines that name none.
//
// defaultZone, when not empty, names the zone (any case) of lines that
// name none; an unknown one is an error before anything is planned. A
// line naming an unknown zone is skipped. Without either, a new device
// goes to the local zone and an existing one stays in its own. Devices
// are matched by name, which is unique across zones: the same address
// in two zones is two devices.
func Build(ctx context.Context, store *db.Store, sealer *secret.Sealer, parsed *Parsed, defaultGroup, defaultZone string) (*Plan, error) {
	return BuildFor(ctx, store, sealer, parsed, defaultGroup, defaultZone, nil)
}

// BuildFor is Build for a user (who; nil is the operator on the server,
// who may use every credential): a line that would attach an existing
// credential the user may not use, or send one to a device's new
// address, is skipped (ReasonCredentialUse); a login of the file is not
// matched with an existing credential the user may not use (it becomes
// a credential of its own), so that the plan tells nothing about the
// secrets of others.
func BuildFor(ctx context.Context, store *db.Store, sealer *secret.Sealer, parsed *Parsed, defaultGroup, defaultZone string, who inventory.CredentialUser) (*Plan, error) {
	plan := &Plan{Format: parsed.Format, Skipped: append([]Skip(nil), parsed.Skipped...)}
	canUse := func(int64) bool { return true }
	if who != nil {
		canUse = who.CanUseCredential
	}
	allZones, err := store.ListZones(ctx)
	if err != nil {
		return nil, err
	}
	zones := map[string]db.Zone{}
	zoneNames := map[int64]string{}
	for _, z := range allZones {
		zones[Fold(z.Name)] = z
		zoneNames[z.ID] = z.Name
	}
	defaultZone = strings.TrimSpace(defaultZone)
	if _, ok := zones[Fold(defaultZone)]; defaultZone != "" && !ok {
		return nil, &ZoneError{Name: defaultZone}
	}
	existing := map[string]db.Device{}
	var after int64
	for range 10_000 { // a billion devices at the most
		page, err := store.DevicesAfter(ctx, db.Scope{All: true}, db.DeviceFilter{}, after, 1000)
		if err != nil {
			return nil, err
		}
		for _, d := range page {
			existing[Fold(d.Name)] = d
			after = d.ID
		}
		if len(page) < 1000 {
			break
		}
	}
	allGroups, err := store.AllGroups(ctx)
	if err != nil {
		return nil, err
	}
	groups := map[string]db.Group{}
	groupNames := map[int64]string{}
	for _, g := range allGroups {
		groups[Fold(g.Name)] = g
		groupNames[g.ID] = g.Name
	}
	creds, err := newCredentialIndex(ctx, store, sealer, parsed.Format)
	if err != nil {
		return nil, err
	}
	creds.usable = canUse
	tpls, err := store.DeviceTemplateChoices(ctx)
	if err != nil {
		return nil, err
	}
	templates := map[string]map[string][]int64{}
	for _, t := range tpls {
		if templates[t.Platform] == nil {
			templates[t.Platform] = map[string][]int64{}
		}
		k := Fold(t.Name)
		templates[t.Platform][k] = append(templates[t.Platform][k], t.ID)
	}
	newGroups := map[string]string{}
	defaultGroup = strings.TrimSpace(defaultGroup)
	for _, e := range parsed.Entries {
		skip := func(code string, args ...any) {
			plan.Skipped = append(plan.Skipped, newSkip(e.Line, e.Name, code, args...))
		}
		old, known := existing[Fold(e.Name)]
		d := old
		if !known {
			d = inventory.NewDevice()
			d.Name = e.Name
		}
		d.Host, d.Platform = e.Host, e.Platform
		zone := e.Zone
		if zone == "" {
			zone = defaultZone
		}
		switch z, ok := zones[Fold(zone)]; {
		case zone != "" && !ok:
			skip(ReasonNoZone, zone)
			continue
		case zone != "":
			d.ZoneID = z.ID
		case d.ZoneID == 0:
			d.ZoneID = db.LocalZone
		}
		if e.LoginMethod != "" {
			inventory.SetLoginMethod(&d, e.LoginMethod)
		} else if pl, ok := driver.Lookup(d.Platform); ok && !pl.OffersTransport(d.LoginMethod) {
			inventory.SetLoginMethod(&d, pl.TransportList()[0])
		}
		if e.Port != 0 {
			d.Port = e.Port
		}
		if e.Encoding != "" {
			d.Encoding = e.Encoding
		}
		if e.Enabled != nil {
			d.Enabled = *e.Enabled
		}
		if e.Remarks != nil {
			d.Remarks = nil
			if r := *e.Remarks; r != "" {
				d.Remarks = &r
			}
		}
		if e.Template != "" {
			ids := templates[d.Platform][Fold(e.Template)]
			if len(ids) != 1 {
				skip(ReasonNoTemplate, e.Template, d.Platform)
				continue
			}
			d.TemplateID = &ids[0]
		} else if d.TemplateID != nil && d.Platform != old.Platform {
			d.TemplateID = nil // a template belongs to one platform
		}
		if e.Credential != "" {
			id, ok := creds.byName[Fold(e.Credential)]
			if !ok {
				skip(ReasonNoCredential, e.Credential)
				continue
			}
			d.CredentialID = &id
		}
		if errs := inventory.CheckDevice(&d); len(errs) > 0 {
			switch {
			case errs[0].Problem == inventory.BadHost && inventory.NumericHost(d.Host):
				skip(ReasonBadIPv4, e.Host)
			case errs[0].Problem == inventory.BadHost:
				skip(ReasonBadHost, e.Host)
			default:
				skip(ReasonInvalid, errs[0].Error())
			}
			continue
		}
		row := Row{Line: e.Line, Device: d, Zone: zoneNames[d.ZoneID]}
		group := e.Group
		if group == "" {
			group = defaultGroup
		}
		if group != "" {
			if utf8.RuneCountInString(group) > inventory.MaxNameLength {
				skip(ReasonBadGroup, group, inventory.MaxNameLength)
				continue
			}
			if g, ok := groups[Fold(group)]; ok {
				row.Group, row.Device.GroupID = g.Name, &g.ID
			} else {
				k := Fold(group)
				if _, seen := newGroups[k]; !seen {
					newGroups[k] = group
					plan.Groups = append(plan.Groups, group)
				}
				row.Group, row.NewGroup, row.Device.GroupID = newGroups[k], true, nil
			}
		} else if d.GroupID != nil {
			row.Group = groupNames[*d.GroupID]
		}
		if e.Username != "" || e.Password != "" || e.Enable != "" {
			id, name, idx := creds.find(e.Username, e.Password, e.Enable, plan)
			row.Credential, row.NewCredential = name, idx
			if idx == 0 {
				row.Device.CredentialID = &id
			} else {
				row.Device.CredentialID = nil
			}
		} else if d.CredentialID != nil {
			row.Credential = creds.names[*d.CredentialID]
		}
		var before *db.Device
		if known {
			before = &old
		}
		if use, ok := inventory.UsesCredential(before, row.Device); ok {
			if !canUse(use.CredentialID) {
				what := "attaching it"
				if use.How == inventory.UseAddress {
					what = "changing the address of a device that logs in with it"
				}
				skip(ReasonCredentialUse, creds.names[use.CredentialID], what)
				continue
			}
			row.CredentialUse = use.How
		}
		switch {
		case !known:
			row.Action = Create
		default:
			row.Changes = changes(old, row)
			row.Action = Unchanged
			if len(row.Changes) > 0 {
				row.Action = Update
			}
		}
		plan.Rows = append(plan.Rows, row)
	}
	sortSkips(plan.Skipped)
	return plan, nil
}

// changes lists what the import changes of an existing device.
func changes(old db.Device, r Row) []string {
	var out []string
	if old.Host != r.Device.Host {
		out = append(out, "host")
	}
	if old.Platform != r.Device.Platform {
		out = append(out, "platform")
	}
	if old.LoginMethod != r.Device.LoginMethod {
		out = append(out, "login method")
	}
	if old.Port != r.Device.Port {
		out = append(out, "port")
	}
	if old.Encoding != r.Device.Encoding {
		out = append(out, "encoding")
	}
	if old.Enabled != r.Device.Enabled {
		out = append(out, "enabled")
	}
	if !sameString(old.Remarks, r.Device.Remarks) {
		out = append(out, "remarks")
	}
	if !sameID(old.TemplateID, r.Device.TemplateID) {
		out = append(out, "template")
	}
	if r.NewGroup || !sameID(old.GroupID, r.Device.GroupID) {
		out = append(out, "group")
	}
	if r.NewCredential > 0 || !sameID(old.CredentialID, r.Device.CredentialID) {
		out = append(out, "credential")
	}
	if max(old.ZoneID, db.LocalZone) != max(r.Device.ZoneID, db.LocalZone) {
		out = append(out, "zone")
	}
	return out
}

func sameString(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func sameID(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// credentialIndex finds a login among the store's credentials and those
// the plan creates.
type credentialIndex struct {
	existing map[[3]string]db.Credential
	names    map[int64]string
	byName   map[string]int64
	planned  map[[3]string]int
	prefix   string
	next     int
	taken    map[string]bool
	// usable says whether a login may be matched with an existing
	// credential.
	usable func(id int64) bool
}

// newCredentialIndex opens the store's password credentials (those with
// no private key) to compare them with the file's logins.
func newCredentialIndex(ctx context.Context, store *db.Store, sealer *secret.Sealer, format string) (*credentialIndex, error) {
	ix := &credentialIndex{existing: map[[3]string]db.Credential{}, names: map[int64]string{}, byName: map[string]int64{}, planned: map[[3]string]int{},
		prefix: "Imported " + format + " ", next: 1, taken: map[string]bool{}}
	for off := 0; off < 1_000_000; off += 500 {
		page, total, err := store.ListCredentials(ctx, 500, off)
		if err != nil {
			return nil, err
		}
		for _, c := range page {
			ix.names[c.ID] = c.Name
			ix.byName[Fold(c.Name)] = c.ID
			ix.taken[Fold(c.Name)] = true
			if n, err := strconv.Atoi(strings.TrimPrefix(c.Name, ix.prefix)); err == nil && strings.HasPrefix(c.Name, ix.prefix) && n >= ix.next {
				ix.next = n + 1
			}
			if c.PrivateKey != nil {
				continue
			}
			open := func(b []byte, purpose string) (string, error) {
				if b == nil {
					return "", nil
				}
				return sealer.Open(b, purpose)
			}
			pw, err1 := open(c.Password, secret.PurposePassword)
			en, err2 := open(c.EnablePassword, secret.PurposeEnablePassword)
			if err := errors.Join(err1, err2); err != nil {
				continue // sealed with another key: cannot be the same login
			}
			k := [3]string{c.Username, pw, en}
			if _, dup := ix.existing[k]; !dup {
				ix.existing[k] = c
			}
		}
		if off+len(page) >= total || len(page) == 0 {
			break
		}
	}
	return ix, nil
}

// find returns the existing credential for a login (id, name, 0) or the
// plan's new one (0, name, index), adding it to the plan when first seen.
func (ix *credentialIndex) find(user, password, enable string, plan *Plan) (int64, string, int) {
	k := [3]string{user, password, enable}
	if c, ok := ix.existing[k]; ok && (ix.usable == nil || ix.usable(c.ID)) {
		return c.ID, c.Name, 0
	}
	if i, ok := ix.planned[k]; ok {
		return 0, plan.Credentials[i-1].Name, i
	}
	name := ix.prefix + strconv.Itoa(ix.next)
	for ix.taken[Fold(name)] {
		ix.next++
		name = ix.prefix + strconv.Itoa(ix.next)
	}
	ix.next++
	ix.taken[Fold(name)] = true
	plan.Credentials = append(plan.Credentials, NewCredential{Name: name, Username: user, Password: password, Enable: enable})
	ix.planned[k] = len(plan.Credentials)
	return 0, name, len(plan.Credentials)
}

// UsedCredentials are the existing credentials the plan attaches to
// devices or sends to a device's new address, by id, for the audit log.
func (p *Plan) UsedCredentials() []int64 {
	var ids []int64
	for _, r := range p.Rows {
		if r.Action != Unchanged && r.CredentialUse != "" && r.Device.CredentialID != nil && !slices.Contains(ids, *r.Device.CredentialID) {
			ids = append(ids, *r.Device.CredentialID)
		}
	}
	slices.Sort(ids)
	return ids
}

// ZoneError is Build's answer to a default zone that does not exist.
type ZoneError struct{ Name string }

func (e *ZoneError) Error() string {
	return fmt.Sprintf("no zone named %q (see `backupd collector zone list`)", e.Name)
}

// ErrNothing is Apply's answer to a plan with nothing to do.
var ErrNothing = errors.New("nothing to import: every line was skipped")

// Apply carries the plan out in one transaction: the groups, the
// credentials (sealed with sealer) and the devices, all or nothing.
// Unchanged devices are not written.
func (p *Plan) Apply(ctx context.Context, store *db.Store, sealer *secret.Sealer) error {
	if len(p.Rows) == 0 {
		return ErrNothing
	}
	creds := make([]db.Credential, len(p.Credentials))
	for i, c := range p.Credentials {
		creds[i] = db.Credential{Name: c.Name, Username: c.Username}
		if c.Password != "" {
			creds[i].Password = sealer.Seal(c.Password, secret.PurposePassword)
		}
		if c.Enable != "" {
			creds[i].EnablePassword = sealer.Seal(c.Enable, secret.PurposeEnablePassword)
		}
	}
	devices := make([]db.PlannedDevice, 0, len(p.Rows))
	lines := make([]int, 0, len(p.Rows))
	for _, r := range p.Rows {
		if r.Action == Unchanged {
			continue
		}
		pd := db.PlannedDevice{Device: r.Device, NewCredential: r.NewCredential}
		if r.NewGroup {
			pd.NewGroup = r.Group
		}
		devices = append(devices, pd)
		lines = append(lines, r.Line)
	}
	err := store.ApplyImport(ctx, p.Groups, creds, devices)
	var ie *db.ImportError
	if errors.As(err, &ie) {
		return fmt.Errorf("line %d (%s): %w; another change came between; run the import again", lines[ie.Index], devices[ie.Index].Device.Name, ie.Err)
	}
	return err
}

// Report writes the plan for a person: with all set, one line per device
// (a dry run); else only the skipped lines. It ends with the summary.
func (p *Plan) Report(w io.Writer, all, applied bool) {
	would := "would "
	if applied {
		would = ""
	}
	type line struct {
		n    int
		text string
	}
	var out []line
	if all {
		for _, r := range p.Rows {
			d := r.Device
			var text string
			switch r.Action {
			case Create:
				text = fmt.Sprintf("%screate %s: %s at %s", would, d.Name, d.Platform, d.Host)
				if r.Group != "" {
					text += ", group " + strconv.Quote(r.Group)
				}
				if r.Credential != "" {
					text += ", credential " + strconv.Quote(r.Credential)
				}
				if r.Device.ZoneID != db.LocalZone {
					text += ", zone " + strconv.Quote(r.Zone)
				}
			case Update:
				text = fmt.Sprintf("%supdate %s: %s", would, d.Name, strings.Join(r.Changes, ", "))
			default:
				text = fmt.Sprintf("unchanged %s", d.Name)
			}
			out = append(out, line{r.Line, text})
		}
	}
	for _, s := range p.Skipped {
		name := ""
		if s.Name != "" {
			name = " " + s.Name
		}
		out = append(out, line{s.Line, fmt.Sprintf("skip%s: %s", name, s.Reason())})
	}
	if all {
		sort.SliceStable(out, func(a, b int) bool { return out[a].n < out[b].n })
	}
	for _, l := range out {
		fmt.Fprintf(w, "line %d: %s\n", l.n, l.text)
	}
	if len(p.Groups) > 0 {
		fmt.Fprintf(w, "%screate %d group(s): %s\n", would, len(p.Groups), strings.Join(p.Groups, ", "))
	}
	if len(p.Credentials) > 0 {
		names := make([]string, len(p.Credentials))
		for i, c := range p.Credentials {
			names[i] = c.Name
		}
		fmt.Fprintf(w, "%screate %d credential(s): %s\n", would, len(p.Credentials), strings.Join(names, ", "))
	}
	c, u, n, s := p.Counts()
	verb := "would be"
	if applied {
		verb = "were"
	}
	fmt.Fprintf(w, "summary: %d device(s) %s created, %d updated, %d unchanged, %d line(s) skipped\n", c, verb, u, n, s)
}
