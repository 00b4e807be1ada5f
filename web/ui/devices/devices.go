// Package devices is the room of the devices and their history: the
// list (filters, paging, "back up now" for a device, a selection or a
// group), the create and edit forms (the rules of app/inventory, as the
// public API applies them), the CSV import (all or nothing) and export
// (which re-imports), the router.db import of Oxidized and RANCID
// (app/importer), and one device's page: its history, each version, the
// diff of two, and the confirmations of a changed host key or address.
package devices

import (
	"net/http"

	"backupd/web/ui/core"
)

// handlers are the devices pages.
type handlers struct{ *core.UI }

// Mount registers the devices list and the device pages on mux.
func Mount(mux *http.ServeMux, c *core.UI) {
	u := &handlers{c}
	// The list: filters, paging, create / edit / delete, back up now, CSV
	// import and export.
	u.MountPage(mux, "GET "+core.PathDevices, "devices.view", u.devicesList)
	mux.Handle("GET /devices/new", u.Page("devices.create", u.devicesNewForm))
	mux.Handle("POST /devices", u.Page("devices.create", u.devicesCreate))
	mux.Handle("GET /devices/{id}/edit", u.Page("devices.update", u.devicesEditForm))
	mux.Handle("POST /devices/{id}/edit", u.Page("devices.update", u.devicesUpdate))
	mux.Handle("POST /devices/{id}/delete", u.Page("devices.delete", u.devicesDelete))
	mux.Handle("POST /devices/backup", u.Page("backups.create", u.devicesBackup))
	mux.Handle("GET /devices/import", u.Page("devices.create", u.devicesImportForm))
	mux.Handle("POST /devices/import", u.devicesUploadBody(u.Page("devices.create", u.devicesImport)))
	mux.Handle("POST /devices/import/router-db", u.devicesUploadBody(u.Page("devices.create", u.devicesImportRouterDB)))
	mux.Handle("GET /devices/sample.csv", u.Page("devices.create", u.devicesSample))
	mux.Handle("GET /devices/export", u.Page("devices.view", u.devicesExport))

	// One device: its history, versions, diffs, host key and address.
	mux.Handle("GET /devices/{id}", u.Page("devices.view", u.deviceDetail))
	mux.Handle("GET /devices/{id}/versions/{backup}", u.Page("backups.view", u.deviceVersion))
	mux.Handle("GET /devices/{id}/versions/{backup}/raw", u.Page("backups.view", u.deviceVersionRaw))
	mux.Handle("GET /devices/{id}/versions/{backup}/log", u.Page("backups.view", u.deviceLog))
	mux.Handle("GET /devices/{id}/diff", u.Page("backups.view", u.deviceDiff))
	mux.Handle("GET /devices/{id}/diff/raw", u.Page("backups.view", u.deviceDiffRaw))
	mux.Handle("GET /api/devices/{id}/versions/{backup}/lines", u.API("backups.view", u.apiVersionLines))
	mux.Handle("POST /devices/{id}/host-key/accept", u.Page("devices.update", u.acceptDeviceHostKey))
	mux.Handle("POST /devices/{id}/address/confirm", u.Page("devices.update", u.confirmDeviceAddress))
}

// Bounds of the list, the selection and the import.
const (
	devicesListPath   = core.PathDevices
	devicesJobsActive = core.PathJobs + "?state=active"
	devicesPerPage    = 50
	devicesMaxQuery   = 128
	// devicesMaxSelection bounds "back up selected": a page holds 50; a
	// whole group goes by group_id, which has no bound.
	devicesMaxSelection = 1000
	devicesImportBytes  = 5 << 20
	devicesImportRows   = 20_000
	// devicesImportShown is how many problems of a refused import the page
	// lists; it counts the rest.
	devicesImportShown = 100
	devicesExportPage  = 1000
	// devicesMaxChangedDays bounds "changed in the last N days": ten years.
	devicesMaxChangedDays = 3650
)
