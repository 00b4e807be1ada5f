package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/insync"
	"backupd/app/secret"
	"backupd/db"
)

// envInventoryToken carries an inventory source's token to add and edit
// when it is not piped in: never on the command line, which ps shows.
const envInventoryToken = "BACKUPD_INVENTORY_TOKEN"

// inventoryTokenHelp is what the source commands' help says of the token.
const inventoryTokenHelp = `The API token is never taken on the command line (ps and the shell's history
show it): pipe it in with --token-stdin (its first line), or set
` + envInventoryToken + ` (add reads it when set; edit only with --token-env,
so that a variable left in the shell never replaces a source's token
unasked). Standard error says where the token came from. It is sealed
with the data directory's key and never printed: show says only whether
one is set. The commands' other flags are read from the command line
only, never from BACKUPD_* variables.`

func newInventory(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Keep the device list in step with a source of truth (NetBox, an HTTP JSON inventory)",
		Long: `Inventory sources are the sources of truth the device list follows: a NetBox,
or any HTTP JSON inventory (Oxidized's source: http, LibreNMS). A sync
creates the devices a source lists, updates what changed, disables the ones
that vanished (never deletes them) and re-enables them when they come back.
See docs/inventory-sync.md.`,
	}
	source := &cobra.Command{Use: "source", Short: "Add, list, show, edit and remove inventory sources"}
	source.AddCommand(newInventorySourceAdd(cfg), newInventorySourceList(cfg), newInventorySourceShow(cfg),
		newInventorySourceEdit(cfg), newInventorySourceRemove(cfg))
	cmd.AddCommand(source, newInventorySync(cfg))
	commandLineOnly(cmd)
	return cmd
}

// sourceFlags are the settings add and edit share.
type sourceFlags struct {
	configFile, configJSON, oxidized string
	tokenStdin, clearToken, tokenEnv bool
	tokenOnArgv                      string
	interval                         time.Duration
}

func (f *sourceFlags) register(cmd *cobra.Command, add bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.configFile, "config", "", "the source's settings: a JSON file (\"-\": standard input), see docs/inventory-sync.md")
	fl.StringVar(&f.configJSON, "config-json", "", "the source's settings as JSON text")
	fl.BoolVar(&f.tokenStdin, "token-stdin", false, "read the API token from the first line of standard input (or set "+envInventoryToken+")")
	fl.DurationVar(&f.interval, "interval", time.Duration(db.DefaultInventoryInterval)*time.Minute,
		"how often the server syncs it, in whole minutes (60m, 1h30m); 0: only on demand")
	// --token is offered only to refuse it with a sentence, rather than
	// cobra's "unknown flag".
	fl.StringVar(&f.tokenOnArgv, "token", "", "refused: see --token-stdin")
	_ = fl.MarkHidden("token")
	if add {
		fl.StringVar(&f.oxidized, "oxidized", "", "an Oxidized configuration with a source: http block (a YAML file, \"-\": standard input), "+
			"made into an http source; its user and pass become the token")
	} else {
		fl.BoolVar(&f.clearToken, "clear-token", false, "remove the source's token")
		fl.BoolVar(&f.tokenEnv, "token-env", false, "take the new token from "+envInventoryToken+" (edit never reads it otherwise)")
	}
}

// check refuses what the flags cannot mean together.
func (f *sourceFlags) check(cmd *cobra.Command) error {
	fl := cmd.Flags()
	if fl.Changed("token") {
		return fmt.Errorf("--token: the token is never taken on the command line, which ps and the shell's history show: pipe it in with --token-stdin or set %s", envInventoryToken)
	}
	given := 0
	for _, n := range []string{"config", "config-json", "oxidized"} {
		if fl.Lookup(n) != nil && fl.Changed(n) {
			given++
		}
	}
	if given > 1 {
		return errors.New("give one of --config, --config-json and --oxidized")
	}
	stdinUsers := 0
	for _, v := range []string{f.configFile, f.oxidized} {
		if v == "-" {
			stdinUsers++
		}
	}
	if f.tokenStdin {
		stdinUsers++
	}
	if stdinUsers > 1 {
		return errors.New("standard input can carry one thing: the token, the settings or the Oxidized configuration")
	}
	if n := countTrue(f.tokenStdin, f.clearToken, f.tokenEnv); n > 1 {
		return errors.New("give one of --token-stdin, --token-env and --clear-token")
	}
	if fl.Changed("interval") {
		if f.interval < 0 || f.interval%time.Minute != 0 {
			return fmt.Errorf("--interval %s: whole minutes (60m, 1h30m), or 0 for on demand only", f.interval)
		}
		if m := int(f.interval / time.Minute); m > db.MaxInventoryInterval {
			return fmt.Errorf("--interval %s: at most a week (%dm)", f.interval, db.MaxInventoryInterval)
		}
	}
	return nil
}

