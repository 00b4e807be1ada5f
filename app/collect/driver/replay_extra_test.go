package driver

// More recordings of real devices from Oxidized's device-simulation
// examples (testdata/recordings/README.md). These files name each command
// without its line end (the simulator adds it), and may carry the
// expected backup under an extra top-level key, oxidized_output, which the
// loader ignores.
func init() {
	addCaptures(
		// pfSense CE 2.7.2 over SSH exec: config.xml as the default command
		// reads it, then the release file.
		capture{file: "pfsense_CE_2.7.2", platform: "pfsense", exec: true,
			config:  "cat /cf/conf/config.xml",
			unknown: "sh: show: not found\n",
			wantLines: []string{
				"<?xml version=\"1.0\"?>",
				"\t\t<hostname>pfSense</hostname>",
				"\t\t\t<bcrypt-hash>$2b$10$13u6qwCOwODv34GyCMgdWub6oQF3RX0rG7c3d3X4JvzuEmAXLYDd2</bcrypt-hash>",
				"\t\t\t<ipaddr>192.168.248.254</ipaddr>",
				"</pfsense>",
			}},
		// Cumulus Linux (NVUE) in bash after a login banner with a cowsay
		// drawing (backslashes, parentheses) and bracketed-paste switches
		// around the prompt. Cumulus never pages.
		capture{file: "cumulus_with-motd", platform: "cumulus_linux",
			wantLines: []string{"    version: Cumulus Linux 5.9.2", "      hostname: spine1-nyc2", "                remote-as: external"}},
	)
}
