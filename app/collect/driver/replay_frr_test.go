package driver

// FRR's vtysh over SSH, recorded from the real FRR 8.4.4 that
// internal/testfrr starts (testdata/recordings/README.md, "Recorded
// here"). vtysh never pages. The session also changes the configuration:
// its configuration-mode prompts come and go between the show commands,
// and the errors it answers are of both kinds, "% ..." and a daemon that
// is not running.
func init() {
	addCaptures(
		capture{file: "frr_8.4.4_vtysh_ssh", platform: "frr", configExits: true,
			wantLines: []string{"frr version 8.4.4", "hostname r1", " neighbor 192.0.2.20 password s3cret-bgp", "end"},
			rejected: []string{"show b", "sh", "foo bar", "neighbor 192.0.2.31 description no-such-peer",
				"ip route 192.0.2.128/25 192.0.2.1"}},
	)
}