// settings reads the settings the flags give (nil when none), and the
// token that came with them (an Oxidized configuration's user and pass).
func (f *sourceFlags) settings(stdin io.Reader) (json.RawMessage, string, error) {
	switch {
	case f.configJSON != "":
		return json.RawMessage(f.configJSON), "", nil
	case f.configFile != "":
		b, err := readBounded(f.configFile, stdin, db.MaxInventoryConfigBytes)
		if err != nil {
			return nil, "", fmt.Errorf("--config: %w", err)
		}
		return b, "", nil
	case f.oxidized != "":
		b, err := readBounded(f.oxidized, stdin, insync.MaxOxidizedBytes)
		if err != nil {
			return nil, "", fmt.Errorf("--oxidized: %w", err)
		}
		raw, token, err := oxidizedSettings(string(b))
		if err != nil {
			return nil, "", fmt.Errorf("--oxidized: %w", err)
		}
		return raw, token, nil
	}
	return nil, "", nil
}

// Where a source's token came from, as add and edit say on stderr.
const (
	tokenFromStdin = "read from standard input (--token-stdin)"
	tokenFromEnv   = "taken from " + envInventoryToken
)

// token reads the token the flags or the environment give, and where it
// came from ("" when none is given: the stored one stays). fromEnv says
// whether the environment may give it without a flag: add's token comes
// from BACKUPD_INVENTORY_TOKEN when it is set, edit's only with
// --token-env, for a variable left in the shell from adding another
// source must never replace this one's token unasked.
func (f *sourceFlags) token(stdin io.Reader, fromEnv bool) (string, string, error) {
	if f.tokenStdin {
		tok, err := readSecretFile("-", stdin)
		if err != nil {
			return "", "", fmt.Errorf("--token-stdin: %w", err)
		}
		return strings.TrimSpace(tok), tokenFromStdin, nil
	}
	v := strings.TrimSpace(os.Getenv(envInventoryToken))
	switch {
	case f.tokenEnv && v == "":
		return "", "", fmt.Errorf("--token-env: %s is not set, or empty", envInventoryToken)
	case v != "" && (fromEnv || f.tokenEnv):
		return v, tokenFromEnv, nil
	}
	return "", "", nil
}

// tellToken says on w where the token came from; or, when the stored
// one stays (kept), that BACKUPD_INVENTORY_TOKEN, if set, was left
// unused.
func tellToken(w io.Writer, from string, kept bool) {
	switch {
	case from != "":
		fmt.Fprintf(w, "token: %s\n", from)
	case kept && strings.TrimSpace(os.Getenv(envInventoryToken)) != "":
		fmt.Fprintf(w, "token: %s is set but left unused: edit keeps the source's token unless given --token-env\n", envInventoryToken)
	}
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// readBounded reads a file ("-": stdin), at most limit bytes.
func readBounded(path string, stdin io.Reader, limit int64) ([]byte, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d KiB", limit>>10)
	}
	return b, nil
}

// oxidizedSettings turns a pasted Oxidized http source into an http
// source's settings and its token (insync.OxidizedSource).
func oxidizedSettings(yamlText string) (json.RawMessage, string, error) {
	hc, token, err := insync.OxidizedSource(yamlText)
	if err != nil {
		return nil, "", err
	}
	raw, err := json.Marshal(insync.SourceConfig{HTTP: &hc})
	if err != nil {
		return nil, "", err
	}
	return raw, token, nil
}

