package cli

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"

	"backupd/app/config"
	"backupd/app/inventory"
	"backupd/db"
)

func newDevice(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "device", Short: "Device operations that need an operator's decision"}
	cmd.AddCommand(newDeviceAcceptHostKey(cfg), newDeviceAcceptAddress(cfg))
	return cmd
}

func newDeviceAcceptAddress(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "accept-address ID",
		Short: "Let a device's credential go to its changed address, so its backups log in again",
		Long: `A device's credential is sent only to the address (login method, host, port and
zone) it was last sent to or confirmed for. After the address changes, a
telnet device, or an SSH device without a pinned host key, is not logged
into: its backups fail with "address_unconfirmed" and the device's page
shows both addresses. After checking that the device really is at the new
address, accept-address confirms it. (An SSH device whose host key is
pinned proves itself by its key instead; a different key waits for
accept-hostkey.)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			store, d, err := openDevice(cmd, cfg, args[0])
			if err != nil {
				return err
			}
			defer store.Close()
			id := d.ID
			previous, err := store.ConfirmAddress(ctx, id, d.Address())
			switch {
			case errors.Is(err, db.ErrAddressConfirmed):
				return fmt.Errorf("device %d (%s) needs no confirmation: its credential already goes to %s", id, d.Name, inventory.ShowAddress(d.Address()))
			case errors.Is(err, db.ErrAddressMoved):
				return fmt.Errorf("device %d (%s) changed its address meanwhile; run the command again", id, d.Name)
			case err != nil:
				return err
			}
			details := map[string]any{"address": inventory.ShowAddress(d.Address()), "previous": inventory.ShowAddress(previous),
				"credential_use": inventory.UseAddress}
			if d.CredentialID != nil {
				details["credential_id"] = *d.CredentialID
				if c, err := store.GetCredential(ctx, *d.CredentialID); err == nil {
					details["credential"] = c.Name
				}
			}
			audit(ctx, store, cmd.ErrOrStderr(), "device.confirm_address", "device", id, details)
			fmt.Fprintf(cmd.OutOrStdout(), "device %d (%s): its credential now goes to %s (was %s)\n", id, d.Name,
				inventory.ShowAddress(d.Address()), inventory.ShowAddress(previous))
			return nil
		},
	}
}

func newDeviceAcceptHostKey(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "accept-hostkey ID",
		Short: "Trust the changed SSH host key a device presented, so its backups work again",
		Long: `When a device presents an SSH host key other than the one pinned at its first
backup, its backups fail with "host key changed" and the new key is kept
aside. After checking that the change is legitimate (the device was
replaced or re-keyed), accept-hostkey pins the new key.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			store, d, err := openDevice(cmd, cfg, args[0])
			if err != nil {
				return err
			}
			defer store.Close()
			id := d.ID
			key, err := store.AcceptHostKey(ctx, id)
			if errors.Is(err, db.ErrNoPendingHostKey) {
				return fmt.Errorf("device %d (%s) has not presented a changed host key; nothing to accept", id, d.Name)
			}
			if err != nil {
				return err
			}
			fp := "(unreadable key)"
			if pk, err := ssh.ParsePublicKey(key); err == nil {
				fp = pk.Type() + " " + ssh.FingerprintSHA256(pk)
			}
			audit(ctx, store, cmd.ErrOrStderr(), "device.accept_hostkey", "device", id, map[string]any{"fingerprint": fp})
			fmt.Fprintf(cmd.OutOrStdout(), "device %d (%s) now trusts host key %s\n", id, d.Name, fp)
			return nil
		},
	}
}

// openDevice opens the store and reads the device named by the ID
// argument arg; the caller closes the store.
func openDevice(cmd *cobra.Command, cfg *config.Config, arg string) (*db.Store, db.Device, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id < 1 {
		return nil, db.Device{}, fmt.Errorf("device ID %q: want a positive number", arg)
	}
	store, _, err := openData(cmd.Context(), cfg, cmd.ErrOrStderr())
	if err != nil {
		return nil, db.Device{}, err
	}
	d, err := store.GetDevice(cmd.Context(), id)
	if err != nil {
		store.Close()
		if errors.Is(err, db.ErrNotFound) {
			return nil, db.Device{}, fmt.Errorf("no device with ID %d", id)
		}
		return nil, db.Device{}, err
	}
	return store, d, nil
}
