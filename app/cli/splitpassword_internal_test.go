package cli

import (
	"net/url"
	"testing"
)

// splitPassword takes the password out of the URL given to pg_dump,
// whether before the @ or in a password= parameter, and keeps the rest.
func TestSplitPasswordTakesEveryPassword(t *testing.T) {
	for _, tc := range []struct{ raw, password string }{
		{"postgres://backupd:s3cr3t-pw@db.example:5432/backupd?sslmode=disable", "s3cr3t-pw"},
		{"postgres://backupd@db.example/backupd?password=s3cr3t-pw&sslmode=disable", "s3cr3t-pw"},
		{"postgres://db.example/backupd?sslmode=disable&password=s3cr3t-pw", "s3cr3t-pw"},
		{"postgres://backupd:old@db.example/backupd?password=s3cr3t-pw&sslmode=disable", "s3cr3t-pw"},
		{"postgres://backupd@db.example/backupd?sslmode=disable", ""},
	} {
		rest, password, err := splitPassword(tc.raw)
		if err != nil {
			t.Fatalf("splitPassword(%q): %v", tc.raw, err)
		}
		if password != tc.password {
			t.Errorf("splitPassword(%q) password = %q, want %q", tc.raw, password, tc.password)
		}
		u, err := url.Parse(rest)
		if err != nil {
			t.Fatalf("splitPassword(%q) = %q: %v", tc.raw, rest, err)
		}
		if _, ok := u.User.Password(); ok || u.Query().Has("password") {
			t.Errorf("splitPassword(%q) = %q: a password is left in the URL", tc.raw, rest)
		}
		if u.Query().Get("sslmode") != "disable" || u.Host == "" || u.Path != "/backupd" {
			t.Errorf("splitPassword(%q) = %q: the rest of the URL is not kept", tc.raw, rest)
		}
	}
}