// checkSettings validates a source's settings with its token as a sync
// would read them, and refuses a header holding a secret: nothing is
// recorded unless a sync could run with them. It returns the settings as
// they are stored (compact JSON).
func checkSettings(kind string, raw json.RawMessage, token string) (json.RawMessage, error) {
	if !slices.Contains(db.InventoryKinds, kind) {
		return nil, fmt.Errorf("--kind %q: %s", kind, strings.Join(db.InventoryKinds, " or "))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, bytes.TrimSpace(raw)); err != nil {
		return nil, fmt.Errorf("settings: not JSON: %v", err)
	}
	if len(raw) > 0 && bytes.TrimSpace(raw)[0] != '{' {
		return nil, errors.New("settings: a JSON object ({\"netbox\": {…}} or {\"http\": {…}})")
	}
	cfg, err := insync.ParseConfig(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	if cfg.HTTP != nil {
		for k := range cfg.HTTP.Headers {
			if insync.SecretHeader(k) {
				return nil, fmt.Errorf("settings: header %s carries a secret, which the settings never keep: set \"token_header\": %q and give the value as the token", k, k)
			}
		}
	}
	if _, err := cfg.Fetcher(kind, token); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	return buf.Bytes(), nil
}

func newInventorySourceAdd(cfg *config.Config) *cobra.Command {
	var f sourceFlags
	var kind string
	var disabled bool
	cmd := &cobra.Command{
		Use:   "add NAME --kind netbox|http (--config FILE | --config-json JSON | --oxidized FILE)",
		Short: "Add an inventory source: its settings are checked as a sync reads them, and nothing is recorded unless they pass",
		Long: `Add an inventory source. Its settings are a JSON object, {"netbox": {…}} or
{"http": {…}} with "mapping", "defaults" and "claim" beside it (see
docs/inventory-sync.md); --oxidized reads an Oxidized configuration's
source: http block instead (kind http). The settings are checked as a sync
reads them: a refusal names the field, and nothing is recorded.

` + inventoryTokenHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(cmd); err != nil {
				return err
			}
			if f.oxidized != "" {
				if cmd.Flags().Changed("kind") && kind != db.InventoryHTTP {
					return errors.New("--oxidized makes an http source: leave --kind out or give --kind http")
				}
				kind = db.InventoryHTTP
			}
			raw, oxToken, err := f.settings(cmd.InOrStdin())
			if err != nil {
				return err
			}
			if raw == nil {
				return errors.New("give the source's settings: --config FILE, --config-json JSON or --oxidized FILE")
			}
			token, from, err := f.token(cmd.InOrStdin(), true)
			if err != nil {
				return err
			}
			if oxToken != "" {
				if from != "" {
					return fmt.Errorf("the Oxidized configuration carries its own credentials (user and pass, or an Authorization header): give no other token (one was %s)", from)
				}
				token, from = oxToken, "the Oxidized configuration's credentials (user and pass, or its Authorization header)"
			}
			tellToken(cmd.ErrOrStderr(), from, false)
			stored, err := checkSettings(kind, raw, token)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			store, sealer, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			src := db.InventorySource{Name: strings.TrimSpace(args[0]), Kind: kind, Config: stored, Enabled: !disabled,
				IntervalMinutes: int(f.interval / time.Minute)}
			if token != "" {
				src.Token = sealer.Seal(token, secret.PurposeInventoryToken)
			}
			out, err := store.CreateInventorySource(ctx, src, cliAudit("inventory_source.create",
				map[string]any{"name": src.Name, "kind": kind, "enabled": src.Enabled, "interval_minutes": src.IntervalMinutes, "token_set": token != ""}))
			if err != nil {
				return sourceError(src.Name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added inventory source %q (%s, %s, %s, token %s); try it with: backupd inventory sync --source %q --dry-run\n",
				out.Name, out.Kind, showInterval(out.IntervalMinutes), enabledWord(out.Enabled), tokenWord(out.Token), out.Name)
			return nil
		},
	}
	f.register(cmd, true)
	cmd.Flags().StringVar(&kind, "kind", "", "netbox or http (an HTTP JSON inventory; LibreNMS with \"preset\": \"librenms\")")
	cmd.Flags().BoolVar(&disabled, "disabled", false, "add it disabled: not synced until enabled")
	return cmd
}

func newInventorySourceEdit(cfg *config.Config) *cobra.Command {
	var f sourceFlags
	var enable, disable bool
	cmd := &cobra.Command{
		Use:   "edit NAME [--config FILE | --config-json JSON] [--token-stdin | --token-env | --clear-token] [--interval D] [--enable | --disable]",
		Short: "Change an inventory source's settings, token, interval or state; what is left out stays",
		Long: `Change an inventory source. What is not given stays as it is. New settings
replace the old ones whole and are checked, with the token the source will
have, as add checks them.

` + inventoryTokenHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(cmd); err != nil {
				return err
			}
			if enable && disable {
				return errors.New("give one of --enable and --disable")
			}
			raw, _, err := f.settings(cmd.InOrStdin())
			if err != nil {
				return err
			}
			token, from, err := f.token(cmd.InOrStdin(), false)
			if err != nil {
				return err
			}
			newToken := from != ""
			tellToken(cmd.ErrOrStderr(), from, !newToken && !f.clearToken)
			ctx := cmd.Context()
			store, sealer, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			src, err := sourceByName(ctx, store, args[0])
			if err != nil {
				return err
			}
			// The audit entry is written after patch, in its
			// transaction: it names what patch changed.
			var changed []string
			out, err := store.UpdateInventorySource(ctx, src.ID, func(s *db.InventorySource) error {
				changed = changed[:0]
				tok := ""
				switch {
				case newToken:
					tok = token
					changed = append(changed, "token")
				case f.clearToken:
					changed = append(changed, "token")
				case len(s.Token) > 0:
					var oerr error
					if tok, oerr = sealer.Open(s.Token, secret.PurposeInventoryToken); oerr != nil {
						return errors.New("the source's token cannot be opened (was secret.key replaced?): give it again with --token-stdin")
					}
				}
				settings := s.Config
				if raw != nil {
					settings = raw
					changed = append(changed, "settings")
				}
				stored, err := checkSettings(s.Kind, settings, tok)
				if err != nil {
					return err
				}
				s.Config = stored
				switch {
				case newToken:
					s.Token = sealer.Seal(tok, secret.PurposeInventoryToken)
				case f.clearToken:
					s.Token = nil
				}
				if cmd.Flags().Changed("interval") {
					s.IntervalMinutes = int(f.interval / time.Minute)
					changed = append(changed, "interval")
				}
				if enable || disable {
					s.Enabled = enable
					changed = append(changed, "enabled")
				}
				if len(changed) == 0 {
					return errors.New("nothing to change: give --config, --config-json, --token-stdin, --token-env, --clear-token, --interval, --enable or --disable")
				}
				return nil
			}, cliAudit("inventory_source.update", map[string]any{"name": src.Name, "changed": &changed}))
			if err != nil {
				return sourceError(src.Name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "inventory source %q changed (%s): %s, %s, %s, token %s\n", out.Name, strings.Join(changed, ", "),
				out.Kind, showInterval(out.IntervalMinutes), enabledWord(out.Enabled), tokenWord(out.Token))
			return nil
		},
	}
	f.register(cmd, false)
	cmd.Flags().BoolVar(&enable, "enable", false, "sync it again (on its interval and by inventory sync)")
	cmd.Flags().BoolVar(&disable, "disable", false, "stop syncing it: its devices stay as they are")
	return cmd
}

func newInventorySourceRemove(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an inventory source: its devices stay, with their history, as devices made by hand",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			src, err := sourceByName(ctx, store, args[0])
			if err != nil {
				return err
			}
			owned, err := store.SyncedDevices(ctx, src.ID)
			if err != nil {
				return err
			}
			if err := store.DeleteInventorySource(ctx, src.ID, cliAudit("inventory_source.delete",
				map[string]any{"name": src.Name, "kind": src.Kind, "devices_released": len(owned)})); err != nil {
				return sourceError(src.Name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed inventory source %q; its %d devices stay, with their history, no longer owned by a source: "+
				"no sync changes them any more, and one it had disabled stays disabled until you enable it\n", src.Name, len(owned))
			return nil
		},
	}
}

