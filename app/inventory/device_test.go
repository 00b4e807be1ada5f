package inventory

import "testing"

// A host is an IP address or a DNS name; digits and dots that are not an
// IPv4 address ("999.1.1.1") are neither, and say so.
func TestCheckHost(t *testing.T) {
	for host, ok := range map[string]bool{
		"192.0.2.1": true, "2001:db8::1": true, "router.example.net": true, "core-1": true, "r1.dc1.": true, "10.0.0.1x": true,
		"999.1.1.1": false, "256.0.0.1": false, "010.1.1.1": false, "10.1.1": false, "1.2.3.4.5": false, "12345": false, "1.2.3.4.": false,
		"bad host": false, "": false,
	} {
		got, fe := CheckHost(" " + host + " ")
		if (fe == nil) != ok || got != host {
			t.Errorf("CheckHost(%q) = %q, %v; want ok %v", host, got, fe, ok)
		}
		if NumericHost(host) && (fe == nil || fe.Problem != BadHost || fe.Message != "is not an IPv4 address (four numbers from 0 to 255, without leading zeros), and a DNS name does not end in a number") {
			t.Errorf("CheckHost(%q): %v", host, fe)
		}
	}
}
