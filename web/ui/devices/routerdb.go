package devices

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"backupd/app/importer"
	"backupd/db"
	"backupd/web/ui/core"
)

// The devices page also imports Oxidized's and RANCID's router.db, as
// `backupd import oxidized|rancid` does (app/importer): a dry run lists
// what would be created, updated and skipped; an import applies it in one
// transaction. Since it creates groups and credentials and updates any
// device named in the file, it needs a user who sees every group and may
// create groups and credentials and update devices.

// devicesRouterDBShown bounds the lines listed on the page.
const devicesRouterDBShown = 200

// devicesRouterDBForm is what the router.db form was filled in with,
// shown again with its result.
type devicesRouterDBForm struct {
	Format, Delimiter, Map, Group string
	// Zone is the name of the devices' zone; "" puts new devices in the
	// local zone and leaves existing ones in theirs.
	Zone   string
	DryRun bool
}

// devicesRouterDBResult is the plan, or what was applied.
type devicesRouterDBResult struct {
	Applied                              bool
	Created, Updated, Unchanged, Skipped int
	Groups, Credentials                  []string
	Lines                                []devicesRouterDBLine
	More                                 int
	// Oxidized is how an uploaded Oxidized configuration was read;
	// Layout how a file without one was.
	Oxidized *devicesRouterDBOxidized
	Layout   *devicesRouterDBLayout
}

func devicesRouterDBDefaults() devicesRouterDBForm {
	return devicesRouterDBForm{Format: importer.Oxidized, Delimiter: ":", Map: importer.DefaultMap().String(), DryRun: true}
}

