package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/importer"
)

// The import commands bring the device list of another tool into
// backupd: Oxidized's or RANCID's router.db, or backupd's own CSV. A dry
// run shows what would be created, updated and skipped; an import applies
// it in one transaction.

func newImport(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "import", Short: "Import devices from Oxidized, RANCID or a CSV file"}
	cmd.AddCommand(newImportOxidized(cfg), newImportRancid(cfg), newImportCSV(cfg))
	return cmd
}

func newImportOxidized(cfg *config.Config) *cobra.Command {
	var (
		delimiter, columns, group, zone, oxidizedConfig string
		dryRun                                          bool
	)
	cmd := &cobra.Command{
		Use:   "oxidized [ROUTER_DB]",
		Short: "Import the devices of an Oxidized CSV router.db",
		Long: `Imports the devices of an Oxidized router.db (the CSV source), by default
in the layout Oxidized's documentation gives it,
name:model:username:password:enable (the enable password being vars_map's
enable), one device per line. --delimiter and --map read other layouts as
Oxidized's source.csv.delimiter and source.csv.map do, for example
--delimiter ',' --map name=0,ip=1,model=2. Without an ip column the host
is the name. The delimiter and columns used are printed first. A file in
backupd's earlier default layout, name:model:group:username:password,
needs --map name=0,model=1,group=2,username=3,password=4.

A line whose columns look shifted is skipped, and nothing of it is
imported: a username that is an IP address or a password hash, that has
a character usernames do not have (! # $ % & * ; = ? …) or mixes cases
with digits between letters twice (S3cr3tx), or that is a model name (but
for vendors' factory logins such as cisco); a group or model that is an
IP address or a password hash. A host is an IP address or a DNS name:
digits and dots that are no IPv4 address (999.1.1.1) are refused.
Messages about skipped lines show the line number and the fields that are
not secret (cut to 128 characters, control characters escaped), never a
password; a line that does not split into the columns expected is not
shown at all, only its length.

--oxidized-config reads Oxidized's own configuration file instead
(~/.config/oxidized/config): the router.db named by source.csv.file
(ROUTER_DB, when given, is read instead), its delimiter, map and
vars_map (enable), and, for lines without a login of their own, the
logins Oxidized would use: groups.G.models.M, groups.G, models.M, then
the global username, password and vars.enable. model_map and group_map
rename models and groups, the global model is the model of lines without
one, and input.default chooses the login method (the first of ssh and
telnet the platform offers). The mapping is printed first; which logins
are set is shown, never the passwords. A GPG-encrypted router.db
(source.csv.gpg) is not decrypted: decrypt it and give the file as
ROUTER_DB.

Models map to backupd platforms by the platform aliases (backupd platform
list); a line with an unknown model, a bad host or a name already used
earlier in the file is skipped, with its line number and why. Devices
whose name backupd already has are updated, so a second import changes
nothing. Groups are created as needed, at the top of the group tree and
named as written ("dc1/core" is one group). Logins from the file become
credentials, sealed, one per distinct username, password and enable
password, named "Imported oxidized N"; an existing credential with the
same login is used instead.

--zone puts the devices in a zone (backupd collector zone list), whose
remote collectors back them up; without it new devices go to the local
zone and existing ones stay where they are. A zone that does not exist
stops the import before anything is written. Devices are matched by name:
the same address in two zones is two devices, under two names.

A file with IPv6 hosts must not use ":" as its delimiter (the address
would be split): write it with another one, such as ";" or ",", and pass
--delimiter. Lines that hold an IPv6 address split by ":" are skipped and
say so.

Use - for standard input.`,
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if oxidizedConfig != "" {
				if cmd.Flags().Changed("map") || cmd.Flags().Changed("delimiter") {
					return errors.New("--map and --delimiter come from the Oxidized configuration (source.csv): leave them out, or leave out --oxidized-config")
				}
				parsed, file, err := parseWithOxidizedConfig(cmd, oxidizedConfig, args)
				if err != nil {
					return err
				}
				return runImport(cmd, cfg, parsed, file, group, zone, dryRun)
			}
			if len(args) == 0 {
				return errors.New("give the router.db to import, or --oxidized-config with Oxidized's configuration file")
			}
			m, err := importer.ParseMap(columns)
			if err != nil {
				return err
			}
			if delimiter == "" {
				return errors.New("--delimiter must not be empty")
			}
			data, err := readImportFile(cmd, args[0])
			if err != nil {
				return err
			}
			parsed, err := importer.ParseOxidized(data, delimiter, m)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			printOxidizedLayout(cmd.OutOrStdout(), args[0], parsed, !cmd.Flags().Changed("map"))
			return runImport(cmd, cfg, parsed, args[0], group, zone, dryRun)
		},
	}
	f := cmd.Flags()
	f.StringVar(&delimiter, "delimiter", ":", `field delimiter (\t or "tab" for a tab)`)
	f.StringVar(&columns, "map", importer.DefaultMap().String(), "column of each field, from 0: name, model (required), ip, group, username, password, enable")
	f.StringVar(&group, "group", "", "group of the devices whose line names none")
	f.StringVar(&zone, "zone", "", "zone of the devices (by name; default: new devices local, existing ones kept)")
	f.StringVar(&oxidizedConfig, "oxidized-config", "", "Oxidized's configuration file (~/.config/oxidized/config): its CSV source, column maps and logins")
	f.BoolVar(&dryRun, "dry-run", false, "show what would be created, updated and skipped, and change nothing")
	return cmd
}

