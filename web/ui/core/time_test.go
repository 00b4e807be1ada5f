package core

import (
	"testing"
	"time"
)

// The zone the interface names (the audit log's and API keys' "times are
// in …") is a zone a reader knows, never Go's "Local".
func TestDefaultZoneNamesAZone(t *testing.T) {
	for _, loc := range []*time.Location{time.Local, time.UTC, time.FixedZone("", 3600)} {
		u := &UI{Deps: Deps{Location: loc}}
		if z := u.DefaultZone(); z == "" || z == "Local" {
			t.Errorf("DefaultZone with %q = %q", loc, z)
		} else if _, err := time.LoadLocation(z); err != nil {
			t.Errorf("DefaultZone with %q = %q, which is no zone: %v", loc, z, err)
		}
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	if z := (&UI{Deps: Deps{Location: berlin}}).DefaultZone(); z != "Europe/Berlin" {
		t.Errorf("DefaultZone with Europe/Berlin = %q", z)
	}
}
