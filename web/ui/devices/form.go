package devices

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"backupd/app/collect/driver"
	"backupd/app/inventory"
	"backupd/db"
	"backupd/web/ui/core"
)

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
	// Test is how "Test connection" went, nil before one.
	Test *devicesTestResult
	// Source is the inventory source the edited device follows, nil for
	// a new device or one made by hand.
	Source *deviceSource

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
func (u *handlers) devicesFormData(ctx context.Context, s *core.Session, current *int64) (*devicesFormPage, error) {
	tree, err := u.GroupTree(ctx)
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
		Groups: devicesGroupOptions(tree, scope), AllowNoGroup: scope.All, Platforms: devicesPlatforms(),
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
