package devices

// Messages of the router.db import's column map and of the lines it
// refuses so as not to misread or show them (app/importer).
const (
	keyDevicesRouterDBFieldCountBytes = "devices.routerdb.reason.field_count_bytes"
	keyDevicesRouterDBOtherDelimiter  = "devices.routerdb.reason.other_delimiter"
	keyDevicesRouterDBControl         = "devices.routerdb.reason.control"
	keyDevicesRouterDBBadIPv4         = "devices.routerdb.reason.bad_ipv4"
	keyDevicesRouterDBRancidColon     = "devices.routerdb.reason.rancid_colon"
	keyDevicesRouterDBShiftedIP       = "devices.routerdb.reason.shifted.ip"
	keyDevicesRouterDBShiftedHash     = "devices.routerdb.reason.shifted.hash"
	keyDevicesRouterDBShiftedSecret   = "devices.routerdb.reason.shifted.secret"
	keyDevicesRouterDBShiftedPlatform = "devices.routerdb.reason.shifted.platform"

	keyDevicesRouterDBLayoutDefault = "devices.routerdb.layout.default"
	keyDevicesRouterDBLayoutRancid3 = "devices.routerdb.layout.rancid3"
	keyDevicesRouterDBLayoutRancid2 = "devices.routerdb.layout.rancid2"
)