// devicesImportRouterDB plans, and unless it is a dry run applies, the
// import of an uploaded router.db.
func (u *handlers) devicesImportRouterDB(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	p, err := u.devicesImportPageData(ctx)
	if err != nil {
		return err
	}
	f := devicesRouterDBForm{
		Format: r.PostFormValue("format"), Delimiter: r.PostFormValue("delimiter"), Map: strings.TrimSpace(r.PostFormValue("map")),
		Group: strings.TrimSpace(r.PostFormValue("group")), Zone: strings.TrimSpace(r.PostFormValue("zone")), DryRun: r.PostFormValue("dry_run") != "",
	}
	p.RouterDBForm = f
	fail := func(status int, key string, args ...any) error {
		p.RouterDBError, p.RouterDBErrorArgs = key, args
		return u.Render(w, r, status, "devices_import.html", keyTitleDevicesImport, p)
	}
	if !s.Scope().All {
		return fail(http.StatusForbidden, keyDevicesRouterDBScoped)
	}
	if f.Format != importer.Oxidized && f.Format != importer.Rancid {
		return fail(http.StatusUnprocessableEntity, keyDevicesRouterDBFormat)
	}
	data, msg := u.devicesUploadedFile(r, "file", true)
	if msg != "" {
		return fail(http.StatusUnprocessableEntity, msg)
	}
	var parsed *importer.Parsed
	var oxidized *devicesRouterDBOxidized
	defaultMap := false
	if f.Format == importer.Oxidized {
		config, msg := u.devicesUploadedFile(r, "oxidized_config", false)
		if msg != "" {
			return fail(http.StatusUnprocessableEntity, msg)
		}
		if config != nil {
			// The configuration's delimiter and maps replace the form's;
			// its source.csv.file names a path on the Oxidized host and
			// is never read here: the router.db is the upload.
			oc, cerr := importer.ParseOxidizedConfig(config)
			var fe *importer.FileError
			if errors.As(cerr, &fe) {
				return fail(http.StatusUnprocessableEntity, keyDevicesRouterDBOxidizedConfig, fe.Message)
			}
			if cerr != nil {
				return cerr
			}
			oxidized = devicesOxidizedView(oc.Mapping())
			parsed, err = oc.ParseRouterDB(data)
		} else {
			m := importer.DefaultMap()
			if f.Map != "" {
				if m, err = importer.ParseMap(f.Map); err != nil {
					return fail(http.StatusUnprocessableEntity, keyDevicesRouterDBFile, err.Error())
				}
			}
			defaultMap = m.String() == importer.DefaultMap().String()
			if f.Delimiter == "" {
				f.Delimiter = ":"
			}
			parsed, err = importer.ParseOxidized(data, f.Delimiter, m)
		}
	} else {
		rc, msg := u.devicesUploadedFile(r, "cloginrc", false)
		if msg != "" {
			return fail(http.StatusUnprocessableEntity, msg)
		}
		parsed, err = importer.ParseRancid(data, rc)
	}
	var fe *importer.FileError
	if errors.As(err, &fe) {
		return fail(http.StatusUnprocessableEntity, keyDevicesRouterDBFile, fe.Message)
	}
	if err != nil {
		return err
	}
	plan, err := importer.BuildFor(ctx, u.Store, u.Sealer, parsed, f.Group, f.Zone, s.Principal())
	var ze *importer.ZoneError
	if errors.As(err, &ze) {
		return fail(http.StatusUnprocessableEntity, keyDevicesRouterDBZone, ze.Name)
	}
	if err != nil {
		return err
	}
	created, updated, unchanged, skipped := plan.Counts()
	res := &devicesRouterDBResult{Created: created, Updated: updated, Unchanged: unchanged, Skipped: skipped, Groups: plan.Groups,
		Oxidized: oxidized}
	if oxidized == nil {
		res.Layout = devicesRouterDBLayoutOf(parsed, defaultMap)
	}
	for _, c := range plan.Credentials {
		res.Credentials = append(res.Credentials, c.Name)
	}
	res.Lines, res.More = devicesRouterDBLines(plan)
	p.RouterDB = res
	if len(plan.Rows) == 0 {
		return fail(http.StatusUnprocessableEntity, keyDevicesRouterDBNothing)
	}
	if f.DryRun {
		return u.Render(w, r, http.StatusOK, "devices_import.html", keyTitleDevicesImport, p)
	}
	for _, need := range []struct {
		perm string
		used bool
	}{{"devices.update", updated > 0}, {"groups.create", len(plan.Groups) > 0}, {"credentials.create", len(plan.Credentials) > 0}} {
		if need.used && !s.Can(need.perm) {
			return fail(http.StatusForbidden, keyDevicesRouterDBPermission, need.perm)
		}
	}
	if err := plan.Apply(ctx, u.Store, u.Sealer); err != nil {
		var ie *db.ImportError
		if errors.As(err, &ie) {
			return fail(http.StatusConflict, keyDevicesImportChanged)
		}
		return err
	}
	res.Applied = true
	if created+updated > 0 {
		filename := ""
		if _, h, err := r.FormFile("file"); err == nil {
			filename = core.Truncate(h.Filename, 128)
		}
		details := map[string]any{"format": parsed.Format, "file": filename, "created": created, "updated": updated,
			"unchanged": unchanged, "skipped": skipped, "groups_created": len(plan.Groups), "credentials_created": len(plan.Credentials)}
		if f.Zone != "" {
			details["zone"] = f.Zone
		}
		if ids := plan.UsedCredentials(); len(ids) > 0 {
			// Which existing credentials the import attached or sent to
			// a device's new address.
			details["credential_ids"] = ids
		}
		u.AuditAs(r, "device.import", "device", "", details)
	}
	return u.Render(w, r, http.StatusOK, "devices_import.html", keyTitleDevicesImport, p)
}

// devicesUploadedFile reads an uploaded file of the form, bounded: its
// bytes, or the message key of what is wrong.
func (u *handlers) devicesUploadedFile(r *http.Request, field string, required bool) ([]byte, string) {
	file, _, err := r.FormFile(field)
	if err != nil {
		if required {
			return nil, keyDevicesImportNoFile
		}
		return nil, ""
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, devicesImportBytes+1))
	if err != nil || len(data) > devicesImportBytes {
		return nil, keyDevicesRouterDBTooLarge
	}
	return data, ""
}
