package devsim

func init() {
	// The Network-M3 export encrypts its secrets and its passphrase check
	// with a new salt at every export.
	perShowVolatile["eaton_network"] = true
	// NetScaler prints its ENCMTHD secrets encrypted anew at every show.
	perShowVolatile["citrix_netscaler"] = true
}
