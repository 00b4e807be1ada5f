package devsim

func init() {
	// FASTPATH prints the uptime (and EFOS the clock, EdgeSwitch the SNTP
	// time) at the top of every running-config; Onyx the generation time.
	for _, id := range []string{"broadcom_efos", "ubiquiti_edgeswitch", "netgear_prosafe", "mellanox_onyx"} {
		perShowVolatile[id] = true
	}
}
