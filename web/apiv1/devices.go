package apiv1

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"backupd/app/auth"
	"backupd/app/collect/driver"
	"backupd/app/inventory"
	"backupd/db"
	"backupd/web"

	"github.com/danielgtaylor/huma/v2"
)

// Device is a network device as the API shows it. It never holds a secret.
type Device struct {
	ID                int64   `json:"id" doc:"Device identifier."`
	Name              string  `json:"name" doc:"Device name, unique among devices."`
	Host              string  `json:"host" doc:"IP address or DNS name."`
	Port              int     `json:"port" doc:"TCP port of the login method."`
	Platform          string  `json:"platform" doc:"Device platform identifier."`
	LoginMethod       string  `json:"login_method" enum:"ssh,telnet" doc:"How backupd logs in."`
	GroupID           *int64  `json:"group_id" doc:"Device group; null when the device is in no group."`
	CredentialID      *int64  `json:"credential_id" doc:"Credential used to log in; null when none is set."`
	TemplateID        *int64  `json:"template_id" doc:"Backup command template; null means the platform's default commands."`
	Encoding          string  `json:"encoding" doc:"Character set the device prints in."`
	Enabled           bool    `json:"enabled" doc:"Scheduled backups skip disabled devices."`
	Remarks           *string `json:"remarks" doc:"Free-text remarks."`
	Status            string  `json:"status" enum:"unknown,reachable,unreachable" doc:"Result of the last reachability check or backup connection."`
	LastCheckedAt     *string `json:"last_checked_at" doc:"Time of the last reachability check, UTC; null before the first."`
	LastBackupAt      *string `json:"last_backup_at" doc:"End time of the last backup attempt, UTC; null before the first."`
	LastBackupSuccess *bool   `json:"last_backup_success" doc:"Whether the last backup attempt succeeded; null before the first."`
	LastChangedAt     *string `json:"last_changed_at" doc:"When the configuration last changed: start time of the newest backup that found it different from the previous version, noise ignored, UTC. A device's first backup is not a change: null until a later backup finds one."`
	CreatedAt         string  `json:"created_at" doc:"Creation time, UTC, ISO 8601 without zone designator."`
	UpdatedAt         string  `json:"updated_at" doc:"Time of the last change, UTC, ISO 8601 without zone designator."`
}

func toDevice(d db.Device) Device {
	return Device{
		ID: d.ID, Name: d.Name, Host: d.Host, Port: d.Port, Platform: d.Platform, LoginMethod: d.LoginMethod,
		GroupID: d.GroupID, CredentialID: d.CredentialID, TemplateID: d.TemplateID, Encoding: d.Encoding,
		Enabled: d.Enabled, Remarks: d.Remarks, Status: d.Status, LastCheckedAt: d.LastCheckedAt,
		LastBackupAt: d.LastBackupAt, LastBackupSuccess: d.LastBackupSuccess, LastChangedAt: d.LastChangedAt, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
	}
}

// Encoding is a character set name; the accepted values come from the
// driver package.
type Encoding string

// Schema lists the supported encodings as an enum.
func (Encoding) Schema(_ huma.Registry) *huma.Schema {
	return stringEnum(driver.Encodings, "Character set the device prints in.")
}

// DeviceCreate is the body of POST /devices.
type DeviceCreate struct {
	Name         string    `json:"name" minLength:"1" maxLength:"128" doc:"Device name, unique among devices; surrounding spaces are trimmed."`
	Host         string    `json:"host" minLength:"1" maxLength:"253" doc:"IP address or DNS name."`
	Port         *int      `json:"port,omitempty" minimum:"1" maximum:"65535" doc:"TCP port; default 22 for ssh, 23 for telnet."`
	Platform     Platform  `json:"platform" doc:"Device platform identifier."`
	LoginMethod  *string   `json:"login_method,omitempty" enum:"ssh,telnet" doc:"How backupd logs in; default ssh."`
	GroupID      *int64    `json:"group_id,omitempty" nullable:"true" doc:"Device group; not checked against the caller's group scope."`
	CredentialID *int64    `json:"credential_id,omitempty" nullable:"true" doc:"Credential used to log in."`
	TemplateID   *int64    `json:"template_id,omitempty" nullable:"true" doc:"Backup command template of the same platform; absent or null means the platform's default commands."`
	Encoding     *Encoding `json:"encoding,omitempty" doc:"Character set the device prints in; default utf-8."`
	Enabled      *bool     `json:"enabled,omitempty" doc:"Whether scheduled backups include the device; default true."`
	Remarks      *string   `json:"remarks,omitempty" nullable:"true" maxLength:"2000" doc:"Free-text remarks."`
}

