package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/db"
)

func newDB(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "db", Short: "Database tools"}
	cmd.AddCommand(newDBSeed(cfg))
	return cmd
}

func newDBSeed(cfg *config.Config) *cobra.Command {
	var opt db.SeedOptions
	cmd := &cobra.Command{
		Use:   "seed",
		Short: "Fill an empty data directory with a synthetic inventory and backup history (for trials and load tests)",
		Long: "Fill an empty data directory with synthetic groups, devices and a year of backup history,\n" +
			"for trying backupd out and for load tests. Refuses a directory that already holds devices.\n" +
			"10,000 devices × 100 backups (1,000,000 records) take well under a minute.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opt.Devices < 1 || opt.Devices > 1_000_000 || opt.BackupsPerDevice < 1 || opt.BackupsPerDevice > 10_000 {
				return errors.New("--devices must be 1 to 1,000,000 and --backups-per-device 1 to 10,000")
			}
			store, _, err := openData(cmd.Context(), cfg.DataDir, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			start := time.Now()
			if err := store.Seed(cmd.Context(), opt); errors.Is(err, db.ErrNotEmpty) {
				return fmt.Errorf("%s already holds devices; seed only an empty data directory", cfg.DataDir)
			} else if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "seeded %d devices with %d backup records in %s\n",
				opt.Devices, opt.Devices*opt.BackupsPerDevice, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&opt.Devices, "devices", 100, "number of devices")
	f.IntVar(&opt.BackupsPerDevice, "backups-per-device", 10, "backup records per device")
	return cmd
}
