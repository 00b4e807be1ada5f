package devsim

func init() {
	// config.ini's header names the time it was generated: every
	// download.
	perShowVolatile["apc_aos"] = true
}
