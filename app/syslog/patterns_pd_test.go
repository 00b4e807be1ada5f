package syslog

// Nokia SR OS. The event names and the body of cli_config_io and
// ssh_user_logout records are those a public SR OS log-parsing guide
// quotes from real nodes (with the TIMETRA-SYSTEM-MIB notification names
// tmnxConfigModify/Create/Delete); the syslog header in front of them
// ("TMNX: <sequence> <router> ") follows the SR OS log guide's syslog
// format, so the lines are composed.
func init() {
	samples = append(samples,
		sample{"SR OS log-parsing guide (composed header)", "<188>Nov 25 10:11:12 192.0.2.10 TMNX: 1234 Base USER-WARNING-cli_config_io-2011 [user_7a0224ca]:  User from 198.51.100.142: host-f43b299e>config>system#  ptp", "sros-cli-config-io"},
		sample{"SR OS log-parsing guide (composed header)", "<188>Nov 25 10:11:13 192.0.2.10 TMNX: 1235 Base USER-WARNING-cli_config_io-2011 [user_7a0224ca]:  User from 198.51.100.142: host-f43b299e>config>system#  exit", ""},
		sample{"TIMETRA-SYSTEM-MIB event name (composed line)", "<187>Nov 25 10:11:14 192.0.2.10 TMNX: 1236 Base SYSTEM-MINOR-tmnxConfigModify-2006 [CONFIG]:  Configuration modified", "sros-config-event"},
		sample{"SR OS log-parsing guide (composed header)", "<188>Nov 25 10:11:15 192.0.2.10 TMNX: 1237 Base SECURITY-MINOR-ssh_user_logout-2010 [user_575b9419]:  User user_575b9419 from 172.25.220.157 logged out", ""},
		sample{"SR OS log-parsing guide (composed header)", "<188>Nov 25 10:11:16 192.0.2.10 TMNX: 1238 Base USER-MINOR-cli_user_login-2001 [user_575b9419]:  User from 172.25.220.157 logged in", ""},
	)
}
