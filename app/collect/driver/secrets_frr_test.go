package driver

// FRR's secrets as vtysh writes them back (checked on FRR 8.4.4 for the
// BGP neighbour password in testfrr's configuration; the other forms are
// FRR's documented commands).
func init() {
	seed("frr", secretCases{
		Masked: []string{
			"password {S}",
			"enable password {S}",
			"password 8 {S}",
			" neighbor 192.0.2.20 password {S}",
			" neighbor PEERS password {S}",
			" ip ospf authentication-key {S}",
			" ip ospf message-digest-key 1 md5 {S}",
			" ipv6 ospf6 authentication keyid 1 sha256 key {S}",
			" isis password md5 {S}",
			" area-password clear {S}",
			" domain-password md5 {S}",
			" ip rip authentication string {S}",
			"  key-string {S}",
			// As a restore removes them (the session quotes the line).
			"no neighbor 192.0.2.20 password {S}",
			" no ip ospf authentication-key {S}",
			"no enable password {S}",
		},
		Plain: []string{
			"frr version 8.4.4",
			"service password-encryption",
			" neighbor 192.0.2.20 remote-as 64500",
			" neighbor 192.0.2.20 description transit-1",
			" ip ospf authentication message-digest",
			"key chain OSPF",
			" key 1",
			"  accept-lifetime 00:00:00 Jan 1 2024 infinite",
		},
	})
	// The neighbour password of the test router's configuration.
	recorded("frr_8.4.4_vtysh_ssh", "s3cret-bgp")
}
