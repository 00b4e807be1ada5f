package ui

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"backupd/app/collect/driver"
	"backupd/app/importer"
	"backupd/app/inventory"
	"backupd/db"
	"backupd/web"
	"backupd/web/ui/core"
)

// The devices page: a filtered, paged list of the devices in the user's
// scope; the create and edit forms (the same rules as the public API, from
// app/inventory); "back up now" for one device, a selection or a group;
// and the CSV import (all or nothing) and export (which re-imports).

const (
	devicesListPath   = "/devices"
	devicesJobsActive = "/jobs?state=active"
	devicesPerPage    = 50
	devicesMaxQuery   = 128
	// devicesMaxSelection bounds "back up selected": a page holds 50; a
	// whole group goes by group_id, which has no bound.
	devicesMaxSelection = 1000
	devicesImportBytes  = 5 << 20
	devicesImportRows   = 20_000
	// devicesImportShown is how many problems of a refused import the page
	// lists; it counts the rest.
	devicesImportShown = 100
	devicesExportPage  = 1000
	// devicesMaxChangedDays bounds "changed in the last N days": ten years.
	devicesMaxChangedDays = 3650
)

// mountDevices registers the devices list: filters, paging, create / edit / delete, back up now, CSV import and export.
// GET /devices/{id} and the rest under /devices/{id}/ belong to the device
// detail page (device_detail.go), except /edit and /delete.
func (u *UI) mountDevices(mux *http.ServeMux) {
	u.MountPage(mux, "GET "+devicesListPath, "devices.view", u.devicesList)
	mux.Handle("GET /devices/new", u.Page("devices.create", u.devicesNewForm))
	mux.Handle("POST /devices", u.Page("devices.create", u.devicesCreate))
	mux.Handle("GET /devices/{id}/edit", u.Page("devices.update", u.devicesEditForm))
	mux.Handle("POST /devices/{id}/edit", u.Page("devices.update", u.devicesUpdate))
	mux.Handle("POST /devices/{id}/delete", u.Page("devices.delete", u.devicesDelete))
	mux.Handle("POST /devices/backup", u.Page("backups.create", u.devicesBackup))
	mux.Handle("GET /devices/import", u.Page("devices.create", u.devicesImportForm))
	mux.Handle("POST /devices/import", u.devicesUploadBody(u.Page("devices.create", u.devicesImport)))
	mux.Handle("POST /devices/import/router-db", u.devicesUploadBody(u.Page("devices.create", u.devicesImportRouterDB)))
	mux.Handle("GET /devices/sample.csv", u.Page("devices.create", u.devicesSample))
	mux.Handle("GET /devices/export", u.Page("devices.view", u.devicesExport))
}

// ---- the list ----

// devicesFilter is the list's query: the filters, kept in every page
// link, the export link and the "back up" forms' way back.
type devicesFilter struct {
	Query    string
	GroupID  int64
	Platform string
	Status   string
	// ZoneID is the zone's id, 0 for any.
	ZoneID int64
	// Enabled is "", "true" or "false".
	Enabled string
	// ChangedDays is "changed in the last N days" as typed (shown again
	// when refused); changedDays is N, 0 for no such filter.
	ChangedDays string
	changedDays int
	// Sort is "" (by id) or one of devicesSorts.
	Sort string
	Page int
	// Error is the message key of a refused value (ChangedDays).
	Error string
}

// devicesSorts are the orders the list offers, by their query value.
var devicesSorts = map[string]db.DeviceSort{
	string(db.DeviceSortLastChanged):    db.DeviceSortLastChanged,
	string(db.DeviceSortLastChangedAsc): db.DeviceSortLastChangedAsc,
}

// devicesParseFilter reads the filters; a value that cannot match
// anything (an unknown status, say) is dropped rather than refused. A
// number of days that is not one is refused: f.Error says why.
func devicesParseFilter(q url.Values) devicesFilter {
	f := devicesFilter{Query: strings.TrimSpace(q.Get("q")), Page: 1}
	if raw := strings.TrimSpace(q.Get("changed_days")); raw != "" {
		f.ChangedDays = raw
		if utf8.RuneCountInString(raw) > 16 {
			f.ChangedDays = string([]rune(raw)[:16])
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > devicesMaxChangedDays {
			f.Error = keyDevicesBadChangedDays
		} else {
			f.changedDays = n
		}
	}
	if _, ok := devicesSorts[q.Get("sort")]; ok {
		f.Sort = q.Get("sort")
	}
	if utf8.RuneCountInString(f.Query) > devicesMaxQuery {
		f.Query = string([]rune(f.Query)[:devicesMaxQuery])
	}
	if id, err := strconv.ParseInt(q.Get("group_id"), 10, 64); err == nil && id > 0 {
		f.GroupID = id
	}
	if _, ok := driver.Lookup(q.Get("platform")); ok {
		f.Platform = q.Get("platform")
	}
	if id, err := strconv.ParseInt(q.Get("zone_id"), 10, 64); err == nil && id > 0 {
		f.ZoneID = id
	}
	switch s := q.Get("status"); s {
	case db.StatusUnknown, db.StatusReachable, db.StatusUnreachable:
		f.Status = s
	}
	switch e := q.Get("enabled"); e {
	case "true", "false":
		f.Enabled = e
	}
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 1 {
		// Far past any real list (the list shows its last page then), and
		// far from overflowing the offset.
		f.Page = min(n, 1_000_000)
	}
	return f
}

// store is the filter for the store as of now.
func (f devicesFilter) store(now time.Time) db.DeviceFilter {
	out := db.DeviceFilter{Query: f.Query, Platform: f.Platform, Status: f.Status, Sort: devicesSorts[f.Sort]}
	if f.changedDays > 0 {
		since := now.AddDate(0, 0, -f.changedDays)
		out.ChangedSince = &since
	}
	if f.GroupID > 0 {
		out.GroupID = &f.GroupID
	}
	if f.ZoneID > 0 {
		out.ZoneID = &f.ZoneID
	}
	if f.Enabled != "" {
		enabled := f.Enabled == "true"
		out.Enabled = &enabled
	}
	return out
}

// Active reports whether any filter is set.
func (f devicesFilter) Active() bool {
	return f.Query != "" || f.GroupID != 0 || f.Platform != "" || f.Status != "" || f.ZoneID != 0 || f.Enabled != "" || f.ChangedDays != ""
}

func (f devicesFilter) values() url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("q", f.Query)
	if f.GroupID > 0 {
		v.Set("group_id", strconv.FormatInt(f.GroupID, 10))
	}
	set("platform", f.Platform)
	set("status", f.Status)
	if f.ZoneID > 0 {
		v.Set("zone_id", strconv.FormatInt(f.ZoneID, 10))
	}
	set("enabled", f.Enabled)
	set("changed_days", f.ChangedDays)
	set("sort", f.Sort)
	return v
}

// SortURL is the first page of the list in the other order by last
// change: newest first, then oldest first.
func (f devicesFilter) SortURL() string {
	g := f
	g.Sort = string(db.DeviceSortLastChanged)
	if f.Sort == string(db.DeviceSortLastChanged) {
		g.Sort = string(db.DeviceSortLastChangedAsc)
	}
	return g.url(devicesListPath, 1)
}