// printOxidizedLayout says how a router.db is read, before its plan.
func printOxidizedLayout(w io.Writer, file string, parsed *importer.Parsed, defaultMap bool) {
	fmt.Fprintf(w, "%s read with delimiter %s and columns %s\n", file, strconv.Quote(parsed.Delimiter), parsed.Map)
	if defaultMap {
		fmt.Fprintf(w, "  (Oxidized's documented layout name:model:username:password:enable; a file in backupd's earlier default\n"+
			"  layout name:model:group:username:password needs --map %s)\n", importer.LegacyMap())
	}
}

// parseWithOxidizedConfig reads an Oxidized configuration, prints how it
// is read, and parses the router.db it names (or args[0]).
func parseWithOxidizedConfig(cmd *cobra.Command, path string, args []string) (*importer.Parsed, string, error) {
	data, err := readImportFile(cmd, path)
	if err != nil {
		return nil, "", err
	}
	oc, err := importer.ParseOxidizedConfig(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	var file string
	switch {
	case len(args) == 1:
		file = args[0]
	case oc.GPG:
		return nil, "", fmt.Errorf("%s: source.csv.gpg is set: the router.db %s is encrypted with GPG, which backupd does not decrypt; "+
			"decrypt it (gpg --decrypt %s > router.txt) and give that file after the command", path, oc.File, oc.File)
	case oc.File == "":
		return nil, "", fmt.Errorf("%s: source.csv.file is not set: give the router.db after the command", path)
	default:
		if file, err = expandHome(oc.File); err != nil {
			return nil, "", err
		}
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Oxidized configuration %s, router.db %s\n", path, file)
	for _, l := range oc.Describe() {
		fmt.Fprintf(out, "  %s\n", l)
	}
	routerDB, err := readImportFile(cmd, file)
	if err != nil {
		return nil, "", err
	}
	parsed, err := oc.ParseRouterDB(routerDB)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", file, err)
	}
	return parsed, file, nil
}

// expandHome resolves a leading "~/" as Oxidized (Ruby's
// File.expand_path) does.
func expandHome(p string) (string, error) {
	rest, ok := strings.CutPrefix(p, "~")
	if !ok || rest != "" && rest[0] != '/' {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot resolve %s: %w", p, err)
	}
	return filepath.Join(home, rest), nil
}

func newImportRancid(cfg *config.Config) *cobra.Command {
	var (
		cloginrc, group, zone string
		dryRun                bool
	)
	cmd := &cobra.Command{
		Use:   "rancid ROUTER_DB",
		Short: "Import the devices of a RANCID router.db",
		Long: `Imports the devices of a RANCID router.db: name;type;state[;comment], or
name:type:state as RANCID before 3.0 wrote it (the first device line
decides). Only devices whose state is "up" are imported; the others are
listed as skipped. The host is the name. Types map to backupd platforms
by the platform aliases (backupd platform list).

--cloginrc reads the "add user GLOB USER" and "add password GLOB PASSWORD
[ENABLE]" lines of a .cloginrc; as clogin does, the first line whose glob
matches a device's name gives its user, and the first for its passwords.
Logins become credentials, sealed and deduplicated, named "Imported rancid
N". RANCID keeps one router.db per group directory: --group places the
devices in a group (created if needed), and --zone in a zone (which must
exist: backupd collector zone list) whose remote collectors back them up;
without it new devices go to the local zone and existing ones stay where
they are.

A name:type:state file cannot hold IPv6 addresses (they are full of ":"):
such lines are skipped and say so; write the file in RANCID 3's format.
Skipped lines show their number and what is not secret, cut and with
control characters escaped.

Devices whose name backupd already has are updated, so a second import
changes nothing. Use - for standard input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readImportFile(cmd, args[0])
			if err != nil {
				return err
			}
			var rc []byte
			if cloginrc != "" {
				if rc, err = readImportFile(cmd, cloginrc); err != nil {
					return err
				}
			}
			parsed, err := importer.ParseRancid(data, rc)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if parsed.Delimiter == ":" {
				fmt.Fprintf(cmd.OutOrStdout(), "%s read as name:type:state, the format before RANCID 3 (\":\" between fields; it cannot hold IPv6 addresses)\n", args[0])
			} else if parsed.Delimiter != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "%s read as name;type;state, RANCID 3's format\n", args[0])
			}
			return runImport(cmd, cfg, parsed, args[0], group, zone, dryRun)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cloginrc, "cloginrc", "", "a .cloginrc to take the devices' logins from")
	f.StringVar(&group, "group", "", "group of the imported devices")
	f.StringVar(&zone, "zone", "", "zone of the imported devices (by name; default: new devices local, existing ones kept)")
	f.BoolVar(&dryRun, "dry-run", false, "show what would be created, updated and skipped, and change nothing")
	return cmd
}

func newImportCSV(cfg *config.Config) *cobra.Command {
	var (
		zone   string
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "csv FILE",
		Short: "Import devices from backupd's CSV (as the devices page and backupd export csv write it)",
		Long: `Imports the devices of a CSV file in backupd's format: a header row naming
the columns (any order, any case) name, host, platform (required), port,
login_method, group, credential, template, encoding, enabled, remarks,
zone; then one device per row. Commas or semicolons, a byte order mark and Windows
line ends are fine. A platform may be written as its ID or an alias.

Devices whose name backupd already has are updated (an empty cell leaves
the field as it is, except remarks), others are created; a second import
changes nothing. Groups are created when missing; a credential or template
must exist, by name (a CSV holds no secret). The zone column names the
device's zone (any case; backupd collector zone list); an empty zone cell
takes --zone, else a new device goes to the local zone and an existing one
stays in its own. An unknown zone in a row skips that row; an unknown
--zone stops the import before anything is written. Devices are matched
by name: the same address in two zones is two devices. Rows with a
problem are skipped with their line and why. Use - for standard input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readImportFile(cmd, args[0])
			if err != nil {
				return err
			}
			parsed, err := importer.ParseCSV(data)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			return runImport(cmd, cfg, parsed, args[0], "", zone, dryRun)
		},
	}
	cmd.Flags().StringVar(&zone, "zone", "", "zone of the rows whose zone cell is empty (by name)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show what would be created, updated and skipped, and change nothing")
	return cmd
}

