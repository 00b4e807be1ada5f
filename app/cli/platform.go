package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"backupd/app/collect/driver"
	"backupd/app/config"
	"backupd/app/platforms"
	"backupd/db"
)

// The platform commands do from a shell what the Platforms page does:
// list the platforms, export one as a JSON definition, import one.

func newPlatform(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "platform", Short: "List, export and import device platforms (custom ones are JSON definitions)"}
	cmd.AddCommand(newPlatformList(cfg), newPlatformExport(cfg), newPlatformImport(cfg))
	return cmd
}

func newPlatformList(cfg *config.Config) *cobra.Command {
	var aliases bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in and custom platforms, with the names imports map to them",
		Long: `Lists the built-in platforms, then the custom ones, with their aliases:
the Oxidized models, RANCID types and other names that imports of those
tools' files map to the platform. --aliases prints only the aliases, one
line each: the alias, a tab and the platform ID, sorted by alias.

The store is only read: on a data directory without a database yet the
built-in platforms are listed and nothing is created.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stored, err := readCustomPlatforms(cmd, cfg)
			if err != nil {
				return err
			}
			type row struct {
				id, kind, vendor, name, transports string
				aliases                            []string
			}
			var rows []row
			for _, p := range driver.Builtins() {
				rows = append(rows, row{p.ID, "built-in", p.Vendor, p.Name, strings.Join(p.TransportList(), ","), p.Aliases})
			}
			for _, s := range stored {
				r := row{id: s.PlatformID, kind: "custom (does not load)", vendor: s.Def.Vendor, name: s.Def.Name}
				if p, err := s.Def.Platform(); err == nil {
					r.kind, r.transports, r.aliases = "custom", strings.Join(p.TransportList(), ","), p.Aliases
				}
				rows = append(rows, r)
			}
			if aliases {
				var lines []string
				for _, r := range rows {
					for _, a := range r.aliases {
						lines = append(lines, a+"\t"+r.id+"\n")
					}
				}
				slices.Sort(lines)
				_, err := io.WriteString(cmd.OutOrStdout(), strings.Join(lines, ""))
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tKIND\tVENDOR\tNAME\tTRANSPORTS\tALIASES")
			for _, r := range rows {
				names := strings.Join(r.aliases, ",")
				if names == "" {
					names = "-"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.id, r.kind, r.vendor, r.name, r.transports, names)
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&aliases, "aliases", false, "print only the aliases: one \"alias<TAB>platform ID\" line each, sorted by alias")
	return cmd
}

// readCustomPlatforms reads the stored custom platforms without creating
// or changing anything: a data directory (or PostgreSQL database) without
// a store yet has none, which a note on stderr says.
func readCustomPlatforms(cmd *cobra.Command, cfg *config.Config) ([]platforms.Stored, error) {
	store, err := openReadOnly(cmd.Context(), cfg, cmd.ErrOrStderr())
	if errors.Is(err, errNoStore) {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %v, so no custom platforms\n", err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return platforms.ListStored(cmd.Context(), store)
}

func newPlatformExport(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "export ID",
		Short: "Print a platform's JSON definition (a built-in one as a starting point, its ID prefixed custom_)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if p, ok := driver.Lookup(args[0]); ok && driver.IsBuiltin(p.ID) {
				_, err := cmd.OutOrStdout().Write(platforms.Marshal(platforms.FromPlatform(p)))
				return err
			}
			store, err := openReadOnly(cmd.Context(), cfg, cmd.ErrOrStderr())
			if errors.Is(err, errNoStore) {
				return fmt.Errorf("no platform with ID %q: %v", args[0], err)
			}
			if err != nil {
				return err
			}
			defer store.Close()
			row, err := store.GetCustomPlatform(cmd.Context(), args[0])
			if errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("no platform with ID %q; `backupd platform list` shows them", args[0])
			}
			if err != nil {
				return err
			}
			_, err = io.WriteString(cmd.OutOrStdout(), row.Definition)
			return err
		},
	}
}

func newPlatformImport(cfg *config.Config) *cobra.Command {
	var replace bool
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Check and store a custom platform from a JSON definition (- reads standard input)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in io.Reader = cmd.InOrStdin()
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			doc, err := io.ReadAll(io.LimitReader(in, platforms.MaxDocument+1))
			if err != nil {
				return err
			}
			d, err := platforms.Parse(doc)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			create := true
			if replace {
				if _, err := store.GetCustomPlatform(ctx, strings.TrimSpace(d.ID)); err == nil {
					create = false
				}
			}
			p, err := platforms.Save(ctx, store, d, create)
			if errors.Is(err, db.ErrNameExists) {
				return fmt.Errorf("a platform with ID %s exists; add --replace to store this definition in its place", d.ID)
			}
			if err != nil {
				return err
			}
			audit(ctx, store, cmd.ErrOrStderr(), "platform.import", "platform", p.ID, map[string]any{"name": p.Name, "replaced": !create})
			verb := "imported"
			if !create {
				verb = "replaced"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "platform %s (%s) %s; a running server loads it when it starts or when its Platforms page is opened\n", p.ID, p.Name, verb)
			return nil
		},
	}
	cmd.Flags().BoolVar(&replace, "replace", false, "replace the stored platform with the same ID")
	return cmd
}
