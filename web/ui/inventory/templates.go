package inventory

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"backupd/app/collect/driver"
	"backupd/db"
	"backupd/web/ui/core"
)

// Templates: named command lists that replace a platform's default
// backup commands on the devices that use them. The pages show every
// platform's defaults (from the driver registry, the collector's own
// table), and a blank command box means "the platform's defaults", as in
// the public API.

var templateNotices = map[string]string{
	"created":   keyInvTplCreated,
	"updated":   keyInvTplUpdated,
	"deleted":   keyInvTplDeleted,
	"unchanged": keyInvTplUnchanged,
}

// templatePreviewLines is how many commands the list shows of each
// template; the template's page shows them all.
const templatePreviewLines = 3

// invPlatform is a platform with its default commands.
type invPlatform struct {
	ID, Name string
	Defaults string
	Selected bool
}

// invPlatforms lists every platform of the driver registry, selected
// marked.
func invPlatforms(selected string) []invPlatform {
	ids := driver.IDs()
	out := make([]invPlatform, 0, len(ids))
	for _, id := range ids {
		info, _ := driver.Lookup(id)
		out = append(out, invPlatform{ID: id, Name: info.Name, Defaults: info.DefaultCommands, Selected: id == selected})
	}
	return out
}

// invPlatformName is how people call a platform; its id when unknown.
func invPlatformName(id string) string {
	if info, ok := driver.Lookup(id); ok {
		return info.Name
	}
	return id
}

// templateListPage is the data of templates.html.
type templateListPage struct {
	Items     []templateRow
	Pager     core.Pager
	Platforms []invPlatform
	// Scoped: the device counts leave out groups the user cannot see.
	Scoped bool
	Notice string
}

type templateRow struct {
	ID           int64
	Name         string
	Platform     string
	PlatformName string
	Preview      []string
	More         int
	Devices      int
}

func (u *handlers) templateList(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	page := core.PageNumber(r, core.MaxListPage)
	items, total, err := u.Store.ListTemplates(ctx, invPageSize, (page-1)*invPageSize)
	if err != nil {
		return err
	}
	if invPastEnd(w, r, "/templates", page, len(items), total) {
		return nil
	}
	ids := make([]int64, len(items))
	for i, t := range items {
		ids[i] = t.ID
	}
	used, err := u.Store.DevicesUsingTemplates(ctx, core.SessionOf(r).Scope(), ids)
	if err != nil {
		return err
	}
	p := templateListPage{Pager: core.NewPager(r, page, invPageSize, total), Platforms: invPlatforms(""),
		Scoped: !core.SessionOf(r).Scope().All, Notice: core.Notice(r, templateNotices)}
	for _, t := range items {
		lines := invCommandLines(t.Commands)
		row := templateRow{ID: t.ID, Name: t.Name, Platform: t.Platform, PlatformName: invPlatformName(t.Platform),
			Preview: lines, Devices: used[t.ID]}
		if len(lines) > templatePreviewLines {
			row.Preview, row.More = lines[:templatePreviewLines], len(lines)-templatePreviewLines
		}
		p.Items = append(p.Items, row)
	}
	return u.Render(w, r, http.StatusOK, "templates.html", keyInvTitleTemplates, p)
}

// invCommandLines is a template's commands, blank lines left out (as the
// engine runs them).
func invCommandLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// templateFormPage is the data of templates_form.html, for a new
// template (ID 0) or a stored one.
type templateFormPage struct {
	ID int64
	// Heading is the stored name.
	Heading   string
	Name      string
	Platform  string
	Commands  string
	Platforms []invPlatform
	// Defaults are the chosen platform's default commands, PlatformName
	// its name (empty while no platform is chosen).
	Defaults     string
	PlatformName string
	// Devices counts the devices in the user's scope that use the
	// template; InUse is whether any device does, in any group.
	Devices   int
	InUse     bool
	UpdatedAt string
	Error     string
	Args      []any
	Notice    string
}

// withPlatforms completes p with the platform list and the chosen
// platform's defaults.
func (p templateFormPage) withPlatforms() templateFormPage {
	p.Platforms = invPlatforms(p.Platform)
	if info, ok := driver.Lookup(p.Platform); ok {
		p.Defaults, p.PlatformName = info.DefaultCommands, info.Name
	}
	return p
}

// newTemplateForm starts a template; ?platform= (from the defaults
// table) chooses the platform and fills in its defaults to start from.
func (u *handlers) newTemplateForm(w http.ResponseWriter, r *http.Request) error {
	p := templateFormPage{}
	if id := r.URL.Query().Get("platform"); id != "" {
		if _, ok := driver.Lookup(id); ok {
			p.Platform, p.Commands = id, driver.DefaultCommands(id)
		}
	}
	return u.Render(w, r, http.StatusOK, "templates_form.html", keyInvTitleNewTemplate, p.withPlatforms())
}

func (u *handlers) pathTemplate(r *http.Request) (db.Template, error) {
	id, err := core.PathID(r)
	if err != nil {
		return db.Template{}, err
	}
	return u.Store.GetTemplate(r.Context(), id)
}

func (u *handlers) templateDetail(w http.ResponseWriter, r *http.Request) error {
	t, err := u.pathTemplate(r)
	if err != nil {
		return err
	}
	p := templateFormPage{Name: t.Name, Platform: t.Platform, Commands: t.Commands, Notice: core.Notice(r, templateNotices)}
	return u.renderTemplateForm(w, r, http.StatusOK, t, p)
}