// sourceRow is a source as list --json prints it: never its token.
type sourceRow struct {
	Name            string         `json:"name"`
	Kind            string         `json:"kind"`
	IntervalMinutes int            `json:"interval_minutes"`
	Enabled         bool           `json:"enabled"`
	Token           string         `json:"token"`
	LastSyncAt      *string        `json:"last_sync_at"`
	LastGoodSyncAt  *string        `json:"last_good_sync_at"`
	LastStatus      string         `json:"last_status"`
	LastError       string         `json:"last_error"`
	LastCounts      map[string]int `json:"last_counts"`
}

func rowOf(src db.InventorySource) sourceRow {
	r := sourceRow{Name: src.Name, Kind: src.Kind, IntervalMinutes: src.IntervalMinutes, Enabled: src.Enabled, Token: tokenWord(src.Token),
		LastSyncAt: src.LastSyncAt, LastGoodSyncAt: src.LastGoodSyncAt, LastStatus: src.LastStatus, LastError: src.LastError, LastCounts: map[string]int{}}
	_ = json.Unmarshal(src.LastCounts, &r.LastCounts)
	if r.LastStatus == "" {
		r.LastStatus = "never"
	}
	return r
}

func newInventorySourceList(cfg *config.Config) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the inventory sources and how their last sync went",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			srcs, err := store.InventorySources(ctx)
			if err != nil {
				return err
			}
			rows := make([]sourceRow, 0, len(srcs))
			for _, s := range srcs {
				rows = append(rows, rowOf(s))
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tKIND\tINTERVAL\tENABLED\tLAST SYNC\tSTATUS\tCOUNTS\tLAST ERROR")
			for _, r := range rows {
				last := "never"
				if r.LastSyncAt != nil {
					last = *r.LastSyncAt
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Kind, showInterval(r.IntervalMinutes), yesNo(r.Enabled), last,
					r.LastStatus, showCounts(r.LastCounts), dash(oneLine(r.LastError)))
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newInventorySourceShow(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show an inventory source: its settings as stored and its last sync (the token only as set or none)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			src, err := sourceByName(ctx, store, args[0])
			if err != nil {
				return err
			}
			r := rowOf(src)
			w := cmd.OutOrStdout()
			last, good := "never", "never"
			if r.LastSyncAt != nil {
				last = *r.LastSyncAt
			}
			if r.LastGoodSyncAt != nil {
				good = *r.LastGoodSyncAt
			}
			fmt.Fprintf(w, "name:       %s\nkind:       %s\nenabled:    %s\ninterval:   %s\ntoken:      %s\ncreated:    %s\nupdated:    %s\n",
				r.Name, r.Kind, yesNo(r.Enabled), showInterval(r.IntervalMinutes), r.Token, src.CreatedAt, src.UpdatedAt)
			// The last good sync is since when a failing source's devices
			// have not followed it.
			fmt.Fprintf(w, "last sync:  %s\nstatus:     %s\nlast good:  %s\ncounts:     %s\n", last, r.LastStatus, good, showCounts(r.LastCounts))
			if r.LastError != "" {
				fmt.Fprintf(w, "last error: %s\n", r.LastError)
			}
			var pretty bytes.Buffer
			if json.Indent(&pretty, src.Config, "", "  ") != nil {
				pretty.Reset()
				pretty.Write(src.Config)
			}
			fmt.Fprintf(w, "settings:\n%s\n", pretty.String())
			return nil
		},
	}
}

