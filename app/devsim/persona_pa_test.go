package devsim

func init() {
	// AireOS lists the rogue devices it hears; PowerConnect counts an
	// sFlow lease down.
	perShowVolatile["cisco_wlc"] = true
	perShowVolatile["dell_powerconnect"] = true
}
