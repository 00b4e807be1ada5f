package overview

import (
	"net/http"
	"time"

	"backupd/db"
	"backupd/web/ui/core"
)

// Dashboard bounds: the lists show the newest few, the chart a month.
const (
	dashboardListLimit = 10
	chartDays          = 30
)

// dashboardPage is the data of dashboard.html. Everything in it is
// limited to the user's device-group scope.
type dashboardPage struct {
	Counts db.DeviceCounts
	// Failing are the newest failures; FailingMore how many more there are.
	Failing     []db.FailingDevice
	FailingMore int
	// Changed are the newest changed configurations of the last 24 hours,
	// ChangedTotal all of them.
	Changed      []db.ChangedConfig
	ChangedTotal int
	ChangedMore  int
	Chart        backupChart
	GeneratedAt  time.Time
	// ChangesURL lists the changes ChangedTotal counts.
	ChangesURL string
}

// DevicePath and DiffPath are where a failing device's name and a
// change's time lead.
func (dashboardPage) DevicePath(id int64) string { return core.DevicePath(id) }

func (dashboardPage) DiffPath(deviceID int64, backupID string) string {
	return core.DiffPath(deviceID, backupID)
}

func (u *handlers) dashboard(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	scope := core.SessionOf(r).Scope()
	now := u.Now()
	var p dashboardPage
	var err error
	p.GeneratedAt, p.ChangesURL = now, ChangesPath()
	if p.Counts, err = u.Store.DeviceCountsInScope(ctx, scope); err != nil {
		return err
	}
	if p.Failing, err = u.Store.FailingDevices(ctx, scope, dashboardListLimit); err != nil {
		return err
	}
	p.FailingMore = max(p.Counts.Failing-len(p.Failing), 0)
	if p.Changed, p.ChangedTotal, err = u.Store.ChangedConfigsSince(ctx, scope, now.Add(-24*time.Hour), dashboardListLimit); err != nil {
		return err
	}
	p.ChangedMore = max(p.ChangedTotal-len(p.Changed), 0)
	days, err := u.Store.DailyBackupOutcomes(ctx, scope, dayBounds(now, u.Location, chartDays))
	if err != nil {
		return err
	}
	p.Chart = newBackupChart(days, u.Location)
	return u.Render(w, r, http.StatusOK, "dashboard.html", keyTitleDash, p)
}

// dayBounds returns the local midnights that cut the last n days (today
// included) in loc, n+1 of them, the last being tomorrow's. Days around a
// daylight-saving change are 23 or 25 hours long, as they were.
func dayBounds(now time.Time, loc *time.Location, n int) []time.Time {
	t := now.In(loc)
	y, m, d := t.Date()
	out := make([]time.Time, n+1)
	for i := range out {
		out[i] = time.Date(y, m, d-(n-1)+i, 0, 0, 0, 0, loc)
	}
	return out
}
