package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// Build information, stamped with -ldflags "-X backupd/app/cli.Version=…".
var (
	Version = "dev"
	Commit  = "unknown"
	Date    = "unknown"
)

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and build date",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "backupd %s (commit %s, built %s, %s %s/%s)\n",
				Version, Commit, Date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	}
}
