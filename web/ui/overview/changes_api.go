package overview

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"backupd/web"
	"backupd/web/ui/core"
)

// GET /api/changes: the Changes page's list for the web interface's
// scripts, with the page's parameters, checked strictly.

// changeItem is one change as the internal API gives it.
type changeItem struct {
	DeviceID   int64     `json:"device_id"`
	DeviceName string    `json:"device_name"`
	BackupID   string    `json:"backup_id"`
	At         time.Time `json:"at"`
	// AtText is At as the page shows it, in the configured time zone.
	AtText     string `json:"at_text"`
	DeviceURL  string `json:"device_url"`
	VersionURL string `json:"version_url"`
	DiffURL    string `json:"diff_url"`
}

// changesParamProblem names the first parameter of q that the page would
// quietly replace by its default, with what it must be.
func changesParamProblem(q url.Values) (field, message string) {
	if r := q.Get("range"); q.Has("range") && r != changesCustom &&
		!slices.ContainsFunc(changesRanges, func(c changesRange) bool { return c.Value == r }) {
		return "range", "must be 24h, 7d, 30d or custom"
	}
	if g := q.Get("group"); q.Has("group") {
		if n, err := strconv.ParseInt(g, 10, 64); err != nil || n < 1 {
			return "group", "must be a group id (a positive integer)"
		}
	}
	if p := q.Get("page"); q.Has("page") {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 1_000_000 {
			return "page", "must be a page number from 1 to 1000000"
		}
	}
	return "", ""
}

// changesDateProblems are the fields of a custom range's refusals.
var changesDateProblems = map[string][2]string{
	keyChangesBadFrom:      {"from", "must be a date (YYYY-MM-DD) with range=custom"},
	keyChangesBadTo:        {"to", "must be a date (YYYY-MM-DD) with range=custom"},
	keyChangesToBeforeFrom: {"to", "must not come before from"},
}

func (u *handlers) apiChanges(w http.ResponseWriter, r *http.Request) error {
	if field, msg := changesParamProblem(r.URL.Query()); field != "" {
		return web.FieldInvalid("query", field, msg)
	}
	f := parseChangesForm(r.URL.Query())
	q, bad := f.query(u.Now(), u.Location)
	if bad != "" {
		p := changesDateProblems[bad]
		return web.FieldInvalid("query", p[0], p[1])
	}
	items, total, err := u.Store.Changes(r.Context(), core.SessionOf(r).Scope(), q, changesPerPage, (f.Page-1)*changesPerPage)
	if err != nil {
		return err
	}
	out := struct {
		Items   []changeItem `json:"items"`
		Total   int          `json:"total"`
		Page    int          `json:"page"`
		PerPage int          `json:"per_page"`
	}{Items: []changeItem{}, Total: total, Page: f.Page, PerPage: changesPerPage}
	for _, c := range items {
		out.Items = append(out.Items, changeItem{DeviceID: c.DeviceID, DeviceName: c.DeviceName, BackupID: c.BackupID,
			At: c.At.UTC(), AtText: u.TimeText(c.At), DeviceURL: core.DevicePath(c.DeviceID),
			VersionURL: core.VersionPath(c.DeviceID, c.BackupID), DiffURL: core.DiffPath(c.DeviceID, c.BackupID)})
	}
	return core.WriteJSON(w, http.StatusOK, out)
}