// DeviceUpdate is the body of PUT /devices/{device_id}.
type DeviceUpdate struct {
	Name         *string   `json:"name,omitempty" minLength:"1" maxLength:"128" doc:"New name; absent keeps the stored value."`
	Host         *string   `json:"host,omitempty" minLength:"1" maxLength:"253" doc:"New host; absent keeps the stored value."`
	Port         *int      `json:"port,omitempty" minimum:"1" maximum:"65535" doc:"New port; absent keeps the stored value (or follows a changed login method when it was that method's default)."`
	Platform     *Platform `json:"platform,omitempty" doc:"New platform; absent keeps the stored value."`
	LoginMethod  *string   `json:"login_method,omitempty" enum:"ssh,telnet" doc:"New login method; absent keeps the stored value."`
	GroupID      *int64    `json:"group_id,omitempty" nullable:"true" doc:"New group, which must be in the caller's group scope; absent keeps the stored value."`
	CredentialID *int64    `json:"credential_id,omitempty" nullable:"true" doc:"New credential; absent keeps the stored value, null clears it."`
	TemplateID   *int64    `json:"template_id,omitempty" nullable:"true" doc:"New template; absent keeps the stored value, null returns to the platform's default commands."`
	Encoding     *Encoding `json:"encoding,omitempty" doc:"New encoding; absent keeps the stored value."`
	Enabled      *bool     `json:"enabled,omitempty" doc:"Enable or disable scheduled backups; absent keeps the stored value."`
	Remarks      *string   `json:"remarks,omitempty" nullable:"true" maxLength:"2000" doc:"New remarks; absent keeps the stored value, null clears them."`
}

// TransformSchema says in the schema what absent and null mean on PUT.
func (DeviceUpdate) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	s.Description = "Body of PUT /devices/{device_id}: a partial update, not a full replace. An absent field keeps its stored value. An explicit null clears group_id, credential_id, template_id or remarks; the other fields cannot be null."
	return s
}

// DeviceListParams are the device list's query parameters.
type DeviceListParams struct {
	ListParams
	Query    string `query:"q" maxLength:"128" doc:"Substring of the name or host."`
	GroupID  int64  `query:"group_id" minimum:"1" doc:"Only devices in this group or its subgroups."`
	Platform string `query:"platform" maxLength:"64" doc:"Only devices of this platform."`
	Status   string `query:"status" enum:"unknown,reachable,unreachable" doc:"Only devices with this status."`
	Enabled  string `query:"enabled" enum:"true,false" doc:"Only enabled (true) or disabled (false) devices."`
}

func (p DeviceListParams) filter() db.DeviceFilter {
	f := db.DeviceFilter{Query: p.Query, Platform: p.Platform, Status: p.Status}
	if p.GroupID > 0 {
		f.GroupID = &p.GroupID
	}
	if p.Enabled != "" {
		enabled := p.Enabled == "true"
		f.Enabled = &enabled
	}
	return f
}

type deviceIDPath struct {
	DeviceID int64 `path:"device_id" minimum:"1" doc:"Device identifier."`
}

type deviceOutput struct{ Body Device }

func deviceError(err error) error {
	var ref *db.ErrReference
	switch {
	case errors.Is(err, db.ErrNotFound):
		return web.NewError(http.StatusNotFound, web.CodeNotFound, "device not found")
	case errors.Is(err, db.ErrNameExists):
		return web.NewError(http.StatusConflict, "DEVICE_NAME_EXISTS", "a device with this name already exists")
	case errors.As(err, &ref):
		return web.FieldInvalid("body", ref.Field, ref.Message)
	}
	return err
}

// credentialUseError is the 403 of a create or update that would use a
// credential the caller may not use; other errors pass through.
func credentialUseError(err error) error {
	var cue *inventory.CredentialUseError
	if errors.As(err, &cue) {
		return web.NewError(http.StatusForbidden, web.CodePermissionDenied,
			fmt.Sprintf("permission %s is required on credential %d: %s", auth.PermCredentialsUse, cue.CredentialID, cue.Error()))
	}
	return err
}

// credentialUseDetails adds to an audit entry which credential a change
// used, and how, when it used one.
func (a *API) credentialUseDetails(ctx context.Context, details map[string]any, use inventory.CredentialUse, used bool) {
	if !used {
		return
	}
	details["credential_id"], details["credential_use"] = use.CredentialID, use.How
	if c, err := a.deps.Store.GetCredential(ctx, use.CredentialID); err == nil {
		details["credential"] = c.Name
	}
}

// errOutOfScope is a fresh error each time: errors carry their request id.
func errOutOfScope() error {
	return web.NewError(http.StatusForbidden, web.CodePermissionDenied, "the device is outside your device groups")
}