// renderTemplateForm shows stored template t with p's fields (as stored
// or as typed).
func (u *handlers) renderTemplateForm(w http.ResponseWriter, r *http.Request, status int, t db.Template, p templateFormPage) error {
	ctx := r.Context()
	used, err := u.Store.DevicesUsingTemplates(ctx, core.SessionOf(r).Scope(), []int64{t.ID})
	if err != nil {
		return err
	}
	if p.InUse, err = u.Store.TemplateInUse(ctx, t.ID); err != nil {
		return err
	}
	p.ID, p.Heading, p.Devices, p.UpdatedAt = t.ID, t.Name, used[t.ID], t.UpdatedAt
	return u.Render(w, r, status, "templates_form.html", keyInvTitleTemplate, p.withPlatforms())
}

// readTemplateForm reads and checks the form: the template as it will be
// stored (blank commands become the platform's defaults, as in the public
// API's commandsOrDefault), or the message key of what to correct.
func readTemplateForm(r *http.Request) (templateFormPage, string, []any) {
	name, nameFits := core.Field(r, "name", invMaxName)
	commands := strings.ReplaceAll(r.PostFormValue("commands"), "\r\n", "\n")
	p := templateFormPage{Name: strings.TrimSpace(name), Platform: r.PostFormValue("platform"), Commands: commands}
	_, known := driver.Lookup(p.Platform)
	switch {
	case p.Name == "":
		return p, keyInvNameMissing, nil
	case !nameFits:
		return p, keyInvNameTooLong, []any{invMaxName}
	case !known:
		return p, keyInvTplPlatformMissing, nil
	case len(commands) > invMaxCommands:
		return p, keyInvTplCommandsTooLong, []any{invMaxCommands / 1024}
	}
	if strings.TrimSpace(commands) == "" {
		p.Commands = driver.DefaultCommands(p.Platform)
	}
	return p, "", nil
}

func (u *handlers) createTemplate(w http.ResponseWriter, r *http.Request) error {
	p, bad, args := readTemplateForm(r)
	if bad != "" {
		p.Error, p.Args = bad, args
		return u.Render(w, r, http.StatusUnprocessableEntity, "templates_form.html", keyInvTitleNewTemplate, p.withPlatforms())
	}
	t, err := u.Store.CreateTemplate(r.Context(), db.Template{Name: p.Name, Platform: p.Platform, Commands: p.Commands})
	if err != nil {
		return err
	}
	u.Audit(r, "template.create", "template", t.ID, map[string]any{"name": t.Name, "platform": t.Platform})
	core.RedirectNotice(w, r, "/templates", "created")
	return nil
}

func (u *handlers) updateTemplate(w http.ResponseWriter, r *http.Request) error {
	stored, err := u.pathTemplate(r)
	if err != nil {
		return err
	}
	p, bad, args := readTemplateForm(r)
	if bad != "" {
		p.Error, p.Args = bad, args
		return u.renderTemplateForm(w, r, http.StatusUnprocessableEntity, stored, p)
	}
	var fields []string
	t, err := u.Store.UpdateTemplate(r.Context(), stored.ID, func(t *db.Template) error {
		fields = nil // the store may run this again (a transaction retried)
		for _, f := range []struct {
			name     string
			old, new *string
		}{{"name", &t.Name, &p.Name}, {"platform", &t.Platform, &p.Platform}, {"commands", &t.Commands, &p.Commands}} {
			if *f.old != *f.new {
				*f.old, fields = *f.new, append(fields, f.name)
			}
		}
		if len(fields) == 0 {
			return invErrNoChange
		}
		return nil
	})
	switch {
	case errors.Is(err, invErrNoChange):
		core.RedirectNotice(w, r, "/templates/"+strconv.FormatInt(stored.ID, 10), "unchanged")
		return nil
	case err != nil:
		return err
	}
	u.Audit(r, "template.update", "template", t.ID, map[string]any{"fields": fields, "name": t.Name, "platform": t.Platform})
	core.RedirectNotice(w, r, "/templates", "updated")
	return nil
}

// deleteTemplate removes a template. Devices that use it would fall back
// to their platform's default commands (PRODUCT §3; the schema sets their
// template to none), so while any does, the form must confirm that with
// its "fall back" box; without it the delete is refused and says why.
func (u *handlers) deleteTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := u.pathTemplate(r)
	if err != nil {
		return err
	}
	inUse, err := u.Store.TemplateInUse(r.Context(), t.ID)
	if err != nil {
		return err
	}
	if inUse && !core.Checked(r, "fallback") {
		p := templateFormPage{Name: t.Name, Platform: t.Platform, Commands: t.Commands, Error: keyInvTplInUse, Args: []any{t.Name}}
		return u.renderTemplateForm(w, r, http.StatusConflict, t, p)
	}
	if err := u.Store.DeleteTemplate(r.Context(), t.ID); err != nil {
		return err
	}
	u.Audit(r, "template.delete", "template", t.ID, map[string]any{"name": t.Name, "devices_fell_back": inUse})
	core.RedirectNotice(w, r, "/templates", "deleted")
	return nil
}
