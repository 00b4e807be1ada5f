package schedules

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"backupd/app/backup"
	"backupd/db"
	"backupd/web"
	"backupd/web/ui/core"
)

// The schedule form's live help: the next fire times of an expression,
// and the devices its device target may name.

// schedulePreviewOf lists the next fire times of cron in zone tz from
// now, with a plain description of the expression when it has a common
// shape.
func (u *handlers) schedulePreviewOf(lang, cron, tz string) schedulePreview {
	p := schedulePreview{Timezone: tz}
	runs, err := backup.NextRuns(cron, tz, u.Now(), schedulePreviewRuns)
	if err != nil {
		p.Error, p.Args = keySchedPreviewInvalid, []any{err.Error()}
		return p
	}
	p.Description = u.describeCron(lang, cron)
	for _, t := range runs {
		p.Runs = append(p.Runs, u.scheduleRunAt(lang, t))
	}
	return p
}

// scheduleRunAt writes a fire time in its own zone: "Mon 2026-01-05 06:30
// CET", the zone as its abbreviation or, when it has none, its offset.
func (u *handlers) scheduleRunAt(lang string, t time.Time) scheduleRun {
	abbr, offset := t.Zone()
	if abbr == "" || abbr[0] == '+' || abbr[0] == '-' {
		sign := '+'
		if offset < 0 {
			sign, offset = '-', -offset
		}
		abbr = fmt.Sprintf("UTC%c%02d:%02d", sign, offset/3600, offset%3600/60)
	}
	day := u.Text(lang, keySchedDayShort[t.Weekday()])
	return scheduleRun{At: t, Text: day + " " + t.Format("2006-01-02 15:04") + " " + abbr}
}

// previewJSON is the answer of GET /api/schedules/preview.
type previewJSON struct {
	Description string        `json:"description"`
	Timezone    string        `json:"timezone"`
	Runs        []previewTime `json:"runs"`
}

type previewTime struct {
	At   string `json:"at"`
	Text string `json:"text"`
}

// apiSchedulePreview is the form's live preview: the next fire times of
// ?cron= in ?tz= (the default zone when empty). A bad expression or zone
// is a 422 naming the field.
func (u *handlers) apiSchedulePreview(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	cron := strings.Join(strings.Fields(q.Get("cron")), " ")
	tz := strings.TrimSpace(q.Get("tz"))
	if tz == "" {
		tz = u.DefaultZone()
	}
	runs, err := backup.NextRuns(cron, tz, u.Now(), schedulePreviewRuns)
	if err != nil {
		field, msg, ok := strings.Cut(err.Error(), ": ")
		if !ok || (field != "cron" && field != "timezone") {
			field, msg = "cron", err.Error()
		}
		if field == "timezone" {
			field = "tz"
		}
		// The message itself, not a generic one, so that the page's script
		// can show it as it is.
		return web.Validation(field+": "+msg, web.FieldError{Location: "query", Field: field, Message: msg})
	}
	lang := core.LangOf(r)
	out := previewJSON{Description: u.describeCron(lang, cron), Timezone: tz, Runs: []previewTime{}}
	for _, t := range runs {
		out.Runs = append(out.Runs, previewTime{At: t.Format(time.RFC3339), Text: u.scheduleRunAt(lang, t).Text})
	}
	return core.WriteJSON(w, http.StatusOK, out)
}

// deviceChoice is one answer of GET /api/schedules/devices.
type deviceChoice struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Host string `json:"host"`
}

// apiScheduleDevices finds devices by name or host for the form's device
// target: the first few the user sees, never the whole inventory.
func (u *handlers) apiScheduleDevices(w http.ResponseWriter, r *http.Request) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if len([]rune(q)) > 128 {
		return web.FieldInvalid("query", "q", "must be at most 128 characters")
	}
	out := struct {
		Items []deviceChoice `json:"items"`
		Total int            `json:"total"`
	}{Items: []deviceChoice{}}
	if q == "" {
		return core.WriteJSON(w, http.StatusOK, out)
	}
	devices, total, err := u.Store.ListDevices(r.Context(), core.SessionOf(r).Scope(), db.DeviceFilter{Query: q}, scheduleSearchLimit, 0)
	if err != nil {
		return err
	}
	out.Total = total
	for _, d := range devices {
		out.Items = append(out.Items, deviceChoice{ID: d.ID, Name: d.Name, Host: d.Host})
	}
	return core.WriteJSON(w, http.StatusOK, out)
}
