package inventory_test

import (
	"context"
	"errors"
	"testing"

	"backupd/app/auth"
	"backupd/app/inventory"
	"backupd/db"
	"backupd/internal/dbtest"
)

// Saving a device checks the credential it uses in the same step as the
// write: a user who may edit devices but not use a credential can neither
// attach it nor send it to a new address, and what was refused is not
// stored.
func TestSaveDeviceChecksTheCredentialUse(t *testing.T) {
	ctx := context.Background()
	store := dbtest.Open(t)
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "core login", Username: "backup"})
	if err != nil {
		t.Fatal(err)
	}
	// An editor holds devices.update but no right on the credential; an
	// operator holds credentials.use.
	editor := auth.UserPrincipal(2, "editor", true, nil, db.Grants{Permissions: map[string]bool{"devices.update": true}})
	operator := auth.UserPrincipal(3, "operator", true, nil, db.Grants{Permissions: map[string]bool{"credentials.use": true}})

	d := inventory.NewDevice()
	d.Name, d.Host, d.Platform = "core-rtr-01", "192.0.2.10", "cisco_ios"
	d.CredentialID = &cred.ID

	var cue *inventory.CredentialUseError
	if _, err := inventory.CreateDevice(ctx, store, editor, d); !errors.As(err, &cue) || cue.How != inventory.UseAttach {
		t.Fatalf("an editor attached a credential it may not use: %v", err)
	}
	if _, n, err := store.ListDevices(ctx, db.Scope{All: true}, db.DeviceFilter{}, 10, 0); err != nil || n != 0 {
		t.Fatalf("the refused device was stored (%d devices, %v)", n, err)
	}

	saved, err := inventory.CreateDevice(ctx, store, operator, d)
	if err != nil {
		t.Fatal(err)
	}
	if !saved.Used || saved.Use.How != inventory.UseAttach || saved.Use.CredentialID != cred.ID || saved.Device.ID == 0 {
		t.Fatalf("create by the operator: %+v", saved)
	}
	id := saved.Device.ID

	// The editor changes the host: the credential would go there.
	_, err = inventory.UpdateDevice(ctx, store, editor, id, func(d *db.Device) { d.Host = "198.51.100.7" })
	if !errors.As(err, &cue) || cue.How != inventory.UseAddress {
		t.Fatalf("an editor sent a credential to a new address: %v", err)
	}
	if got, err := store.GetDevice(ctx, id); err != nil || got.Host != "192.0.2.10" {
		t.Fatalf("the refused change was stored: host %q, %v", got.Host, err)
	}

	// A change that does not touch the credential's way is the editor's
	// to make.
	remarks := "rack 4"
	saved, err = inventory.UpdateDevice(ctx, store, editor, id, func(d *db.Device) { d.Remarks = &remarks })
	if err != nil {
		t.Fatal(err)
	}
	if saved.Used || saved.Device.Remarks == nil || *saved.Device.Remarks != remarks {
		t.Fatalf("update of the remarks: %+v", saved)
	}

	// The check sees the device as stored, whatever the caller believed
	// it was: a change made from a copy without the credential still
	// moves the stored credential.
	_, err = inventory.UpdateDevice(ctx, store, editor, id, func(d *db.Device) {
		d.Port = 2222
	})
	if !errors.As(err, &cue) || cue.How != inventory.UseAddress {
		t.Fatalf("a port change moved the credential unchecked: %v", err)
	}
}
