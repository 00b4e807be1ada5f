package changesets

import (
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"backupd/app/inventory"
	"backupd/app/restore"
	"backupd/db"
	"backupd/web/ui/core"
)

// The form of a new change set: its name, the body (a snippet, or a
// template with the device's fields and the variables), the devices (a
// group of the user's and/or names one a line, each resolved within the
// user's groups), how many run at once and after how many failed devices
// it stops. Creating it runs the dry run (app/restore) and leads to its
// page; anything refused shows the form again as typed, with a sentence
// by each field at fault.

// Defaults and bounds of the form.
const (
	defaultConcurrency = 5
	defaultStopAfter   = 1
	// maxVariablesChars bounds the variables field; maxDevicesChars the
	// device names (5000 names of 64 characters, with their line ends).
	maxVariablesChars = 64 << 10
	maxDevicesChars   = 330 << 10
	// maxMissingShown bounds the unknown names a refusal lists.
	maxMissingShown = 20
)

// setForm is the form as typed.
type setForm struct {
	Name, Body  string
	Template    bool
	Variables   string
	GroupID     int64
	Devices     string
	Concurrency string
	StopAfter   string
}

// formPage is the data of changeset_new.html.
type formPage struct {
	Form   setForm
	Groups []groupOption
	Errors core.FormErrors
	// Refusal is a sentence about the whole form (the service does not
	// run here).
	Refusal        string
	MaxConcurrency int
	MaxDevices     int
}

// groupOption is a device group of the user's, as the select shows it.
type groupOption struct {
	ID       int64
	Name     string
	Selected bool
}

func (u *handlers) newForm(w http.ResponseWriter, r *http.Request) error {
	f := setForm{Concurrency: strconv.Itoa(defaultConcurrency), StopAfter: strconv.Itoa(defaultStopAfter)}
	return u.showForm(w, r, http.StatusOK, f, core.FormErrors{}, "")
}

// showForm renders the form with f as typed and its problems.
func (u *handlers) showForm(w http.ResponseWriter, r *http.Request, status int, f setForm, errs core.FormErrors, refusal string) error {
	groups, err := u.groupsInScope(r)
	if err != nil {
		return err
	}
	for i := range groups {
		groups[i].Selected = groups[i].ID == f.GroupID
	}
	p := formPage{Form: f, Groups: groups, Errors: errs, Refusal: refusal, MaxConcurrency: restore.MaxConcurrency,
		MaxDevices: db.ChangeSetTargetsMax}
	return u.Render(w, r, status, "changeset_new.html", keyTitleNew, p)
}

// groupsInScope are the device groups the user sees, depth first, named
// by their paths.
func (u *handlers) groupsInScope(r *http.Request) ([]groupOption, error) {
	tree, err := u.GroupTree(r.Context())
	if err != nil {
		return nil, err
	}
	scope := core.SessionOf(r).Scope()
	var out []groupOption
	for _, g := range tree.Ordered() {
		if tree.Covers(scope, g.ID) {
			out = append(out, groupOption{ID: g.ID, Name: tree.PathName(g.ID)})
		}
	}
	return out, nil
}

// varKey is a variable's name: what {{.Vars.KEY}} can name.
var varKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseVariables reads KEY=VALUE lines (blank lines and # comments
// skipped; the value as typed after the first "=", its ends trimmed).
func parseVariables(text string, errs *core.FormErrors) map[string]string {
	vars := map[string]string{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok:
			errs.Add("variables", keyErrVarsLine, i+1)
			return nil
		case !varKey.MatchString(k):
			errs.Add("variables", keyErrVarsKey, i+1, k)
			return nil
		}
		if _, seen := vars[k]; seen {
			errs.Add("variables", keyErrVarsTwice, k)
			return nil
		}
		vars[k] = strings.TrimSpace(v)
	}
	return vars
}

// readForm reads the form as typed and checks each field on its own.
func readForm(r *http.Request, errs *core.FormErrors) (f setForm, vars map[string]string, concurrency, stopAfter int) {
	var fits bool
	f.Name, fits = core.Field(r, "name", db.ChangeSetNameMax)
	switch {
	case strings.TrimSpace(f.Name) == "":
		errs.Add("name", keyErrNameRequired)
	case !fits:
		errs.Add("name", keyErrNameTooLong, db.ChangeSetNameMax)
	}
	f.Body, _ = core.Field(r, "body", db.ChangeSetBodyMax)
	switch {
	case strings.TrimSpace(f.Body) == "":
		errs.Add("body", keyErrBodyRequired)
	case len(f.Body) > db.ChangeSetBodyMax:
		errs.Add("body", keyErrBodyTooLong, db.ChangeSetBodyMax>>10)
	}
	f.Template = core.Checked(r, "template")
	f.Variables, fits = core.Field(r, "variables", maxVariablesChars)
	if !fits {
		errs.Add("variables", keyErrVarsTooLong, maxVariablesChars)
	} else {
		vars = parseVariables(f.Variables, errs)
	}
	if g := strings.TrimSpace(r.PostFormValue("group")); g != "" && g != "0" {
		id, err := strconv.ParseInt(g, 10, 64)
		if err != nil || id < 1 {
			errs.Add("group", keyErrUnknownGroup)
		}
		f.GroupID = id
	}
	f.Devices, fits = core.Field(r, "devices", maxDevicesChars)
	if !fits {
		errs.Add("devices", keyErrDevicesTooLong, inventory.MaxTargetDevices)
	}
	f.Concurrency = strings.TrimSpace(r.PostFormValue("concurrency"))
	concurrency, err := strconv.Atoi(f.Concurrency)
	if err != nil || concurrency < 1 || concurrency > restore.MaxConcurrency {
		errs.Add("concurrency", keyErrConcurrency, restore.MaxConcurrency)
	}
	f.StopAfter = strings.TrimSpace(r.PostFormValue("stop_after"))
	stopAfter, err = strconv.Atoi(f.StopAfter)
	if err != nil || stopAfter < 0 || stopAfter > db.ChangeSetTargetsMax {
		errs.Add("stop_after", keyErrStopAfter, db.ChangeSetTargetsMax)
	}
	return f, vars, concurrency, stopAfter
}

