package driver

func init() {
	// Opengear console servers (ACM, CM, IM; not the Lighthouse / OM
	// "ogcli" generation) run embedded Linux with a BusyBox shell; "config
	// -g config" prints the whole configuration tree as "config.<path>
	// <value>" lines, password hashes included, which "config -s" sets
	// back. Collected with SSH exec requests, as Opengear documents for
	// scripts. Written from the Opengear User Manual ("config" command);
	// no public capture.
	Register(Platform{
		ID: "opengear", Name: "Opengear console server", Vendor: "Opengear",
		Aliases:         []string{"opengear"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("config -g config"),
		Dialogue: Dialogue{
			Exec:         true,
			Prompt:       re(`^[\w.\-]+@[\w.\-]+:[^\s]{0,128} ?[$#]$`),
			CommandError: re(`^(-?sh: )?\S+: (command )?not found$`),
		},
		Notes: "Collects \"config -g config\" over SSH exec. Operations Manager and Lighthouse units use \"ogcli export\" instead: give them a template with it.",
	})
}
