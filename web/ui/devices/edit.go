package devices

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"backupd/app/inventory"
	"backupd/db"
	"backupd/web/ui/core"
)

func (u *handlers) devicesNewForm(w http.ResponseWriter, r *http.Request) error {
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

func (u *handlers) devicesCreate(w http.ResponseWriter, r *http.Request) error {
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
func (u *handlers) devicesVisible(r *http.Request) (db.Device, error) {
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

func (u *handlers) devicesEditForm(w http.ResponseWriter, r *http.Request) error {
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
	if p.Source, err = u.deviceSourceOf(r, d); err != nil {
		return err
	}
	p.Next = core.LocalPath(r.URL.Query().Get("next"), "")
	p.Form = devicesFormOf(d)
	return u.Render(w, r, http.StatusOK, "devices_form.html", keyTitleDevicesEdit, p)
}

// devicesUpdate saves the edit form. The device must be in the user's
// scope, and so must the group it goes to (the form offers no other), as
// on the public API's PUT.
func (u *handlers) devicesUpdate(w http.ResponseWriter, r *http.Request) error {
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
	if p.Source, err = u.deviceSourceOf(r, d); err != nil {
		return err
	}
	return u.devicesSave(w, r, p, &d)
}

// devicesSave checks and stores the form: a new device when old is nil.
// A refused form comes back with the input kept and a message at each bad
// field (422; 409 for a name in use).
func (u *handlers) devicesSave(w http.ResponseWriter, r *http.Request, p *devicesFormPage, old *db.Device) error {
	ctx := r.Context()
	p.Form = devicesFormFromRequest(r)
	p.Next = core.LocalPath(r.PostFormValue("next"), "")
	title := keyTitleDevicesNew
	if old != nil {
		title = keyTitleDevicesEdit
	}
	if r.PostFormValue("action") == "test" {
		return u.devicesTest(w, r, p, old, title)
	}
	d, errs := p.device()
	if d.ZoneID == 0 && old != nil {
		d.ZoneID = old.ZoneID
	}
	status := http.StatusUnprocessableEntity
	var saved inventory.Saved
	var err error
	s := core.SessionOf(r)
	if len(errs) == 0 && p.Error == "" {
		if old == nil {
			saved, err = inventory.CreateDevice(ctx, u.Store, s.Principal(), d)
		} else {
			// The form sets every field a user edits; what the device
			// learnt by itself stays.
			saved, err = inventory.UpdateDevice(ctx, u.Store, s.Principal(), old.ID, func(cur *db.Device) {
				before := *cur
				*cur = d
				cur.ID, cur.Status, cur.LastCheckedAt, cur.LastBackupAt, cur.LastBackupSuccess, cur.CreatedAt, cur.AddressPin =
					before.ID, before.Status, before.LastCheckedAt, before.LastBackupAt, before.LastBackupSuccess, before.CreatedAt, before.AddressPin
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
	dev := saved.Device
	if old == nil {
		details := map[string]any{"name": dev.Name, "host": dev.Host, "group_id": dev.GroupID}
		if err := u.credentialUseDetails(ctx, details, saved.Use, saved.Used); err != nil {
			return err
		}
		u.Audit(r, "device.create", "device", dev.ID, details)
		http.Redirect(w, r, devicesListPath+"?"+url.Values{"q": {dev.Name}, "created": {"1"}}.Encode(), http.StatusSeeOther)
		return nil
	}
	details := map[string]any{"fields": devicesChanged(*old, dev), "name": dev.Name}
	if err := u.credentialUseDetails(ctx, details, saved.Use, saved.Used); err != nil {
		return err
	}
	u.Audit(r, "device.update", "device", dev.ID, details)
	if p.Next != "" {
		http.Redirect(w, r, p.Next, http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, devicesListPath+"?"+url.Values{"q": {dev.Name}, "updated": {"1"}}.Encode(), http.StatusSeeOther)
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
func (u *handlers) devicesDelete(w http.ResponseWriter, r *http.Request) error {
	d, err := u.devicesVisible(r)
	if err != nil {
		return err
	}
	if err := u.Store.DeleteDevice(r.Context(), d.ID); err != nil {
		return err
	}
	u.Audit(r, "device.delete", "device", d.ID, map[string]any{"name": d.Name})
	http.Redirect(w, r, devicesListPath+"?deleted=1", http.StatusSeeOther)
	return nil
}