// sourceByName finds a source by its name (case ignored when no source
// has it exactly).
func sourceByName(ctx context.Context, store *db.Store, name string) (db.InventorySource, error) {
	srcs, err := store.InventorySources(ctx)
	if err != nil {
		return db.InventorySource{}, err
	}
	name = strings.TrimSpace(name)
	for _, s := range srcs {
		if s.Name == name {
			return s, nil
		}
	}
	for _, s := range srcs {
		if strings.EqualFold(s.Name, name) {
			return s, nil
		}
	}
	return db.InventorySource{}, fmt.Errorf("no inventory source is named %q: see backupd inventory source list", name)
}

// sourceError words the store's refusals of a source.
func sourceError(name string, err error) error {
	var fe *db.ErrInvalidField
	switch {
	case errors.Is(err, db.ErrNameExists):
		return fmt.Errorf("an inventory source named %q exists already: choose another name, or change that one with inventory source edit", name)
	case errors.As(err, &fe):
		return fmt.Errorf("%s %s", fe.Field, fe.Message)
	}
	return err
}

// cliAudit is the audit entry of a change made from the command line,
// written by the store in the change's transaction.
func cliAudit(action string, details map[string]any) *db.AuditEntry {
	return &db.AuditEntry{Username: cliActor(), Interface: "cli", Action: action, Details: details}
}

func showInterval(minutes int) string {
	switch {
	case minutes == 0:
		return "on demand"
	case minutes%60 == 0:
		return fmt.Sprintf("every %dh", minutes/60)
	case minutes > 60:
		return fmt.Sprintf("every %dh%dm", minutes/60, minutes%60)
	}
	return fmt.Sprintf("every %dm", minutes)
}

func enabledWord(b bool) string {
	if b {
		return "enabled"
	}
	return "disabled"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func tokenWord(sealed []byte) string {
	if len(sealed) > 0 {
		return "set"
	}
	return "none"
}

// showCounts prints counts as "create 3, update 1", by name.
func showCounts(c map[string]int) string {
	if len(c) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, c[k]))
	}
	return strings.Join(parts, ", ")
}
