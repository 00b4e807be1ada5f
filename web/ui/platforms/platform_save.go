package platforms

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"backupd/app/collect/driver"
	custom "backupd/app/platforms"
	"backupd/web/ui/core"
)

// Saving, deleting, importing and exporting a definition
// (app/platforms: the same checks as the command line's).

func (u *handlers) platformCreate(w http.ResponseWriter, r *http.Request) error {
	return u.platformSave(w, r, "")
}

func (u *handlers) platformUpdate(w http.ResponseWriter, r *http.Request) error {
	row, _, err := u.storedPlatform(r)
	if err != nil {
		return err
	}
	return u.platformSave(w, r, row.PlatformID)
}

// platformSave saves the form (stored is the platform being edited, ""
// for a new one), or runs the test when the Test button sent it.
func (u *handlers) platformSave(w http.ResponseWriter, r *http.Request, stored string) error {
	ctx := r.Context()
	f, errs := readPlatformFields(r)
	if stored != "" {
		f.ID = stored // the ID of a stored platform never changes: devices store it
	}
	p := platformForm{Stored: stored, Heading: f.Name, Editable: true, F: f, Errors: errs}
	if stored != "" {
		var err error
		if p.Devices, p.Templates, err = u.Store.PlatformUse(ctx, stored); err != nil {
			return err
		}
	}
	def := f.definition()
	if r.PostFormValue("action") == "test" {
		return u.platformTest(w, r, p, def)
	}
	if len(errs) > 0 {
		return u.renderPlatformForm(w, r, http.StatusUnprocessableEntity, p)
	}
	pl, err := custom.Save(ctx, u.Store, def, stored == "")
	if err != nil {
		if p.Errors = storeMessages(err, def.ID); p.Errors == nil {
			return err
		}
		return u.renderPlatformForm(w, r, http.StatusUnprocessableEntity, p)
	}
	action, notice := "platform.create", "created"
	if stored != "" {
		action, notice = "platform.update", "updated"
	}
	u.platformAudit(r, action, pl.ID, map[string]any{"name": pl.Name})
	core.RedirectNotice(w, r, core.PathPlatforms+"/"+pl.ID, notice)
	return nil
}

// platformAudit records a change of the platform with ID id.
func (u *handlers) platformAudit(r *http.Request, action, id string, details map[string]any) {
	u.AuditAs(r, action, "platform", id, details)
}

func (u *handlers) platformDelete(w http.ResponseWriter, r *http.Request) error {
	row, d, err := u.storedPlatform(r)
	if err != nil {
		return err
	}
	if err := custom.Delete(r.Context(), u.Store, row.PlatformID); err != nil {
		msgs := storeMessages(err, row.PlatformID)
		if msgs == nil {
			return err
		}
		return u.renderPlatforms(w, r, http.StatusConflict, msgs)
	}
	u.platformAudit(r, "platform.delete", row.PlatformID, map[string]any{"name": d.Name})
	core.RedirectNotice(w, r, core.PathPlatforms, "deleted")
	return nil
}

// platformImport stores an uploaded definition: a new platform, or with
// "replace" ticked a new version of the stored one with its ID.
func (u *handlers) platformImport(w http.ResponseWriter, r *http.Request) error {
	file, _, err := r.FormFile("file")
	if err != nil {
		return u.renderPlatforms(w, r, http.StatusUnprocessableEntity, []platformMsg{{Key: keyPlatErrImportNoFile}})
	}
	defer file.Close()
	doc, err := io.ReadAll(io.LimitReader(file, custom.MaxDocument+1))
	if err != nil {
		return err
	}
	d, err := custom.Parse(doc)
	if err != nil {
		return u.renderPlatforms(w, r, http.StatusUnprocessableEntity, definitionMessages(err))
	}
	replace := core.Checked(r, "replace")
	create := true
	if replace {
		if _, err := u.Store.GetCustomPlatform(r.Context(), strings.TrimSpace(d.ID)); err == nil {
			create = false
		}
	}
	pl, err := custom.Save(r.Context(), u.Store, d, create)
	if err != nil {
		msgs := storeMessages(err, d.ID)
		if msgs == nil {
			return err
		}
		return u.renderPlatforms(w, r, http.StatusUnprocessableEntity, msgs)
	}
	u.platformAudit(r, "platform.import", pl.ID, map[string]any{"name": pl.Name, "replaced": !create})
	core.RedirectNotice(w, r, core.PathPlatforms+"/"+pl.ID, "imported")
	return nil
}

// platformExport downloads a platform's definition: a custom one as
// stored, a built-in one as a starting point (its ID prefixed custom_).
func (u *handlers) platformExport(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var doc []byte
	if b, ok := driver.Lookup(id); ok && !b.Custom {
		doc = custom.Marshal(custom.FromPlatform(b))
		id = custom.BuiltinCopyID(id)
	} else {
		row, d, err := u.storedPlatform(r)
		if err != nil {
			return err
		}
		if _, perr := custom.Parse([]byte(row.Definition)); perr != nil {
			doc = []byte(row.Definition) // as stored, for the administrator to mend
		} else {
			doc = custom.Marshal(d)
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.json"`, id))
	w.Header().Set("Cache-Control", "no-store")
	_, err := w.Write(doc)
	return err
}
