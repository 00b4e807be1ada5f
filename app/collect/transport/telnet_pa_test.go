package transport

import "testing"

// A bare "User:" on a line of its own asks for the username (AireOS,
// ArubaOS, Dell N-series); "user:" inside a sentence does not.
func TestUserPromptBareUser(t *testing.T) {
	for in, want := range map[string]bool{
		"\r\n(Cisco Controller)\r\nUser: ": true,
		"User:":                            true,
		"\r\n  User : ":                    true,
		"\r\nUser Name:":                   true,
		"\r\nAuthorized user: ":            false,
		"\r\nLast login user: admin":       false,
		"\r\nsuperuser:":                   false,
	} {
		if got := isUserPrompt([]byte(in)); got != want {
			t.Errorf("isUserPrompt(%q) = %v, want %v", in, got, want)
		}
	}
}
