package cli_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"backupd/db"
)

// `backupd device accept-address` confirms the changed address of a
// device, so that its credential goes there, and says when there is
// nothing to confirm. The audit log names the credential.
func TestDeviceAcceptAddressCLI(t *testing.T) {
	data := storeDir(t)
	mustRun(t, call{}, "migrate", "up", "--data", data)
	ctx := context.Background()
	s := openStore(t, data)
	cred, err := s.CreateCredential(ctx, db.Credential{Name: "core", Username: "u"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.CreateDevice(ctx, db.Device{Name: "r1", Host: "192.0.2.1", Port: 23, Platform: "cisco_ios", LoginMethod: "telnet",
		CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(d.ID, 10)
	if err := s.PinAddress(ctx, d.ID, d.Address()); err != nil {
		t.Fatal(err)
	}
	mustFail(t, call{}, []string{"needs no confirmation", "telnet 192.0.2.1:23"}, "device", "accept-address", "--data", data, id)
	if _, err := s.UpdateDevice(ctx, d.ID, func(cur *db.Device) error { cur.Host = "198.51.100.4"; return nil }); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, call{}, "device", "accept-address", "--data", data, id)
	if !strings.Contains(r.stdout, "now goes to telnet 198.51.100.4:23 (was telnet 192.0.2.1:23)") {
		t.Errorf("output:\n%s", r)
	}
	if got, _ := s.GetDevice(ctx, d.ID); got.AddressPin == nil || *got.AddressPin != "telnet|198.51.100.4|23|1" {
		t.Fatalf("pin after accept-address: %v", got.AddressPin)
	}
	mustFail(t, call{}, []string{"no device with ID 99"}, "device", "accept-address", "--data", data, "99")
	mustFail(t, call{}, []string{"want a positive number"}, "device", "accept-address", "--data", data, "x")
	entries, _, err := s.ListAudit(ctx, 10, 0)
	if err != nil || len(entries) == 0 || entries[0].Action != "device.confirm_address" || entries[0].Details["credential"] != "core" ||
		entries[0].Interface != "cli" {
		t.Fatalf("audit: %+v, %v", entries, err)
	}
}
