package syslog

// Citrix NetScaler / ADC audit messages.
func init() {
	samples = append(samples,
		// logstash-plugins/logstash-patterns-core spec/patterns/citrixadc_spec.rb:
		// a real CMD_EXECUTED line. Saving the configuration changes
		// nothing that runs, so it is a near miss.
		sample{source: "logstash-patterns-core citrixadc_spec.rb",
			line:    `<134> 08/02/2020:14:53:24  vpx 0-PPE-0 : default CLI CMD_EXECUTED 1488010 0 :  User nsroot - Remote_ip 192.168.0.1 - Command "save ns config" - Status "Success"`,
			pattern: ""},
		// Composed on the layout of the line above (no verbatim line of a
		// configuration command was found).
		sample{source: "composed on citrixadc_spec.rb",
			line:    `<134> 11/25/2026:10:22:33  vpx 0-PPE-0 : default CLI CMD_EXECUTED 1488042 0 :  User nsroot - Remote_ip 192.168.0.1 - Command "add lb vserver vs-web HTTP 192.0.2.80 80" - Status "Success"`,
			pattern: "netscaler-cmd-executed"},
		sample{source: "composed on citrixadc_spec.rb",
			line:    `<134> 11/25/2026:10:22:40  vpx 0-PPE-0 : default CLI CMD_EXECUTED 1488043 0 :  User nsroot - Remote_ip 192.168.0.1 - Command "show ns runningConfig" - Status "Success"`,
			pattern: ""},
		sample{source: "composed on citrixadc_spec.rb",
			line:    `<134> 11/25/2026:10:22:45  vpx 0-PPE-0 : default CLI CMD_EXECUTED 1488044 0 :  User nsroot - Remote_ip 192.168.0.1 - Command "add lb vserver vs-web HTTP" - Status "ERROR: Invalid argument"`,
			pattern: ""},
	)
}
