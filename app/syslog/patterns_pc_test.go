package syslog

// F5 BIG-IP: mcpd's audit message 01070417 for configuration
// transactions, and near misses with the same message ID (a login audit
// relayed by httpd) or the same word (tmsh's own command audit, 01420002,
// which logs every command typed, "cd /" included). Lines from the test
// data of splunk/splunk-connect-for-syslog (tests/test_f5_bigip.py), with
// the <PRI> that test sends; where the test has a template, its
// {{ bsd }} timestamp and {{ host }} are filled in.
func init() {
	samples = append(samples,
		sample{"splunk-connect-for-syslog test_f5_bigip.py",
			`<166>Apr 07 11:39:53 192.168.128.217 notice mcpd[6760]: 01070417:5: AUDIT - client Unknown, user admin - transaction #29194914-3 - object 0 - modify { gtm_rule { gtm_rule_name "/Common/Splunk_DNS_REQUEST" gtm_rule_definition "when DNS_REQUEST {     set client_addr [IP::client_addr]     set dns_server_addr [IP::local_addr]     set question_name [DNS::question name]     set question_class [DNS::question class]     set question_type [DNS::question type]     set data_center [whereami]     set geo_information [join [whereis $client_addr] ;]     set gtm_server [whoami]     set wideip [wideip name]     set dns_len [DNS::len]      set hsl [HSL::open -proto UDP -pool Pool-syslog]     HSL::send $hsl \"<190>,f5_irule=Splunk-iRule-DNS_REQUEST,src_ip=10.0.0.1,dns_server_ip=10.0.0.2,src_geo_info=dummy_geo_information,question_name=test.dummy_url1.com,question_class=IN,question_type=AB,data_center=/Common/Dummy-data-center-01,gtm_server=/Common/GTM-01,wideip=/Common/home.url.com,dns_len=34 } } [Status=Command OK]`,
			"f5-mcpd-audit"},
		sample{"splunk-connect-for-syslog test_f5_bigip.py",
			`<166>Dec 22 15:20:20 slot1/bigip1 notice httpd[31905]: 01070417:5: AUDIT - user admin - RAW: httpd(mod_auth_pam): user=admin(admin) partition=[All] level=Administrator tty=/sbin/nologin host=192.168.4.39 attempts=1 start="Mon Dec 22 14:04:15 2014" end="Mon Dec 22 15:20:20 2014".`,
			""},
		sample{"splunk-connect-for-syslog test_f5_bigip.py",
			`<166>Dec 22 15:20:20 slot1/bigip1 notice tmsh[16322]: 01420002:5: AUDIT - pid=16322 user=root folder=/ module=(tmos)# status=[Command OK] cmd_data=cd / ;`,
			""},
		sample{"splunk-connect-for-syslog test_f5_bigip.py",
			`<166>Jan 17 04:42:37 SV5-F5-5600-2.splunk.com notice mcpd[10653]: 01070638:5: Pool /Common/infra-docs-pool member /Common/go_web3:4000 monitor status down. [ /Common/tcp_half_open: down; last error:  ]  [ was up for 837hrs:31mins:36sec ]`,
			""},
	)
}