// SortState is the aria-sort value of the "Last changed" column.
func (f devicesFilter) SortState() string {
	switch f.Sort {
	case string(db.DeviceSortLastChanged):
		return "descending"
	case string(db.DeviceSortLastChangedAsc):
		return "ascending"
	}
	return ""
}

// url is path with the filters and, past the first, the page.
func (f devicesFilter) url(path string, page int) string {
	v := f.values()
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// devicesRow is one device as the list shows it.
type devicesRow struct {
	db.Device
	Address      string
	PlatformName string
	GroupName    string
	GroupPath    string
	ZoneName     string
	LastBackup   time.Time
	// LastChanged is when the configuration last changed (zero: not
	// since the first backup).
	LastChanged time.Time
	// LastOK and LastFailed tell how the last backup ended (neither
	// before the first).
	LastOK, LastFailed bool
}

// devicesPage is the data of devices.html.
type devicesPage struct {
	Filter devicesFilter
	Rows   []devicesRow
	Pager  core.Pager
	// ListURL is this page without notices, where "back up" comes back to.
	ListURL   string
	ExportURL string
	Groups    []devicesGroupOption
	// FilterGroup is the filtered group's name, for "back up this group".
	FilterGroup string
	Platforms   []devicesPlatform
	// Zones are the filter's choices and the list has a Zone column only
	// when there is more than the local one, as the form offers them.
	Zones []db.Zone
	// Notice is a message key (with NoticeArgs) after a change;
	// NoticeJobs adds a link to the jobs page.
	Notice     string
	NoticeArgs []any
	NoticeJobs bool
}

func (u *UI) devicesList(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	scope := core.SessionOf(r).Scope()
	f := devicesParseFilter(r.URL.Query())
	groups, err := u.Store.AllGroups(ctx)
	if err != nil {
		return err
	}
	zones, err := u.Store.ListZones(ctx)
	if err != nil {
		return err
	}
	p := devicesPage{Filter: f, Groups: devicesGroupOptions(groups, scope), Platforms: devicesPlatforms()}
	zoneNames := map[int64]string{}
	if len(zones) > 1 {
		p.Zones = zones
		for _, z := range zones {
			zoneNames[z.ID] = z.Name
		}
	}
	if f.Error != "" {
		// A refused filter: the form shows it again with the reason,
		// and no list that would look filtered when it is not.
		p.Pager = core.PagerAt(devicesListPath, f.values(), 1, devicesPerPage, 0)
		p.ListURL, p.ExportURL = devicesListPath, "/devices/export"
		return u.Render(w, r, http.StatusBadRequest, "devices.html", keyTitleDevices, p)
	}
	now := u.Now()
	offset := (f.Page - 1) * devicesPerPage
	list, total, err := u.Store.ListDevices(ctx, scope, f.store(now), devicesPerPage, offset)
	if err != nil {
		return err
	}
	if pages := max((total+devicesPerPage-1)/devicesPerPage, 1); f.Page > pages {
		// Past the end (the last device of the last page was deleted, say):
		// show the last page rather than an empty one.
		f.Page = pages
		p.Filter.Page = f.Page
		offset = (f.Page - 1) * devicesPerPage
		if list, _, err = u.Store.ListDevices(ctx, scope, f.store(now), devicesPerPage, offset); err != nil {
			return err
		}
	}
	p.Pager = core.PagerAt(devicesListPath, f.values(), f.Page, devicesPerPage, total)
	p.ListURL = f.url(devicesListPath, f.Page)
	p.ExportURL = f.url("/devices/export", 1)

	byID := devicesGroupIndex(groups)
	// "Back up this group" only for a group of the user's scope.
	if slices.ContainsFunc(p.Groups, func(g devicesGroupOption) bool { return g.ID == f.GroupID }) {
		p.FilterGroup = byID[f.GroupID].Name
	}
	p.Rows = make([]devicesRow, len(list))
	for i, d := range list {
		p.Rows[i] = devicesNewRow(d, byID)
		p.Rows[i].ZoneName = zoneNames[d.ZoneID]
	}
	p.Notice, p.NoticeArgs, p.NoticeJobs = devicesNotice(r.URL.Query())
	return u.Render(w, r, http.StatusOK, "devices.html", keyTitleDevices, p)
}

func devicesNewRow(d db.Device, groups map[int64]devicesGroup) devicesRow {
	row := devicesRow{Device: d, Address: net.JoinHostPort(d.Host, strconv.Itoa(d.Port)), PlatformName: d.Platform}
	if info, ok := driver.Lookup(d.Platform); ok {
		row.PlatformName = info.Name
	}
	if d.GroupID != nil {
		g := groups[*d.GroupID]
		row.GroupName, row.GroupPath = g.Name, g.Path
	}
	if d.LastBackupAt != nil {
		if t, err := db.ParseTime(*d.LastBackupAt); err == nil {
			row.LastBackup = t
		}
	}
	if d.LastChangedAt != nil {
		if t, err := db.ParseTime(*d.LastChangedAt); err == nil {
			row.LastChanged = t
		}
	}
	if d.LastBackupSuccess != nil {
		row.LastOK, row.LastFailed = *d.LastBackupSuccess, !*d.LastBackupSuccess
	}
	return row
}

// devicesNotice is the message a change left for the list in its
// redirect's query.
func devicesNotice(q url.Values) (key string, args []any, jobs bool) {
	count := func(name string) (int, bool) {
		n, err := strconv.Atoi(q.Get(name))
		return n, err == nil && n >= 0
	}
	switch {
	case q.Get("created") != "":
		return keyDevicesNoticeCreated, nil, false
	case q.Get("updated") != "":
		return keyDevicesNoticeUpdated, nil, false
	case q.Get("deleted") != "":
		return keyDevicesNoticeDeleted, nil, false
	}
	if n, ok := count("imported"); ok {
		return keyDevicesNoticeImported, []any{n}, false
	}
	if n, ok := count("queued"); ok {
		switch n {
		case 0:
			return keyDevicesNoticeQueuedNone, nil, false
		case 1:
			return keyDevicesNoticeQueuedOne, nil, true
		}
		return keyDevicesNoticeQueued, []any{n}, true
	}
	return "", nil, false
}

// devicesGroup is a group with its path of names ("Core / Access").
type devicesGroup struct {
	db.Group
	Path string
}

// devicesGroupIndex names every group by its path of names.
func devicesGroupIndex(groups []db.Group) map[int64]devicesGroup {
	byID := make(map[int64]devicesGroup, len(groups))
	// AllGroups lists parents before children.
	for _, g := range groups {
		path := g.Name
		if g.ParentID != nil {
			path = byID[*g.ParentID].Path + " / " + g.Name
		}
		byID[g.ID] = devicesGroup{Group: g, Path: path}
	}
	return byID
}

// devicesGroupOption is a group in a select, in tree order.
type devicesGroupOption struct {
	ID    int64
	Label string
}

// devicesGroupOptions lists the groups in scope depth-first, each under
// its parent, labelled with its path.
func devicesGroupOptions(groups []db.Group, scope db.Scope) []devicesGroupOption {
	byID := devicesGroupIndex(groups)
	children := map[int64][]db.Group{}
	for _, g := range groups {
		var parent int64
		if g.ParentID != nil {
			parent = *g.ParentID
		}
		children[parent] = append(children[parent], g)
	}
	out := make([]devicesGroupOption, 0, len(groups))
	var walk func(parent int64, depth int)
	walk = func(parent int64, depth int) {
		if depth > 64 {
			return // a cycle cannot be stored, but a walk stays bounded anyway
		}
		for _, g := range children[parent] {
			if devicesGroupInScope(g, scope) {
				out = append(out, devicesGroupOption{ID: g.ID, Label: byID[g.ID].Path})
			}
			walk(g.ID, depth+1)
		}
	}
	walk(0, 0)
	return out
}

// devicesGroupInScope applies the scope to a group through its path, which
// lists its ancestors' ids and its own.
func devicesGroupInScope(g db.Group, scope db.Scope) bool {
	if scope.All {
		return true
	}
	for _, part := range strings.Split(strings.Trim(g.Path, "/"), "/") {
		id, err := strconv.ParseInt(part, 10, 64)
		if err == nil && slices.Contains(scope.GroupIDs, id) {
			return true
		}
	}
	return false
}

// devicesPlatform is a platform in a select.
type devicesPlatform struct{ ID, Name string }

func devicesPlatforms() []devicesPlatform {
	ids := driver.IDs()
	out := make([]devicesPlatform, len(ids))
	for i, id := range ids {
		info, _ := driver.Lookup(id)
		out[i] = devicesPlatform{ID: id, Name: info.Name}
	}
	slices.SortFunc(out, func(a, b devicesPlatform) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ---- create, edit, delete ----

// devicesForm is the form's input as typed, kept when it is shown again
// with errors.
type devicesForm struct {
	Name, Host, Port, Platform, LoginMethod string
	GroupID, CredentialID, TemplateID       string
	Encoding, Remarks                       string
	Enabled                                 bool
	// ZoneID is the zone's id; "" keeps an edited device's zone (a new
	// one goes to the local zone).
	ZoneID string
}

func devicesFormFromRequest(r *http.Request) devicesForm {
	v := r.PostFormValue
	return devicesForm{
		Name: v("name"), Host: v("host"), Port: v("port"), Platform: v("platform"), LoginMethod: v("login_method"),
		GroupID: v("group_id"), CredentialID: v("credential_id"), TemplateID: v("template_id"),
		Encoding: v("encoding"), Remarks: v("remarks"), Enabled: v("enabled") != "", ZoneID: v("zone_id"),
	}
}

// devicesFormOf fills the form from a stored device. A port that is its
// login method's default stays empty, so that it follows the method.
func devicesFormOf(d db.Device) devicesForm {
	f := devicesForm{
		Name: d.Name, Host: d.Host, Platform: d.Platform, LoginMethod: d.LoginMethod,
		Encoding: d.Encoding, Enabled: d.Enabled, ZoneID: strconv.FormatInt(max(d.ZoneID, db.LocalZone), 10),
	}
	if d.Port != inventory.DefaultPort(d.LoginMethod) {
		f.Port = strconv.Itoa(d.Port)
	}
	id := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	f.GroupID, f.CredentialID, f.TemplateID = id(d.GroupID), id(d.CredentialID), id(d.TemplateID)
	if d.Remarks != nil {
		f.Remarks = *d.Remarks
	}
	return f
}

// devicesMessage is a message key with its arguments.
type devicesMessage struct {
	Key  string
	Args []any
}

// devicesTemplateGroup is the templates of one platform.
type devicesTemplateGroup struct {
	Platform, PlatformName string
	Items                  []db.DeviceChoice
}

// devicesLoginMethod is a login method with its default port.
type devicesLoginMethod struct {
	ID   string
	Port int
}

// devicesFormPage is the data of devices_form.html.
type devicesFormPage struct {
	Edit       bool
	ID         int64
	DeviceName string
	Action     string
	// Next is where the form goes back to (a page of this site), "" for
	// the list.
	Next   string
	Form   devicesForm
	Errors map[string]*devicesMessage
	// Error is a message key about the whole form.
	Error        string
	Groups       []devicesGroupOption
	AllowNoGroup bool
	Platforms    []devicesPlatform
	LoginMethods []devicesLoginMethod
	Credentials  []db.DeviceChoice
	// CredentialLocked is set when the edited device logs in with a
	// credential the user may not use: it may keep it, but neither
	// attach it elsewhere nor send it to a new address.
	CredentialLocked bool
	Templates        []devicesTemplateGroup
	Encodings        []string
	// Zones are offered when there is more than the local one.
	Zones      []db.Zone
	MaxName    int
	MaxRemarks int

	templates map[int64]db.DeviceChoice
}

// Back is where Cancel goes.
func (p *devicesFormPage) Back() string {
	if p.Next != "" {
		return p.Next
	}
	return devicesListPath
}

// devicesFormData loads the choices of the form for the user: only the
// groups in its scope, and "no group" only for users who see every group;
// only the credentials it may use, and the edited device's own (current,
// nil for a new device), which it may keep.
func (u *UI) devicesFormData(ctx context.Context, s *core.Session, current *int64) (*devicesFormPage, error) {
	groups, err := u.Store.AllGroups(ctx)
	if err != nil {
		return nil, err
	}
	creds, err := u.Store.DeviceCredentialChoices(ctx, s.Principal().CredentialScope())
	if err != nil {
		return nil, err
	}
	var lockedCredential bool
	if current != nil && !s.Principal().CanUseCredential(*current) {
		c, err := u.Store.GetCredential(ctx, *current)
		switch {
		case errors.Is(err, db.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			lockedCredential = true
			creds = append([]db.DeviceChoice{{ID: c.ID, Name: c.Name}}, creds...)
		}
	}
	tpls, err := u.Store.DeviceTemplateChoices(ctx)
	if err != nil {
		return nil, err
	}
	zones, err := u.Store.ListZones(ctx)
	if err != nil {
		return nil, err
	}
	scope := s.Scope()
	p := &devicesFormPage{Zones: zones,
		Groups: devicesGroupOptions(groups, scope), AllowNoGroup: scope.All, Platforms: devicesPlatforms(),
		Credentials: creds, CredentialLocked: lockedCredential, Encodings: driver.Encodings, MaxName: inventory.MaxNameLength,
		MaxRemarks: inventory.MaxRemarksLength, templates: map[int64]db.DeviceChoice{},
	}
	for _, m := range inventory.LoginMethods() {
		p.LoginMethods = append(p.LoginMethods, devicesLoginMethod{ID: m, Port: inventory.DefaultPort(m)})
	}
	for _, t := range tpls {
		p.templates[t.ID] = t
		if n := len(p.Templates); n == 0 || p.Templates[n-1].Platform != t.Platform {
			name := t.Platform
			if info, ok := driver.Lookup(t.Platform); ok {
				name = info.Name
			}
			p.Templates = append(p.Templates, devicesTemplateGroup{Platform: t.Platform, PlatformName: name})
		}
		last := &p.Templates[len(p.Templates)-1]
		last.Items = append(last.Items, t)
	}
	if !p.AllowNoGroup && len(p.Groups) == 0 {
		p.Error = keyDevicesFormNoGroups
	}
	return p, nil
}

// device turns the form into a device, or says what is wrong with each
// field: the inventory's rules, then the choices offered.
func (p *devicesFormPage) device() (db.Device, map[string]*devicesMessage) {
	f := p.Form
	errs := map[string]*devicesMessage{}
	d := inventory.NewDevice()
	d.Name, d.Host, d.Platform, d.Encoding, d.Enabled = f.Name, f.Host, f.Platform, f.Encoding, f.Enabled
	d.LoginMethod = f.LoginMethod
	d.Port = inventory.DefaultPort(f.LoginMethod)
	if d.Port == 0 {
		d.Port = inventory.DefaultPort(inventory.DefaultLoginMethod) // the method's own error says it
	}
	if port := strings.TrimSpace(f.Port); port != "" {
		n, err := strconv.Atoi(port)
		if err != nil {
			n = -1
		}
		d.Port = n
	}
	if strings.TrimSpace(f.Remarks) != "" {
		remarks := f.Remarks
		d.Remarks = &remarks
	}
	for _, fe := range inventory.CheckDevice(&d) {
		errs[fe.Field] = devicesFieldMessage(fe)
	}

	switch id, ok := devicesFormID(f.GroupID); {
	case !ok:
		errs["group_id"] = &devicesMessage{Key: keyDevicesErrGroup}
	case id == 0 && !p.AllowNoGroup:
		errs["group_id"] = &devicesMessage{Key: keyDevicesErrGroupRequired}
	case id != 0 && !slices.ContainsFunc(p.Groups, func(g devicesGroupOption) bool { return g.ID == id }):
		errs["group_id"] = &devicesMessage{Key: keyDevicesErrGroup}
	case id != 0:
		d.GroupID = &id
	}
	switch id, ok := devicesFormID(f.ZoneID); {
	case !ok || id != 0 && !slices.ContainsFunc(p.Zones, func(z db.Zone) bool { return z.ID == id }):
		errs["zone_id"] = &devicesMessage{Key: keyDevicesErrZone}
	default:
		d.ZoneID = id // 0: kept on an edit, local on a create
	}
	// A credential the form did not offer is not refused here: whether
	// the user may use it is the save's question (devicesSave), and one
	// that does not exist is the store's.
	switch id, ok := devicesFormID(f.CredentialID); {
	case !ok:
		errs["credential_id"] = &devicesMessage{Key: keyDevicesErrCredential}
	case id != 0:
		d.CredentialID = &id
	}
	switch id, ok := devicesFormID(f.TemplateID); {
	case !ok:
		errs["template_id"] = &devicesMessage{Key: keyDevicesErrTemplate}
	case id != 0:
		t, found := p.templates[id]
		switch {
		case !found:
			errs["template_id"] = &devicesMessage{Key: keyDevicesErrTemplate}
		case t.Platform != d.Platform && errs["platform"] == nil:
			errs["template_id"] = &devicesMessage{Key: keyDevicesErrTemplatePlatform, Args: []any{t.Name, t.Platform, d.Platform}}
		default:
			d.TemplateID = &id
		}
	}
	return d, errs
}

// devicesFormID reads an id from a select; "" is none (0).
func devicesFormID(s string) (int64, bool) {
	if s == "" {
		return 0, true
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// devicesFieldMessage is the message of an inventory rule.
func devicesFieldMessage(fe inventory.FieldError) *devicesMessage {
	switch {
	case fe.Field == "name" && fe.Problem == inventory.Blank:
		return &devicesMessage{Key: keyDevicesErrNameBlank}
	case fe.Field == "name":
		return &devicesMessage{Key: keyDevicesErrNameLong, Args: []any{inventory.MaxNameLength}}
	case fe.Field == "host" && fe.Problem == inventory.Blank:
		return &devicesMessage{Key: keyDevicesErrHostBlank}
	case fe.Field == "host" && fe.Problem == inventory.MetadataHost:
		return &devicesMessage{Key: keyDevicesErrHostMetadata}
	case fe.Field == "host":
		return &devicesMessage{Key: keyDevicesErrHost}
	case fe.Field == "port":
		return &devicesMessage{Key: keyDevicesErrPort}
	case fe.Field == "platform":
		return &devicesMessage{Key: keyDevicesErrPlatform}
	case fe.Field == "login_method":
		return &devicesMessage{Key: keyDevicesErrLoginMethod}
	case fe.Field == "encoding":
		return &devicesMessage{Key: keyDevicesErrEncoding}
	case fe.Field == "remarks":
		return &devicesMessage{Key: keyDevicesErrRemarksLong, Args: []any{inventory.MaxRemarksLength}}
	}
	return &devicesMessage{Key: keyDevicesErrField}
}

func (u *UI) devicesNewForm(w http.ResponseWriter, r *http.Request) error {
	p, err := u.devicesFormData(r.Context(), core.SessionOf(r), nil)
	if err != nil {
		return err
	}
	p.Action = "/devices"
	p.Form = devicesFormOf(inventory.NewDevice())
	p.Form.Platform = ""
	if len(p.Groups) == 1 && !p.AllowNoGroup {
		p.Form.GroupID = strconv.FormatInt(p.Groups[0].ID, 10)
	}
	return u.Render(w, r, http.StatusOK, "devices_form.html", keyTitleDevicesNew, p)
}

func (u *UI) devicesCreate(w http.ResponseWriter, r *http.Request) error {
	p, err := u.devicesFormData(r.Context(), core.SessionOf(r), nil)
	if err != nil {
		return err
	}
	p.Action = "/devices"
	return u.devicesSave(w, r, p, nil)
}

// devicesVisible loads the device of the request's path and checks it
// against the user's scope: 404 when there is none, 403 when it is
// another group's.
func (u *UI) devicesVisible(r *http.Request) (db.Device, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return db.Device{}, db.ErrNotFound
	}
	d, err := u.Store.GetDevice(r.Context(), id)
	if err != nil {
		return d, err
	}
	ok, err := u.Store.DeviceInScope(r.Context(), core.SessionOf(r).Scope(), d)
	if err != nil {
		return d, err
	}
	if !ok {
		return d, core.Forbidden()
	}
	return d, nil
}

func (u *UI) devicesEditForm(w http.ResponseWriter, r *http.Request) error {
	d, err := u.devicesVisible(r)
	if err != nil {
		return err
	}
	p, err := u.devicesFormData(r.Context(), core.SessionOf(r), d.CredentialID)
	if err != nil {
		return err
	}
	p.Edit, p.ID, p.DeviceName = true, d.ID, d.Name
	p.Action = "/devices/" + strconv.FormatInt(d.ID, 10) + "/edit"
	p.Next = core.LocalPath(r.URL.Query().Get("next"), "")
	p.Form = devicesFormOf(d)
	return u.Render(w, r, http.StatusOK, "devices_form.html", keyTitleDevicesEdit, p)
}

// devicesUpdate saves the edit form. The device must be in the user's
// scope, and so must the group it goes to (the form offers no other), as
// on the public API's PUT.
func (u *UI) devicesUpdate(w http.ResponseWriter, r *http.Request) error {
	d, err := u.devicesVisible(r)
	if err != nil {
		return err
	}
	p, err := u.devicesFormData(r.Context(), core.SessionOf(r), d.CredentialID)
	if err != nil {
		return err
	}
	p.Edit, p.ID, p.DeviceName = true, d.ID, d.Name
	p.Action = "/devices/" + strconv.FormatInt(d.ID, 10) + "/edit"
	return u.devicesSave(w, r, p, &d)
}

// devicesSave checks and stores the form: a new device when old is nil.
// A refused form comes back with the input kept and a message at each bad
// field (422; 409 for a name in use).
func (u *UI) devicesSave(w http.ResponseWriter, r *http.Request, p *devicesFormPage, old *db.Device) error {
	ctx := r.Context()
	p.Form = devicesFormFromRequest(r)
	p.Next = core.LocalPath(r.PostFormValue("next"), "")
	title := keyTitleDevicesNew
	if old != nil {
		title = keyTitleDevicesEdit
	}
	d, errs := p.device()
	if d.ZoneID == 0 && old != nil {
		d.ZoneID = old.ZoneID
	}
	status := http.StatusUnprocessableEntity
	var saved db.Device
	var err error
	s := core.SessionOf(r)
	var use inventory.CredentialUse
	var used bool
	if len(errs) == 0 && p.Error == "" {
		if old == nil {
			if use, used, err = inventory.CheckCredentialUse(s.Principal(), nil, d); err == nil {
				saved, err = u.Store.CreateDevice(ctx, d)
			}
		} else {
			saved, err = u.Store.UpdateDevice(ctx, old.ID, func(cur *db.Device) error {
				before := *cur
				*cur = d
				cur.ID, cur.Status, cur.LastCheckedAt, cur.LastBackupAt, cur.LastBackupSuccess, cur.CreatedAt, cur.AddressPin =
					before.ID, before.Status, before.LastCheckedAt, before.LastBackupAt, before.LastBackupSuccess, before.CreatedAt, before.AddressPin
				// Checked against the device as it stands in the
				// transaction, not as the form found it.
				var err error
				use, used, err = inventory.CheckCredentialUse(s.Principal(), &before, *cur)
				return err
			})
		}
		var ref *db.ErrReference
		var cue *inventory.CredentialUseError
		switch {
		case errors.As(err, &cue):
			name, nerr := u.credentialName(ctx, cue.CredentialID)
			if nerr != nil {
				return nerr
			}
			if cue.How == inventory.UseAttach {
				errs["credential_id"] = &devicesMessage{Key: keyDevicesErrCredentialUse, Args: []any{name}}
			} else {
				errs["host"] = &devicesMessage{Key: keyDevicesErrCredentialAddress, Args: []any{name}}
			}
			status = http.StatusForbidden
		case errors.Is(err, db.ErrNameExists):
			errs["name"] = &devicesMessage{Key: keyDevicesErrNameTaken, Args: []any{d.Name}}
			status = http.StatusConflict
		case errors.As(err, &ref):
			// A group, credential or template deleted since the form was shown.
			errs[ref.Field] = &devicesMessage{Key: keyDevicesErrGone}
		case err != nil:
			return err
		}
	}
	if len(errs) > 0 || p.Error != "" {
		p.Errors = errs
		return u.Render(w, r, status, "devices_form.html", title, p)
	}
	if old == nil {
		details := map[string]any{"name": saved.Name, "host": saved.Host, "group_id": saved.GroupID}
		if err := u.credentialUseDetails(ctx, details, use, used); err != nil {
			return err
		}
		u.devicesAudit(r, s, "device.create", saved.ID, details)
		http.Redirect(w, r, devicesListPath+"?"+url.Values{"q": {saved.Name}, "created": {"1"}}.Encode(), http.StatusSeeOther)
		return nil
	}
	details := map[string]any{"fields": devicesChanged(*old, saved), "name": saved.Name}
	if err := u.credentialUseDetails(ctx, details, use, used); err != nil {
		return err
	}
	u.devicesAudit(r, s, "device.update", saved.ID, details)
	if p.Next != "" {
		http.Redirect(w, r, p.Next, http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, devicesListPath+"?"+url.Values{"q": {saved.Name}, "updated": {"1"}}.Encode(), http.StatusSeeOther)
	return nil
}

// devicesChanged names the fields an edit changed, as the API names them,
// for the audit log (never the values).
func devicesChanged(a, b db.Device) []string {
	ptrDiff := func(x, y *int64) bool { return (x == nil) != (y == nil) || x != nil && *x != *y }
	strDiff := func(x, y *string) bool { return (x == nil) != (y == nil) || x != nil && *x != *y }
	changed := []string{}
	for _, c := range []struct {
		name string
		diff bool
	}{
		{"name", a.Name != b.Name}, {"host", a.Host != b.Host}, {"port", a.Port != b.Port},
		{"platform", a.Platform != b.Platform}, {"login_method", a.LoginMethod != b.LoginMethod},
		{"group_id", ptrDiff(a.GroupID, b.GroupID)}, {"credential_id", ptrDiff(a.CredentialID, b.CredentialID)},
		{"template_id", ptrDiff(a.TemplateID, b.TemplateID)}, {"encoding", a.Encoding != b.Encoding},
		{"enabled", a.Enabled != b.Enabled}, {"remarks", strDiff(a.Remarks, b.Remarks)}, {"zone_id", a.ZoneID != b.ZoneID},
	} {
		if c.diff {
			changed = append(changed, c.name)
		}
	}
	return changed
}

// devicesDelete removes a device of the user's scope with its history.
func (u *UI) devicesDelete(w http.ResponseWriter, r *http.Request) error {
	d, err := u.devicesVisible(r)
	if err != nil {
		return err
	}
	if err := u.Store.DeleteDevice(r.Context(), d.ID); err != nil {
		return err
	}
	u.devicesAudit(r, core.SessionOf(r), "device.delete", d.ID, map[string]any{"name": d.Name})
	http.Redirect(w, r, devicesListPath+"?deleted=1", http.StatusSeeOther)
	return nil
}

// devicesAudit records a change the user made to devices.
func (u *UI) devicesAudit(r *http.Request, s *core.Session, action string, deviceID int64, details map[string]any) {
	u.AuditEntry(r, db.AuditEntry{
		UserID: &s.UserID, Username: s.Username, SessionID: s.AuditRef(), Action: action,
		TargetType: "device", TargetID: core.IDString(deviceID), Details: details,
	})
}

// ---- back up now ----

// devicesBackup queues a backup now of the devices named by "id"
// (repeatable; disabled devices too, as asked) or of every enabled device
// of the group "group_id" and its subgroups, in one call, then goes back
// to "next" (a page of this site; the active jobs by default) with the
// count. Every device must be in the user's scope, or nothing is queued.
func (u *UI) devicesBackup(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	if u.Engine == nil {
		return &core.PageError{Status: http.StatusServiceUnavailable, Message: keyDevicesErrNoEngine}
	}
	if err := r.ParseForm(); err != nil {
		return err
	}
	next := core.LocalPath(r.PostFormValue("next"), devicesJobsActive)
	var ids []int64
	details := map[string]any{"trigger": db.TriggerManual}
	target, targetID := "device", ""
	if raw := r.PostFormValue("group_id"); raw != "" {
		gid, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || gid < 1 {
			return &core.PageError{Status: http.StatusUnprocessableEntity, Message: keyDevicesErrBackupNone}
		}
		if _, err := u.Store.GetGroup(ctx, gid); err != nil {
			return err
		}
		if ok, err := u.Store.GroupInScope(ctx, s.Scope(), gid); err != nil {
			return err
		} else if !ok {
			return core.Forbidden()
		}
		enabled := true
		if ids, err = u.Store.DeviceIDsMatching(ctx, s.Scope(), db.DeviceFilter{GroupID: &gid, Enabled: &enabled}); err != nil {
			return err
		}
		target, targetID = "group", core.IDString(gid)
		details["group_id"] = gid
	} else {
		var err error
		if ids, err = devicesFormIDs(r.PostForm["id"]); err != nil {
			return err
		}
		missing, outside, err := u.Store.DeviceIDsOutside(ctx, s.Scope(), ids)
		switch {
		case err != nil:
			return err
		case len(missing) > 0:
			return db.ErrNotFound
		case len(outside) > 0:
			return core.Forbidden()
		}
		if len(ids) == 1 {
			targetID = core.IDString(ids[0])
		} else {
			details["device_ids"] = ids
		}
	}
	var since int64
	if len(ids) > 0 {
		jobIDs, err := u.Engine.Enqueue(ctx, ids, db.TriggerManual)
		if err != nil {
			return err
		}
		// The jobs page's progress bar follows this batch from its first
		// job on.
		for _, id := range jobIDs {
			if id != 0 && (since == 0 || id < since) {
				since = id
			}
		}
		details["count"] = len(ids)
		u.AuditEntry(r, db.AuditEntry{
			UserID: &s.UserID, Username: s.Username, SessionID: s.AuditRef(), Action: "backup.run",
			TargetType: target, TargetID: targetID, Details: details,
		})
	}
	next = devicesWithQuery(next, "queued", strconv.Itoa(len(ids)))
	if since > 0 && strings.HasPrefix(next, "/jobs") {
		next = devicesWithQuery(next, "since", strconv.FormatInt(since, 10))
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// devicesFormIDs reads the selected device ids: at least one, at most
// devicesMaxSelection, duplicates dropped.
func devicesFormIDs(raw []string) ([]int64, error) {
	if len(raw) == 0 {
		return nil, &core.PageError{Status: http.StatusUnprocessableEntity, Message: keyDevicesErrBackupNone}
	}
	if len(raw) > devicesMaxSelection {
		return nil, &core.PageError{Status: http.StatusRequestEntityTooLarge, Message: keyDevicesErrBackupTooMany, Args: []any{devicesMaxSelection}}
	}
	ids := make([]int64, 0, len(raw))
	for _, v := range raw {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 1 {
			return nil, db.ErrNotFound
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// devicesWithQuery sets one query parameter on a local path.
func devicesWithQuery(path, key, value string) string {
	p, err := url.Parse(path)
	if err != nil {
		return path
	}
	q := p.Query()
	q.Set(key, value)
	p.RawQuery = q.Encode()
	return p.String()
}

// ---- CSV import and export ----

// The CSV columns are importer.CSVColumns; the import takes them in any
// order, and name, host and platform are required.

var devicesRequiredColumns = []string{"name", "host", "platform"}

// devicesSampleCSV is the downloadable example, also shown on the page.
const devicesSampleCSV = "name,host,port,platform,login_method,group,credential,template,encoding,enabled,remarks\r\n" +
	"core-rtr-01,192.0.2.10,,cisco_ios,ssh,Core,Core login,,utf-8,true,Rack 4\r\n" +
	"campus-sw-07,campus-sw-07.example.net,23,huawei_vrp,telnet,Campus,Core login,,gbk,true,\r\n" +
	"dc-fw-01,2001:db8::1,2222,fortinet,ssh,Core,Core login,,,false,\"Spare unit, powered off\"\r\n"

// devicesImportPage is the data of devices_import.html.
type devicesImportPage struct {
	// Error is a message key (with ErrorArgs) about the whole file.
	Error     string
	ErrorArgs []any
	// Problems are the first problems found, ProblemCount all of them,
	// More those not listed.
	Problems     []devicesImportProblem
	ProblemCount int
	More         int
	Sample       string
	Platforms    []devicesPlatform
	Encodings    []string
	MaxRows      int
	MaxMiB       int
	// The router.db import (devices_routerdb.go): the form as filled in,
	// an error about the whole file, and the plan or its result.
	RouterDBForm      devicesRouterDBForm
	RouterDBError     string
	RouterDBErrorArgs []any
	RouterDB          *devicesRouterDBResult
	// Zones are the router.db form's choices, offered when there is more
	// than the local one.
	Zones []db.Zone
}

// devicesImportProblem is one bad cell (or row, when Column is "") of an
// import. Line is the row's line in the file, the header being line 1.
type devicesImportProblem struct {
	Line   int
	Column string
	Key    string
	Args   []any
}

func (u *UI) devicesImportPageData(ctx context.Context) (devicesImportPage, error) {
	p := devicesImportPage{Sample: devicesSampleCSV, Platforms: devicesPlatforms(), Encodings: driver.Encodings,
		MaxRows: devicesImportRows, MaxMiB: devicesImportBytes >> 20, RouterDBForm: devicesRouterDBDefaults()}
	zones, err := u.Store.ListZones(ctx)
	if err != nil {
		return p, err
	}
	if len(zones) > 1 {
		p.Zones = zones
	}
	return p, nil
}

func (u *UI) devicesImportForm(w http.ResponseWriter, r *http.Request) error {
	p, err := u.devicesImportPageData(r.Context())
	if err != nil {
		return err
	}
	return u.Render(w, r, http.StatusOK, "devices_import.html", keyTitleDevicesImport, p)
}

func (u *UI) devicesSample(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="backupd-devices-sample.csv"`)
	_, err := io.WriteString(w, devicesSampleCSV)
	return err
}

// devicesUploadBody lets the import read a file of up to
// devicesImportBytes: every other form is held to maxFormBytes before any
// handler runs, and an export of 20,000 devices is larger. It parses the
// multipart body (in memory) ahead of the page's checks, which then read
// the CSRF token from it; only for a request that carries a session
// cookie and comes from this site, so that strangers cannot make the
// server read 5 MiB.
func (u *UI) devicesUploadBody(next http.Handler) http.Handler {
	limit := int64(devicesImportBytes + 64<<10) // the file and the form around it
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, cookieErr := r.Cookie(core.SessionCookie)
		multipart := strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data")
		if cookieErr != nil || !multipart || core.CrossOrigin(r) != "" {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if err := r.ParseMultipartForm(limit); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				u.RenderError(w, r, &core.PageError{Status: http.StatusRequestEntityTooLarge, Message: keyDevicesImportTooLarge,
					Args: []any{devicesImportBytes >> 20, devicesImportRows}})
				return
			}
		}
		if r.MultipartForm != nil {
			defer r.MultipartForm.RemoveAll()
		}
		next.ServeHTTP(w, r)
	})
}

// devicesImport creates the devices of an uploaded CSV file: every row is
// checked first, and then all are created in one transaction, or none.
// A refused file comes back with a report of every problem by row and
// column.
func (u *UI) devicesImport(w http.ResponseWriter, r *http.Request) error {
	p, err := u.devicesImportPageData(r.Context())
	if err != nil {
		return err
	}
	fail := func(status int, key string, args ...any) error {
		p.Error, p.ErrorArgs = key, args
		return u.Render(w, r, status, "devices_import.html", keyTitleDevicesImport, p)
	}
	file, header, err := r.FormFile("file")
	if err != nil {
		return fail(http.StatusUnprocessableEntity, keyDevicesImportNoFile)
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, devicesImportBytes+1))
	if err != nil {
		return err
	}
	if len(data) > devicesImportBytes {
		return fail(http.StatusRequestEntityTooLarge, keyDevicesImportTooLarge, devicesImportBytes>>20, devicesImportRows)
	}
	in, err := u.devicesImportInput(r.Context(), core.SessionOf(r))
	if err != nil {
		return err
	}
	devices, lines, problems, fileErr := in.parse(data)
	if fileErr != nil {
		return fail(http.StatusUnprocessableEntity, fileErr.Key, fileErr.Args...)
	}
	if len(problems) == 0 {
		problems, err = u.devicesNamesTaken(r.Context(), devices, lines)
		if err != nil {
			return err
		}
	}
	if len(problems) == 0 {
		err := u.Store.ImportDevices(r.Context(), devices)
		var ie *db.ImportError
		if errors.As(err, &ie) {
			// Another writer came between the checks and the transaction.
			problems = []devicesImportProblem{{Line: lines[ie.Index], Key: keyDevicesImportChanged}}
		} else if err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		slices.SortStableFunc(problems, func(a, b devicesImportProblem) int { return a.Line - b.Line })
		p.ProblemCount = len(problems)
		p.Problems = problems[:min(len(problems), devicesImportShown)]
		p.More = len(problems) - len(p.Problems)
		return u.Render(w, r, http.StatusUnprocessableEntity, "devices_import.html", keyTitleDevicesImport, p)
	}
	s := core.SessionOf(r)
	details := map[string]any{"count": len(devices), "file": core.Truncate(header.Filename, 128)}
	if ids := devicesCredentialIDs(devices); len(ids) > 0 {
		// Which credentials the import attached.
		details["credential_ids"] = ids
	}
	u.AuditEntry(r, db.AuditEntry{
		UserID: &s.UserID, Username: s.Username, SessionID: s.AuditRef(), Action: "device.import",
		TargetType: "device", Details: details,
	})
	http.Redirect(w, r, devicesListPath+"?imported="+strconv.Itoa(len(devices)), http.StatusSeeOther)
	return nil
}

// devicesCredentialIDs lists the credentials devices log in with, once
// each, by id.
func devicesCredentialIDs(devices []db.Device) []int64 {
	var ids []int64
	for _, d := range devices {
		if d.CredentialID != nil && !slices.Contains(ids, *d.CredentialID) {
			ids = append(ids, *d.CredentialID)
		}
	}
	slices.Sort(ids)
	return ids
}

// devicesNamesTaken reports the rows whose name a device already has, in
// one query.
func (u *UI) devicesNamesTaken(ctx context.Context, devices []db.Device, lines []int) ([]devicesImportProblem, error) {
	names := make([]string, len(devices))
	for i, d := range devices {
		names[i] = d.Name
	}
	taken, err := u.Store.ExistingDeviceNames(ctx, names)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, n := range taken {
		set[devicesFold(n)] = true
	}
	var out []devicesImportProblem
	for i, d := range devices {
		if set[devicesFold(d.Name)] {
			out = append(out, devicesImportProblem{Line: lines[i], Column: "name", Key: keyDevicesErrNameTaken, Args: []any{d.Name}})
		}
	}
	return out, nil
}

// devicesImportInput is what rows are checked against: the names of the
// groups, credentials and templates, and the user's scope.
type devicesImportInput struct {
	allGroups bool
	// groups maps a folded name to the group, inScope to whether the user
	// may place devices in it.
	groups      map[string]db.Group
	inScope     map[int64]bool
	credentials map[string]int64
	// canUse says whether the user may attach a credential.
	canUse func(id int64) bool
	// templates maps platform, then folded name, to the ids of the
	// templates of that name (names need not be unique).
	templates map[string]map[string][]int64
	// zones maps a folded name to the zone's id.
	zones map[string]int64
}

func (u *UI) devicesImportInput(ctx context.Context, s *core.Session) (*devicesImportInput, error) {
	groups, err := u.Store.AllGroups(ctx)
	if err != nil {
		return nil, err
	}
	creds, err := u.Store.DeviceCredentialChoices(ctx, db.CredentialScope{All: true})
	if err != nil {
		return nil, err
	}
	tpls, err := u.Store.DeviceTemplateChoices(ctx)
	if err != nil {
		return nil, err
	}
	zones, err := u.Store.ListZones(ctx)
	if err != nil {
		return nil, err
	}
	scope := s.Scope()
	in := &devicesImportInput{allGroups: scope.All, groups: map[string]db.Group{}, inScope: map[int64]bool{},
		canUse:      s.Principal().CanUseCredential,
		credentials: map[string]int64{}, templates: map[string]map[string][]int64{}, zones: map[string]int64{}}
	for _, z := range zones {
		in.zones[devicesFold(z.Name)] = z.ID
	}
	for _, g := range groups {
		in.groups[devicesFold(g.Name)] = g
		in.inScope[g.ID] = devicesGroupInScope(g, scope)
	}
	for _, c := range creds {
		in.credentials[devicesFold(c.Name)] = c.ID
	}
	for _, t := range tpls {
		if in.templates[t.Platform] == nil {
			in.templates[t.Platform] = map[string][]int64{}
		}
		k := devicesFold(t.Name)
		in.templates[t.Platform][k] = append(in.templates[t.Platform][k], t.ID)
	}
	return in, nil
}

// devicesFold folds ASCII letters only, as the database's NOCASE names do.
func devicesFold(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// parse reads the file: a header row naming the columns, then one device
// per row. It returns the devices with the line each came from, or the
// problems of every row, or an error about the whole file.
func (in *devicesImportInput) parse(data []byte) ([]db.Device, []int, []devicesImportProblem, *devicesMessage) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return nil, nil, nil, &devicesMessage{Key: keyDevicesImportNotUTF8}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, nil, &devicesMessage{Key: keyDevicesImportEmpty}
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	// Spreadsheets set to a decimal comma save with semicolons.
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if bytes.IndexByte(first, ';') >= 0 && bytes.IndexByte(first, ',') < 0 {
		cr.Comma = ';'
	}
	head, err := cr.Read()
	if err != nil {
		return nil, nil, nil, devicesCSVError(err)
	}
	cols, msg := devicesHeader(head)
	if msg != nil {
		return nil, nil, nil, msg
	}
	var (
		devices  []db.Device
		lines    []int
		problems []devicesImportProblem
		seen     = map[string]int{}
	)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, nil, devicesCSVError(err)
		}
		line, _ := cr.FieldPos(0)
		if devicesBlankRecord(rec) {
			continue
		}
		if len(devices) >= devicesImportRows {
			return nil, nil, nil, &devicesMessage{Key: keyDevicesImportTooManyRows, Args: []any{devicesImportRows}}
		}
		if len(rec) != len(cols) {
			problems = append(problems, devicesImportProblem{Line: line, Key: keyDevicesImportFieldCount, Args: []any{len(rec), len(cols)}})
			devices, lines = append(devices, db.Device{}), append(lines, line)
			continue
		}
		row := map[string]string{}
		for i, c := range cols {
			row[c] = importer.Unguard(strings.TrimSpace(rec[i]))
		}
		d, rowProblems := in.device(row)
		for _, p := range rowProblems {
			p.Line = line
			problems = append(problems, p)
		}
		if d.Name != "" {
			k := devicesFold(d.Name)
			if prev, dup := seen[k]; dup {
				problems = append(problems, devicesImportProblem{Line: line, Column: "name", Key: keyDevicesImportDuplicate, Args: []any{d.Name, prev}})
			} else {
				seen[k] = line
			}
		}
		devices, lines = append(devices, d), append(lines, line)
	}
	if len(devices) == 0 {
		return nil, nil, nil, &devicesMessage{Key: keyDevicesImportNoRows}
	}
	return devices, lines, problems, nil
}

// devicesHeader maps the header row to column names: trimmed, any case,
// "Login method" for login_method. Unknown or repeated columns are
// refused (a typo must not silently drop a column), and so are missing
// required ones.
func devicesHeader(head []string) ([]string, *devicesMessage) {
	cols := make([]string, len(head))
	for i, h := range head {
		c := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(h)), " ", "_")
		switch {
		case !slices.Contains(importer.CSVColumns, c):
			return nil, &devicesMessage{Key: keyDevicesImportUnknownColumn, Args: []any{strings.TrimSpace(h), strings.Join(importer.CSVColumns, ", ")}}
		case slices.Contains(cols[:i], c):
			return nil, &devicesMessage{Key: keyDevicesImportRepeatedColumn, Args: []any{c}}
		}
		cols[i] = c
	}
	for _, c := range devicesRequiredColumns {
		if !slices.Contains(cols, c) {
			return nil, &devicesMessage{Key: keyDevicesImportMissingColumn, Args: []any{c}}
		}
	}
	return cols, nil
}

// devicesCSVError says where a file stops being CSV.
func devicesCSVError(err error) *devicesMessage {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &devicesMessage{Key: keyDevicesImportBadCSV, Args: []any{pe.Line}}
	}
	return &devicesMessage{Key: keyDevicesImportBadCSV, Args: []any{1}}
}

func devicesBlankRecord(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// device checks one row against the same rules as the form; a group,
// credential, template or zone is named, not numbered. An empty zone is
// the local one.
func (in *devicesImportInput) device(row map[string]string) (db.Device, []devicesImportProblem) {
	var problems []devicesImportProblem
	bad := func(col, key string, args ...any) {
		problems = append(problems, devicesImportProblem{Column: col, Key: key, Args: args})
	}
	d := inventory.NewDevice()
	d.Name, d.Host, d.Platform = row["name"], row["host"], row["platform"]
	if m := row["login_method"]; m != "" {
		d.LoginMethod = strings.ToLower(m)
	}
	d.Port = inventory.DefaultPort(d.LoginMethod)
	if d.Port == 0 {
		d.Port = inventory.DefaultPort(inventory.DefaultLoginMethod)
	}
	if p := row["port"]; p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			n = -1
		}
		d.Port = n
	}
	if e := row["encoding"]; e != "" {
		d.Encoding = strings.ToLower(e)
	}
	switch strings.ToLower(row["enabled"]) {
	case "", "true", "yes", "y", "1", "on":
	case "false", "no", "n", "0", "off":
		d.Enabled = false
	default:
		bad("enabled", keyDevicesImportEnabled)
	}
	if r := row["remarks"]; r != "" {
		d.Remarks = &r
	}
	for _, fe := range inventory.CheckDevice(&d) {
		// A file has no list to choose from: say what was written.
		switch fe.Field {
		case "platform":
			bad(fe.Field, keyDevicesImportPlatform, d.Platform)
		case "login_method":
			bad(fe.Field, keyDevicesImportLoginMethod, d.LoginMethod)
		case "encoding":
			bad(fe.Field, keyDevicesImportEncoding, d.Encoding)
		default:
			m := devicesFieldMessage(fe)
			bad(fe.Field, m.Key, m.Args...)
		}
	}

	switch name := row["group"]; {
	case name == "" && !in.allGroups:
		bad("group", keyDevicesErrGroupRequired)
	case name == "":
	default:
		g, ok := in.groups[devicesFold(name)]
		switch {
		case !ok:
			bad("group", keyDevicesImportNoGroup, name)
		case !in.inScope[g.ID]:
			bad("group", keyDevicesImportGroupOutside, name)
		default:
			d.GroupID = &g.ID
		}
	}
	if name := row["credential"]; name != "" {
		switch id, ok := in.credentials[devicesFold(name)]; {
		case !ok:
			bad("credential", keyDevicesImportNoCredential, name)
		case !in.canUse(id):
			bad("credential", keyDevicesImportCredentialUse, name)
		default:
			d.CredentialID = &id
		}
	}
	if name := row["zone"]; name != "" {
		if id, ok := in.zones[devicesFold(name)]; ok {
			d.ZoneID = id
		} else {
			bad("zone", keyDevicesImportNoZone, name)
		}
	}
	if name := row["template"]; name != "" {
		switch ids := in.templates[d.Platform][devicesFold(name)]; len(ids) {
		case 0:
			bad("template", keyDevicesImportNoTemplate, name, d.Platform)
		case 1:
			d.TemplateID = &ids[0]
		default:
			bad("template", keyDevicesImportAmbiguousTemplate, len(ids), d.Platform, name)
		}
	}
	return d, problems
}

// devicesExport writes the filtered devices of the user's scope as CSV in
// the import's format (names, never a secret), a thousand at a time.
func (u *UI) devicesExport(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	scope := core.SessionOf(r).Scope()
	f := devicesParseFilter(r.URL.Query())
	if f.Error != "" {
		return &core.PageError{Status: http.StatusBadRequest, Message: f.Error}
	}
	filter := f.store(u.Now())
	names, err := importer.LoadCSVNames(ctx, u.Store)
	if err != nil {
		return err
	}
	// The first page is read before anything is written, so that a
	// failing store still gets an error page.
	page, err := u.Store.DevicesAfter(ctx, scope, filter, 0, devicesExportPage)
	if err != nil {
		return err
	}
	name := "backupd-devices-" + u.Now().In(u.Location).Format("2006-01-02") + ".csv"
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	// A byte order mark makes spreadsheets read UTF-8 (Chinese names) right.
	if _, err := io.WriteString(w, "\xef\xbb\xbf"); err != nil {
		return nil
	}
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	_ = cw.Write(importer.CSVColumns)
	// Bounded: a million devices at the most.
	for range 1000 {
		for _, d := range page {
			rec := names.Record(d)
			_ = cw.Write(rec)
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return nil // the client went away
		}
		if len(page) < devicesExportPage {
			return nil
		}
		if page, err = u.Store.DevicesAfter(ctx, scope, filter, page[len(page)-1].ID, devicesExportPage); err != nil {
			// Half a file is worse than none: break the download off so
			// that the browser reports it failed.
			u.Log.Error("device export failed", "request_id", web.RequestID(ctx), "err", err)
			panic(http.ErrAbortHandler)
		}
	}
	return nil
}
