package cli

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/importer"
	"backupd/db"
)

func newExportCSV(cfg *config.Config) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "csv",
		Short: "Write the device list as CSV, as the devices page exports it (never a secret)",
		Long: `Writes every device as CSV in backupd's import format (the devices page's
"Export CSV"): name, host, port, platform, login_method, group, credential,
template, encoding, enabled, remarks, zone. Groups, credentials, templates
and zones are named; no password or key is written. backupd import csv and the devices
page read it back.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			w := cmd.OutOrStdout()
			if output != "" && output != "-" {
				f, err := os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			n, err := exportCSV(cmd, store, w)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "exported %d device(s)\n", n)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "file to write (standard output when empty or -)")
	return cmd
}

func exportCSV(cmd *cobra.Command, store *db.Store, w io.Writer) (int, error) {
	ctx := cmd.Context()
	names, err := importer.LoadCSVNames(ctx, store)
	if err != nil {
		return 0, err
	}
	// A byte order mark makes spreadsheets read UTF-8 (Chinese names) right.
	if _, err := io.WriteString(w, "\xef\xbb\xbf"); err != nil {
		return 0, err
	}
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(importer.CSVColumns); err != nil {
		return 0, err
	}
	var after int64
	n := 0
	for range 10_000 { // ten million devices at the most
		page, err := store.DevicesAfter(ctx, db.Scope{All: true}, db.DeviceFilter{}, after, 1000)
		if err != nil {
			return n, err
		}
		for _, d := range page {
			rec := names.Record(d)
			if err := cw.Write(rec); err != nil {
				return n, err
			}
			n++
			after = d.ID
		}
		if len(page) < 1000 {
			break
		}
	}
	cw.Flush()
	return n, cw.Error()
}
