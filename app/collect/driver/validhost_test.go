package driver

import "testing"

func TestValidHost(t *testing.T) {
	for h, want := range map[string]bool{
		"192.0.2.1": true, "2001:db8::1": true, "r1": true, "core-1.example.net": true,
		"r1.example.net.": true, "sw_2": true, "10.1.1.example": true,
		"": false, "999.1.1.1": false, "10.1.1": false, "010.1.1.1": false,
		"1.2.3.4.": false, "12345": false, "1.2.3.4.5": false, "-r1": false,
		"r1 .net": false, "a..b": false,
	} {
		if got := ValidHost(h); got != want {
			t.Errorf("ValidHost(%q) = %v, want %v", h, got, want)
		}
	}
}
