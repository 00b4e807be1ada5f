package devsim

// Nokia SR OS stamps admin display-config with when it was generated and
// finished; VOSS heads show running-config with the date.
func init() {
	perShowVolatile["nokia_sros"] = true
	perShowVolatile["extreme_voss"] = true
}
