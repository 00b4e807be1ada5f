package devices

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"backupd/app/collect/driver"
	"backupd/db"
	"backupd/db/queue"
	"backupd/web/ui/core"
)

// devicesRow is one device as the list shows it.
type devicesRow struct {
	db.Device
	Address      string
	PlatformName string
	GroupName    string
	GroupPath    string
	ZoneName     string
	LastBackup   time.Time
	// LastChanged is when the configuration last changed (zero: not
	// since the first backup).
	LastChanged time.Time
	// LastOK and LastFailed tell how the last backup ended (neither
	// before the first).
	LastOK, LastFailed bool
	// Job is the device's queued or running backup (State "" for none):
	// the list follows it until it ends.
	Job queue.ActiveJob
}

// devicesPage is the data of devices.html.
type devicesPage struct {
	Filter devicesFilter
	Rows   []devicesRow
	Pager  core.Pager
	// ListURL is this page without notices, where "back up" comes back to.
	ListURL   string
	ExportURL string
	Groups    []devicesGroupOption
	// FilterGroup is the filtered group's name, for "back up this group".
	FilterGroup string
	Platforms   []devicesPlatform
	// Zones are the filter's choices and the list has a Zone column only
	// when there is more than the local one, as the form offers them.
	Zones []db.Zone
	// Sources are the inventory sources, by name, for the Source and
	// Sync filters, shown only when there is one.
	Sources []db.InventorySource
	// Notice is a message key (with NoticeArgs) after a change;
	// NoticeJobs adds a link to the jobs page.
	Notice     string
	NoticeArgs []any
	NoticeJobs bool
}

func (u *handlers) devicesList(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	scope := core.SessionOf(r).Scope()
	f := devicesParseFilter(r.URL.Query())
	tree, err := u.GroupTree(ctx)
	if err != nil {
		return err
	}
	zones, err := u.Store.ListZones(ctx)
	if err != nil {
		return err
	}
	sources, err := u.Store.InventorySources(ctx)
	if err != nil {
		return err
	}
	p := devicesPage{Filter: f, Groups: devicesGroupOptions(tree, scope), Platforms: devicesPlatforms(), Sources: sources}
	zoneNames := map[int64]string{}
	if len(zones) > 1 {
		p.Zones = zones
		for _, z := range zones {
			zoneNames[z.ID] = z.Name
		}
	}
	if f.Error != "" {
		// A refused filter: the form shows it again with the reason,
		// and no list that would look filtered when it is not.
		p.Pager = core.PagerAt(devicesListPath, f.values(), 1, devicesPerPage, 0)
		p.ListURL, p.ExportURL = devicesListPath, "/devices/export"
		return u.Render(w, r, http.StatusBadRequest, "devices.html", keyTitleDevices, p)
	}
	now := u.Now()
	offset := (f.Page - 1) * devicesPerPage
	list, total, err := u.Store.ListDevices(ctx, scope, f.store(now), devicesPerPage, offset)
	if err != nil {
		return err
	}
	if pages := max((total+devicesPerPage-1)/devicesPerPage, 1); f.Page > pages {
		// Past the end (the last device of the last page was deleted, say):
		// show the last page rather than an empty one.
		f.Page = pages
		p.Filter.Page = f.Page
		offset = (f.Page - 1) * devicesPerPage
		if list, _, err = u.Store.ListDevices(ctx, scope, f.store(now), devicesPerPage, offset); err != nil {
			return err
		}
	}
	p.Pager = core.PagerAt(devicesListPath, f.values(), f.Page, devicesPerPage, total)
	p.ListURL = f.url(devicesListPath, f.Page)
	p.ExportURL = f.url("/devices/export", 1)

	// "Back up this group" only for a group of the user's scope.
	if slices.ContainsFunc(p.Groups, func(g devicesGroupOption) bool { return g.ID == f.GroupID }) {
		g, _ := tree.Group(f.GroupID)
		p.FilterGroup = g.Name
	}
	ids := make([]int64, len(list))
	for i, d := range list {
		ids[i] = d.ID
	}
	jobs, err := u.Store.ActiveJobs(ctx, ids)
	if err != nil {
		return err
	}
	p.Rows = make([]devicesRow, len(list))
	for i, d := range list {
		p.Rows[i] = devicesNewRow(d, tree)
		p.Rows[i].ZoneName = zoneNames[d.ZoneID]
		p.Rows[i].Job = jobs[d.ID]
	}
	p.Notice, p.NoticeArgs, p.NoticeJobs = devicesNotice(r.URL.Query())
	return u.Render(w, r, http.StatusOK, "devices.html", keyTitleDevices, p)
}

func devicesNewRow(d db.Device, groups core.GroupTree) devicesRow {
	row := devicesRow{Device: d, Address: net.JoinHostPort(d.Host, strconv.Itoa(d.Port)), PlatformName: d.Platform}
	if info, ok := driver.Lookup(d.Platform); ok {
		row.PlatformName = info.Name
	}
	if d.GroupID != nil {
		g, _ := groups.Group(*d.GroupID)
		row.GroupName, row.GroupPath = g.Name, groups.PathName(*d.GroupID)
	}
	if d.LastBackupAt != nil {
		if t, err := db.ParseTime(*d.LastBackupAt); err == nil {
			row.LastBackup = t
		}
	}
	if d.LastChangedAt != nil {
		if t, err := db.ParseTime(*d.LastChangedAt); err == nil {
			row.LastChanged = t
		}
	}
	if d.LastBackupSuccess != nil {
		row.LastOK, row.LastFailed = *d.LastBackupSuccess, !*d.LastBackupSuccess
	}
	return row
}

// devicesNotice is the message a change left for the list in its
// redirect's query.
func devicesNotice(q url.Values) (key string, args []any, jobs bool) {
	count := func(name string) (int, bool) {
		n, err := strconv.Atoi(q.Get(name))
		return n, err == nil && n >= 0
	}
	switch {
	case q.Get("created") != "":
		return keyDevicesNoticeCreated, nil, false
	case q.Get("updated") != "":
		return keyDevicesNoticeUpdated, nil, false
	case q.Get("deleted") != "":
		return keyDevicesNoticeDeleted, nil, false
	}
	if n, ok := count("imported"); ok {
		return keyDevicesNoticeImported, []any{n}, false
	}
	if n, ok := count("queued"); ok {
		switch n {
		case 0:
			return keyDevicesNoticeQueuedNone, nil, false
		case 1:
			return keyDevicesNoticeQueuedOne, nil, true
		}
		return keyDevicesNoticeQueued, []any{n}, true
	}
	return "", nil, false
}