// fieldErrors turns the inventory's field errors into the 422 naming
// every bad body field.
func fieldErrors(errs ...inventory.FieldError) error {
	out := make([]web.FieldError, len(errs))
	for i, fe := range errs {
		out[i] = web.FieldError{Location: "body", Field: fe.Field, Message: fe.Message}
	}
	return web.Validation("request validation failed", out...)
}

// visibleDevice loads a device and checks it against the caller's scope:
// notFound and forbidden are the errors to answer with.
func (a *API) visibleDevice(ctx context.Context, id int64, notFound, forbidden error) (db.Device, error) {
	d, err := a.deps.Store.GetDevice(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return d, notFound
	}
	if err != nil {
		return d, err
	}
	ok, err := a.deps.Store.DeviceInScope(ctx, scopeOf(ctx), d)
	if err != nil {
		return d, err
	}
	if !ok {
		return d, forbidden
	}
	return d, nil
}

func (a *API) registerDevices() {
	listDevices := func(unreachable bool) func(context.Context, *DeviceListParams) (*struct{ Body Page[Device] }, error) {
		return func(ctx context.Context, in *DeviceListParams) (*struct{ Body Page[Device] }, error) {
			f := in.filter()
			if unreachable {
				f.Status = db.StatusUnreachable
			}
			page, err := listPage(in.ListParams, func(limit, off int) ([]db.Device, int, error) {
				return a.deps.Store.ListDevices(ctx, scopeOf(ctx), f, limit, off)
			}, toDevice)
			return &struct{ Body Page[Device] }{page}, err
		}
	}
	register(a, operation(http.MethodGet, "/devices", "list-devices", "Devices", "devices.view",
		"List devices", "Returns one page of the devices in the caller's device groups, ordered by id, filtered by the optional query parameters.", nil),
		listDevices(false))
	register(a, operation(http.MethodGet, "/devices/unreachable", "list-unreachable-devices", "Devices", "devices.view",
		"List unreachable devices", "Returns one page of the devices in the caller's device groups whose last reachability check or backup could not connect.", nil),
		listDevices(true))

	register(a, operation(http.MethodGet, "/devices/{device_id}", "get-device", "Devices", "devices.view",
		"Get a device", "Returns one device of the caller's device groups.",
		Codes{http.StatusNotFound: {{"RESOURCE_NOT_FOUND", "no device has this id.", "device not found"}}, http.StatusForbidden: {permissionDenied("the permission is missing, or the device is outside the caller's device groups.")}}),
		func(ctx context.Context, in *deviceIDPath) (*deviceOutput, error) {
			d, err := a.visibleDevice(ctx, in.DeviceID, deviceError(db.ErrNotFound), errOutOfScope())
			if err != nil {
				return nil, err
			}
			return &deviceOutput{toDevice(d)}, nil
		})

	register(a, operation(http.MethodPost, "/devices", "create-device", "Devices", "devices.create",
		"Create a device", "Creates a device. group_id is not checked against the caller's group scope. A credential_id needs the credentials.use permission on that credential (held for every credential, or granted for this one by a role): the device logs in with it wherever host and port point. A group, credential or template that does not exist, or a template of another platform, is a validation error naming the field.",
		Codes{http.StatusConflict: {{"DEVICE_NAME_EXISTS", "another device has this name.", "a device with this name already exists"}},
			http.StatusForbidden: {permissionDenied("the permission is missing, or the caller may not use the credential named by credential_id (credentials.use).")}}),
		func(ctx context.Context, in *struct{ Body DeviceCreate }) (*deviceOutput, error) {
			b := in.Body
			d := inventory.NewDevice()
			d.Name, d.Host, d.Platform = b.Name, b.Host, string(b.Platform)
			d.GroupID, d.CredentialID, d.TemplateID, d.Remarks = b.GroupID, b.CredentialID, b.TemplateID, b.Remarks
			if b.LoginMethod != nil {
				inventory.SetLoginMethod(&d, *b.LoginMethod)
			}
			if b.Port != nil {
				d.Port = *b.Port
			}
			if b.Encoding != nil {
				d.Encoding = string(*b.Encoding)
			}
			if b.Enabled != nil {
				d.Enabled = *b.Enabled
			}
			if errs := inventory.CheckDevice(&d); len(errs) > 0 {
				return nil, fieldErrors(errs...)
			}
			use, used, err := inventory.CheckCredentialUse(callerFrom(ctx).Principal, nil, d)
			if err != nil {
				return nil, credentialUseError(err)
			}
			out, err := a.deps.Store.CreateDevice(ctx, d)
			if err != nil {
				return nil, deviceError(err)
			}
			details := map[string]any{"name": out.Name, "host": out.Host, "group_id": out.GroupID}
			a.credentialUseDetails(ctx, details, use, used)
			a.audit(ctx, "device.create", "device", out.ID, details)
			return &deviceOutput{toDevice(out)}, nil
		})

	register(a, operation(http.MethodPut, "/devices/{device_id}", "update-device", "Devices", "devices.update",
		"Update a device", "Changes the fields provided; absent fields keep their stored values. The device, and a new group_id, must be in the caller's device groups. Attaching a credential (credential_id), or changing host, port, login_method of a device that has one, needs the credentials.use permission on that credential: the credential goes to the new address. After such a change the device is not logged into until the new address is confirmed on its page (or its SSH host key, when pinned, proves it is the same device).",
		Codes{http.StatusNotFound: {{"RESOURCE_NOT_FOUND", "no device has this id.", "device not found"}}, http.StatusForbidden: {permissionDenied("the permission is missing, the device or the target group is outside the caller's device groups, or the change uses a credential the caller may not use (credentials.use).")}, http.StatusConflict: {{"DEVICE_NAME_EXISTS", "another device has this name.", "a device with this name already exists"}}}),
		func(ctx context.Context, in *struct {
			DeviceID int64 `path:"device_id" minimum:"1" doc:"Device identifier."`
			Body     DeviceUpdate
		}) (*deviceOutput, error) {
			b := in.Body
			sent := sentKeys(ctx)
			var name, host string
			if b.Name != nil {
				var fe *inventory.FieldError
				if name, fe = inventory.CheckName(*b.Name); fe != nil {
					return nil, fieldErrors(*fe)
				}
			}
			if b.Host != nil {
				var fe *inventory.FieldError
				if host, fe = inventory.CheckHost(*b.Host); fe != nil {
					return nil, fieldErrors(*fe)
				}
			}
			if _, err := a.visibleDevice(ctx, in.DeviceID, deviceError(db.ErrNotFound), errOutOfScope()); err != nil {
				return nil, err
			}
			scope := scopeOf(ctx)
			if sent["group_id"] && !scope.All {
				if b.GroupID == nil {
					return nil, web.NewError(http.StatusForbidden, web.CodePermissionDenied, "only users who see all device groups can take a device out of every group")
				}
				ok, err := a.deps.Store.GroupInScope(ctx, scope, *b.GroupID)
				if err != nil {
					return nil, err
				}
				if !ok {
					return nil, web.NewError(http.StatusForbidden, web.CodePermissionDenied, "the target group is outside your device groups")
				}
			}
			var use inventory.CredentialUse
			var used bool
			out, err := a.deps.Store.UpdateDevice(ctx, in.DeviceID, func(d *db.Device) error {
				before := *d
				if b.Name != nil {
					d.Name = name
				}
				if b.Host != nil {
					d.Host = host
				}
				if b.Platform != nil {
					d.Platform = string(*b.Platform)
				}
				if b.LoginMethod != nil {
					inventory.SetLoginMethod(d, *b.LoginMethod)
				}
				if b.Port != nil {
					d.Port = *b.Port
				}
				if sent["group_id"] {
					d.GroupID = b.GroupID
				}
				if sent["credential_id"] {
					d.CredentialID = b.CredentialID
				}
				if sent["template_id"] {
					d.TemplateID = b.TemplateID
				}
				if b.Encoding != nil {
					d.Encoding = string(*b.Encoding)
				}
				if b.Enabled != nil {
					d.Enabled = *b.Enabled
				}
				if sent["remarks"] {
					d.Remarks = b.Remarks
				}
				var err error
				use, used, err = inventory.CheckCredentialUse(callerFrom(ctx).Principal, &before, *d)
				return err
			})
			if err != nil {
				return nil, deviceError(credentialUseError(err))
			}
			details := map[string]any{"fields": sentFields(ctx), "name": out.Name}
			a.credentialUseDetails(ctx, details, use, used)
			a.audit(ctx, "device.update", "device", out.ID, details)
			return &deviceOutput{toDevice(out)}, nil
		})

	register(a, operation(http.MethodDelete, "/devices/{device_id}", "delete-device", "Devices", "devices.delete",
		"Delete a device", "Deletes a device of the caller's device groups, with its backup history.",
		Codes{http.StatusNotFound: {{"RESOURCE_NOT_FOUND", "no device has this id.", "device not found"}}, http.StatusForbidden: {permissionDenied("the permission is missing, or the device is outside the caller's device groups.")}}),
		func(ctx context.Context, in *deviceIDPath) (*deleteOutput, error) {
			d, err := a.visibleDevice(ctx, in.DeviceID, deviceError(db.ErrNotFound), errOutOfScope())
			if err != nil {
				return nil, err
			}
			if err := a.deps.Store.DeleteDevice(ctx, in.DeviceID); err != nil {
				return nil, deviceError(err)
			}
			a.audit(ctx, "device.delete", "device", in.DeviceID, map[string]any{"name": d.Name})
			return deleted(), nil
		})
}