// devicesOf resolves the devices the form names, within the user's
// groups: the enabled devices of the group (and the groups below it),
// then the devices named in the order typed, each once.
func (u *handlers) devicesOf(r *http.Request, f setForm, groups []groupOption, errs *core.FormErrors) ([]int64, error) {
	ctx := r.Context()
	var ids []int64
	seen := map[int64]bool{}
	add := func(id int64) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if f.GroupID != 0 && !errs.Has("group") {
		var group *groupOption
		for i := range groups {
			if groups[i].ID == f.GroupID {
				group = &groups[i]
			}
		}
		if group == nil {
			// Not a group of the user's: as unknown as one that does not
			// exist.
			errs.Add("group", keyErrUnknownGroup)
		} else {
			in, err := u.Store.TargetDevices(ctx, db.ScheduleTargetGroups, []int64{f.GroupID})
			if err != nil {
				return nil, err
			}
			if len(in) == 0 {
				errs.Add("group", keyErrGroupEmpty, group.Name)
			}
			for _, id := range in {
				add(id)
			}
		}
	}
	if errs.Has("devices") {
		return nil, nil
	}
	names := inventory.TargetNames(f.Devices)
	if len(names) > inventory.MaxTargetDevices {
		errs.Add("devices", keyErrTooManyDevices, inventory.MaxTargetDevices)
		return nil, nil
	}
	if len(names) > 0 {
		refs, err := u.Store.ScheduleDevicesByName(ctx, core.SessionOf(r).Scope(), names)
		if err != nil {
			return nil, err
		}
		// In the order typed; a name of no device of the user's is as
		// unknown as one of no device at all.
		byName := make(map[string]int64, len(refs))
		for _, d := range refs {
			byName[strings.ToLower(d.Name)] = d.ID
		}
		var missing []string
		for _, n := range names {
			if id, ok := byName[strings.ToLower(n)]; ok {
				add(id)
			} else {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			shown := missing[:min(len(missing), maxMissingShown)]
			list := strings.Join(shown, ", ")
			if len(missing) > len(shown) {
				list += ", …"
			}
			errs.Add("devices", keyErrUnknownDevices, len(missing), list)
		}
	}
	switch {
	case errs.Has("group") || errs.Has("devices"):
	case len(ids) == 0:
		errs.Add("devices", keyErrNoDevices)
	case len(ids) > db.ChangeSetTargetsMax:
		errs.Add("devices", keyErrTooManyDevices, db.ChangeSetTargetsMax)
	}
	return ids, nil
}

func (u *handlers) create(w http.ResponseWriter, r *http.Request) error {
	var errs core.FormErrors
	f, vars, concurrency, stopAfter := readForm(r, &errs)
	groups, err := u.groupsInScope(r)
	if err != nil {
		return err
	}
	ids, err := u.devicesOf(r, f, groups, &errs)
	if err != nil {
		return err
	}
	if u.Restores == nil {
		return u.showForm(w, r, http.StatusServiceUnavailable, f, errs, keyErrNotRunning)
	}
	if !errs.Empty() {
		return u.showForm(w, r, http.StatusUnprocessableEntity, f, errs, "")
	}
	c, err := u.Restores.CreateChangeSet(r.Context(), u.RestoreActor(r), restore.NewChangeSet{Name: f.Name, Body: f.Body,
		Template: f.Template, Variables: vars, DeviceIDs: ids, Concurrency: concurrency, StopAfterFailures: stopAfter})
	var tmpl *restore.TemplateError
	var field *db.ErrInvalidField
	switch {
	case errors.As(err, &tmpl):
		// The parser's own words, after the page's sentence.
		errs.Add("body", keyErrTemplate, tmpl.Parse.Error())
		return u.showForm(w, r, http.StatusUnprocessableEntity, f, errs, "")
	case errors.As(err, &field):
		// A bound the form did not check first: the service's own words,
		// by the field they are about.
		switch {
		case field.Field == "body":
			errs.Add("body", keyErrBodyRefused, field.Message)
		default:
			errs.Add(formField(field.Field), keyErrStoreRefusedSet, field.Error())
		}
		return u.showForm(w, r, http.StatusUnprocessableEntity, f, errs, "")
	case err != nil:
		// A failure of the store; a dry run that failed after the set
		// was recorded leaves a draft, which its page offers to dry-run
		// again.
		return err
	}
	http.Redirect(w, r, core.ChangeSetPath(c.ID)+"?done=created", http.StatusSeeOther)
	return nil
}

// formField is the form's field a refusal of the store is about.
func formField(storeField string) string {
	switch storeField {
	case "name", "body", "concurrency":
		return storeField
	case "stop_after_failures":
		return "stop_after"
	case "variables":
		return "variables"
	}
	return "devices"
}
