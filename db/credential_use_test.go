package db_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"backupd/db"
	"backupd/db/queue"
)

func mkCredential(t *testing.T, s *db.Store, name string) int64 {
	t.Helper()
	c, err := s.CreateCredential(context.Background(), db.Credential{Name: name, Username: "backup"})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// A role lets its holders use the credentials it lists one by one; the
// list follows the role (replaced whole), a deleted credential leaves it,
// and built-in roles have none.
func TestRoleCredentials(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	a, b, c := mkCredential(t, s, "a"), mkCredential(t, s, "b"), mkCredential(t, s, "c")
	role, err := s.CreateRole(ctx, "Field tech", "", []string{"devices.update"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetRoleCredentials(ctx, role, []int64{b, a, b, 999}); err != nil {
		t.Fatal(err)
	}
	r, err := s.RoleByID(ctx, role)
	if err != nil || !slices.Equal(r.Credentials, []int64{a, b}) {
		t.Fatalf("role credentials = %v, %v; want [%d %d] (the missing one left out)", r.Credentials, err, a, b)
	}
	uid, err := s.CreateUser(ctx, db.NewUser{Username: "tech", PasswordHash: "x", RoleIDs: []int64{role}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.UserGrants(ctx, uid)
	if err != nil || !g.Credentials[a] || !g.Credentials[b] || g.Credentials[c] || g.Permissions["credentials.use"] {
		t.Fatalf("grants = %+v, %v", g, err)
	}
	if err := s.SetRoleCredentials(ctx, role, []int64{c}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCredential(ctx, c); err != nil {
		t.Fatal(err)
	}
	if g, _ := s.UserGrants(ctx, uid); len(g.Credentials) != 0 {
		t.Fatalf("after the credential was deleted: %v", g.Credentials)
	}
	roles, err := s.ListRoles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ro := range roles {
		if len(ro.Credentials) != 0 {
			t.Errorf("role %s still lists %v", ro.Name, ro.Credentials)
		}
	}
	if err := s.EnsureRole(ctx, db.Role{Name: "Administrator", Builtin: true, AllPermissions: true}); err != nil {
		t.Fatal(err)
	}
	admin, _ := s.RoleByName(ctx, "Administrator")
	if err := s.SetRoleCredentials(ctx, admin.ID, []int64{a}); !errors.Is(err, db.ErrBuiltinRole) {
		t.Fatalf("built-in role: %v", err)
	}
	names, err := s.CredentialRoles(ctx, a)
	if err != nil || len(names) != 0 {
		t.Fatalf("roles of a: %v, %v", names, err)
	}
}

// The address a device's credential goes to is pinned on first use only,
// moved by a confirmation of the address seen, and by accepting the key a
// device presented at its new address.
func TestAddressPin(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	cred := mkCredential(t, s, "lab")
	d, err := s.CreateDevice(ctx, db.Device{Name: "r1", Host: "192.0.2.1", Port: 23, Platform: "cisco_ios", LoginMethod: "telnet",
		CredentialID: &cred, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.AddressPin != nil || d.Address() != "telnet|192.0.2.1|23|1" {
		t.Fatalf("new device: pin %v, address %q", d.AddressPin, d.Address())
	}
	if _, err := s.ConfirmAddress(ctx, d.ID, d.Address()); !errors.Is(err, db.ErrAddressConfirmed) {
		t.Fatalf("confirming a device never used: %v", err)
	}
	if err := s.PinAddress(ctx, d.ID, d.Address()); err != nil {
		t.Fatal(err)
	}
	if err := s.PinAddress(ctx, d.ID, "telnet|198.51.100.9|23|1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetDevice(ctx, d.ID); got.AddressPin == nil || *got.AddressPin != "telnet|192.0.2.1|23|1" {
		t.Fatalf("a second pin moved the first: %v", got.AddressPin)
	}
	// The update keeps the pin whatever the patch does.
	moved, err := s.UpdateDevice(ctx, d.ID, func(cur *db.Device) error {
		cur.Host = "198.51.100.9"
		other := "telnet|198.51.100.9|23|1"
		cur.AddressPin = &other
		return nil
	})
	if err != nil || moved.AddressPin == nil || *moved.AddressPin != "telnet|192.0.2.1|23|1" {
		t.Fatalf("after the update: %v, %v", moved.AddressPin, err)
	}
	if _, err := s.ConfirmAddress(ctx, d.ID, "telnet|192.0.2.1|23|1"); !errors.Is(err, db.ErrAddressMoved) {
		t.Fatalf("confirming the old address: %v", err)
	}
	prev, err := s.ConfirmAddress(ctx, d.ID, moved.Address())
	if err != nil || prev != "telnet|192.0.2.1|23|1" {
		t.Fatalf("confirm = %q, %v", prev, err)
	}
	if _, err := s.ConfirmAddress(ctx, 9999, "x"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("unknown device: %v", err)
	}

	// SSH: the device moves, presents another key, the key is accepted.
	if _, err := s.UpdateDevice(ctx, d.ID, func(cur *db.Device) error {
		cur.LoginMethod, cur.Port, cur.Host = "ssh", 22, "203.0.113.5"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	runAttempt(t, s, d.ID, queue.Outcome{Error: "host key changed", Reason: "host_key_changed", PendingHostKey: []byte("new-key")})
	if err := s.AcceptSeenHostKey(ctx, d.ID, []byte("new-key")); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetDevice(ctx, d.ID); got.AddressPin == nil || *got.AddressPin != "ssh|203.0.113.5|22|1" {
		t.Fatalf("accepting the key did not confirm the address: %v", got.AddressPin)
	}
	if err := s.ForgetHostKey(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetDevice(ctx, d.ID); got.AddressPin != nil {
		t.Fatalf("forgetting the key kept the address: %v", *got.AddressPin)
	}
}