// readImportFile reads a file to import, or standard input for "-",
// bounded in size.
func readImportFile(cmd *cobra.Command, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = cmd.InOrStdin()
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", name, errors.Unwrap(err))
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, importer.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", name, err)
	}
	if len(data) > importer.MaxBytes {
		return nil, fmt.Errorf("%s is larger than %d MiB", name, importer.MaxBytes>>20)
	}
	return data, nil
}

// runImport plans the import, shows it, and unless dryRun applies it. A
// dry run opens the store read-only (openDryRun): it creates nothing,
// not even the database of a data directory that has none yet.
func runImport(cmd *cobra.Command, cfg *config.Config, parsed *importer.Parsed, file, group, zone string, dryRun bool) error {
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	if dryRun {
		store, sealer, done, err := openDryRun(ctx, cfg, cmd.ErrOrStderr())
		defer done()
		if err != nil {
			return err
		}
		plan, err := importer.Build(ctx, store, sealer, parsed, group, zone)
		if err != nil {
			return err
		}
		plan.Report(out, true, false)
		if len(plan.Rows) == 0 {
			return importer.ErrNothing
		}
		return nil
	}
	store, sealer, err := openData(ctx, cfg, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer store.Close()
	plan, err := importer.Build(ctx, store, sealer, parsed, group, zone)
	if err != nil {
		return err
	}
	if err := plan.Apply(ctx, store, sealer); err != nil {
		plan.Report(cmd.ErrOrStderr(), false, false)
		return err
	}
	plan.Report(out, false, true)
	created, updated, unchanged, skipped := plan.Counts()
	if created+updated > 0 {
		details := map[string]any{
			"format": parsed.Format, "file": filepath.Base(file), "created": created, "updated": updated,
			"unchanged": unchanged, "skipped": skipped, "groups_created": len(plan.Groups), "credentials_created": len(plan.Credentials),
		}
		if zone != "" {
			details["zone"] = zone
		}
		if ids := plan.UsedCredentials(); len(ids) > 0 {
			details["credential_ids"] = ids
		}
		audit(ctx, store, cmd.ErrOrStderr(), "device.import", "device", "", details)
	}
	return nil
}
