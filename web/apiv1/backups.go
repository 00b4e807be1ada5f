package apiv1

import (
	"context"
	"errors"
	"net/http"
	"time"

	"backupd/app/auth"
	"backupd/app/redact"
	"backupd/db"
	"backupd/web"
)

// Backup is one backup attempt.
type Backup struct {
	ID                 string  `json:"id" format:"uuid" doc:"Backup record identifier (UUID)."`
	StartedAt          string  `json:"started_at" doc:"Start time in the request's time zone (see X-Timezone), ISO 8601 without zone designator."`
	FinishedAt         *string `json:"finished_at" doc:"End time in the request's time zone; null while unfinished."`
	Success            bool    `json:"success" doc:"Whether the backup succeeded."`
	ErrorMessage       *string `json:"error_message" doc:"Why the backup failed; normally null on success."`
	ConfigSnapshotHash *string `json:"config_snapshot_hash" doc:"SHA-256 of the stored configuration text; null when there is no snapshot."`
}

// BackupContent is the configuration text of a backup.
type BackupContent struct {
	ConfigText *string `json:"config_text" doc:"Configuration text; null when the record exists but has no usable text."`
}

// TimezoneParam is the optional request header naming the time zone of
// returned backup times.
type TimezoneParam struct {
	Timezone string `header:"X-Timezone" maxLength:"64" doc:"IANA time zone (for example Asia/Shanghai) for backup times in the response; default: the server's --timezone."`
}

// location resolves the request's time zone.
func (a *API) location(name string) (*time.Location, error) {
	if name == "" {
		if a.deps.Location != nil {
			return a.deps.Location, nil
		}
		return time.Local, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, web.FieldInvalid("header", "X-Timezone", "unknown time zone; use an IANA name such as Europe/Berlin or UTC")
	}
	return loc, nil
}

func toBackup(b db.Backup, loc *time.Location) Backup {
	out := Backup{ID: b.ID, StartedAt: b.StartedAt.In(loc).Format(db.TimeFormat), Success: b.Success,
		ErrorMessage: b.ErrorMessage, ConfigSnapshotHash: b.SnapshotHash}
	if b.FinishedAt != nil {
		f := b.FinishedAt.In(loc).Format(db.TimeFormat)
		out.FinishedAt = &f
	}
	return out
}

// BackupListParams are the history's paging parameters (a larger range
// than ordinary lists).
type BackupListParams struct {
	Page  int `query:"page" default:"1" minimum:"1" doc:"Page number, starting at 1."`
	Limit int `query:"limit" default:"10" minimum:"1" maximum:"200" doc:"Page size, 1 to 200."`
}

type backupListOutput struct {
	Timezone string `header:"X-Timezone" doc:"The time zone the backup times are given in."`
	Body     Page[Backup]
}

// Fresh errors each time: errors carry their request id.
func errBackupDeviceNotFound() error {
	return web.NewError(http.StatusNotFound, "BACKUP_DEVICE_NOT_FOUND", "device not found")
}

func errBackupDeviceForbidden() error {
	return web.NewError(http.StatusForbidden, "BACKUP_DEVICE_FORBIDDEN", "the device is outside your device groups")
}

