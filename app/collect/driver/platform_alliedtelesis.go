package driver

// Allied Telesis AlliedWare Plus.
//
// AlliedWare Plus is Cisco-like: "awplus>" and "awplus#", enable (a
// privilege-15 user gets "#" without a password), "terminal length 0"
// for the session, " --More-- " and "% Invalid input detected at '^'
// marker.". Its running configuration has no time stamps or counters, so
// there are no noise rules.
//
// Written from the AlliedWare Plus command reference; there is no public
// capture of an AlliedWare Plus session.
func init() {
	awp := cisco()
	awp.PagingOff = []string{"terminal length 0"}
	Register(Platform{
		ID: "alliedtelesis_awplus", Name: "Allied Telesis AlliedWare Plus", Vendor: "Allied Telesis",
		Aliases:         []string{"awplus", "alliedware"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        awp,
		Notes:           "Passwords are shown hashed (service password-encryption), as the device stores them.",
	})
}