func (a *API) registerBackups() {
	register(a, operation(http.MethodGet, "/devices/{device_id}/backups", "list-device-backups", "Backups", "backups.view",
		"List a device's backup history", "Returns one page of the device's backup records, newest first. Times are given in the time zone of the X-Timezone request header, else the server's; the zone used is echoed in the X-Timezone response header.",
		Codes{http.StatusNotFound: {{"BACKUP_DEVICE_NOT_FOUND", "no device has this id.", "device not found"}}, http.StatusForbidden: {permissionDenied("the permission is missing."), {"BACKUP_DEVICE_FORBIDDEN", "the device is outside the caller's device groups.", "the device is outside your device groups"}}}),
		func(ctx context.Context, in *struct {
			DeviceID int64 `path:"device_id" minimum:"1" doc:"Device identifier."`
			BackupListParams
			TimezoneParam
		}) (*backupListOutput, error) {
			loc, err := a.location(in.Timezone)
			if err != nil {
				return nil, err
			}
			if _, err := a.visibleDevice(ctx, in.DeviceID, errBackupDeviceNotFound(), errBackupDeviceForbidden()); err != nil {
				return nil, err
			}
			page, err := listPage(ListParams{Page: in.Page, Limit: in.Limit}, func(limit, off int) ([]db.Backup, int, error) {
				return a.deps.Store.ListBackups(ctx, in.DeviceID, limit, off)
			}, func(b db.Backup) Backup { return toBackup(b, loc) })
			if err != nil {
				return nil, err
			}
			return &backupListOutput{Timezone: loc.String(), Body: page}, nil
		})

	register(a, operation(http.MethodGet, "/backups/{backup_id}/content", "get-backup-content", "Backups", "backups.view",
		"Get a backup's configuration text", "Returns the configuration text of a backup record. A 200 response does not guarantee text: config_text is null when the record has none (for example a failed backup). The text may hold sensitive data: keep it out of logs and tickets. It is the stored text, secrets included, unless an administrator has turned on masking in the API (Settings, Secrets in configurations): then a key without the permission `configs.reveal_secrets` gets each secret as `<secret:3f9a1c>`, and each read in clear text is audited.",
		Codes{http.StatusNotFound: {{"BACKUP_NOT_FOUND", "no backup record has this id.", "backup not found"}}, http.StatusForbidden: {permissionDenied("the permission is missing."), {"BACKUP_DEVICE_FORBIDDEN", "the backup's device is outside the caller's device groups.", "the device is outside your device groups"}}}),
		func(ctx context.Context, in *struct {
			BackupID string `path:"backup_id" format:"uuid" doc:"Backup record identifier (UUID) from the history."`
		}) (*struct{ Body BackupContent }, error) {
			b, err := a.deps.Store.GetBackup(ctx, in.BackupID)
			if errors.Is(err, db.ErrNotFound) {
				return nil, web.NewError(http.StatusNotFound, "BACKUP_NOT_FOUND", "backup not found")
			}
			if err != nil {
				return nil, err
			}
			d, err := a.visibleDevice(ctx, b.DeviceID, web.NewError(http.StatusNotFound, "BACKUP_NOT_FOUND", "backup not found"), errBackupDeviceForbidden())
			if err != nil {
				return nil, err
			}
			out := &struct{ Body BackupContent }{}
			if b.SnapshotHash != nil {
				text, err := a.deps.Store.SnapshotText(ctx, *b.SnapshotHash)
				if err != nil && !errors.Is(err, db.ErrNotFound) {
					return nil, err
				}
				if err == nil {
					if text, err = a.contentSecrets(ctx, d, b.ID, text); err != nil {
						return nil, err
					}
					out.Body.ConfigText = &text
				}
			}
			return out, nil
		})
}

// contentSecrets is a backup's text as the caller may read it. The
// contract returns the stored text; only when the administrator has
// turned on masking in the API (db.SecretMasking.API) are its secrets
// masked (app/redact), for every key without auth.PermRevealSecrets, and
// each read in clear text by one with it is audited.
func (a *API) contentSecrets(ctx context.Context, d db.Device, backupID, text string) (string, error) {
	set, err := a.deps.Store.SecretMaskingSettings(ctx)
	if err != nil {
		return "", err
	}
	if !set.API {
		return text, nil
	}
	if !callerFrom(ctx).Can(auth.PermRevealSecrets) {
		return redact.NewKeyring(a.deps.Sealer).Device(d.ID, d.Platform).Text(text), nil
	}
	a.audit(ctx, "config.reveal", "device", d.ID, map[string]any{"page": "backup content", "backup": backupID})
	return text, nil
}
