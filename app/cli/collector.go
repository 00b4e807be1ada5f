package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"backupd/app/agent"
	"backupd/app/config"
	"backupd/db"
	"backupd/db/queue"
	"backupd/web/agentapi"
)

// newCollector is `backupd collector`: run as a remote collector, and
// the server's commands that enrol, list and revoke collectors.
func newCollector(cfg *config.Config) *cobra.Command {
	var cc agent.Config
	cmd := &cobra.Command{
		Use:   "collector --server URL",
		Short: "Run as a remote collector of a zone (dials out to the server over HTTPS), or manage collectors",
		Long: `Run as a remote collector inside a network the server cannot reach: the collector dials out to the
server over HTTPS, takes its zone's backup jobs, logs in to the devices and uploads what they printed; the
server does the rest. The first start needs a one-time enrolment token (` + "`backupd collector token create --zone NAME`" + `
on the server), best given in the environment as BACKUPD_TOKEN, which ps does not show (--token works too, but
every user of the host sees a command line); the collector keeps its identity in --data (collector.json, mode
0600) and no device secret.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(cc.Server) == "" {
				return errors.New("--server is required: the server's address, e.g. https://backupd.example.com")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			cc.DataDir = cfg.DataDir
			cc.Version = Version
			cc.Log = cfg.Logger(cmd.ErrOrStderr()).With("component", "collector")
			return agent.Run(ctx, cc)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cc.Server, "server", "", "the server's address (https://…)")
	f.StringVar(&cc.Token, "token", "", "one-time enrolment token (first start only); set BACKUPD_TOKEN instead to keep it off the command line, which ps shows")
	f.StringVar(&cc.CAFile, "ca-file", "", "PEM file of the CA the server's certificate must chain to (default: the system's roots)")
	f.BoolVar(&cc.InsecureHTTP, "insecure-http", false, "allow a plain http:// server (tests and labs only: device secrets travel over it)")
	f.StringVar(&cc.Name, "name", "", "the collector's name on the server (default: the host name)")
	f.IntVar(&cc.Workers, "workers", 10, "devices backed up at once")
	cmd.AddCommand(newCollectorToken(cfg), newCollectorList(cfg), newCollectorRevoke(cfg), newZone(cfg))
	return cmd
}

func newCollectorToken(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Enrolment tokens of remote collectors"}
	var zone, expires string
	create := &cobra.Command{
		Use:   "create --zone NAME",
		Short: "Create a one-time enrolment token for a collector of the zone; the token alone is printed on stdout, once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(zone) == "" {
				return errors.New("--zone is required (see `backupd collector zone list`)")
			}
			ttl := 24 * time.Hour
			if expires != "" {
				at, err := parseExpiry(expires, time.Now())
				if err != nil {
					return err
				}
				ttl = time.Until(at)
			}
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			z, err := store.ZoneByName(ctx, strings.TrimSpace(zone))
			if errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("no zone %q (see `backupd collector zone list`)", zone)
			}
			if err != nil {
				return err
			}
			if z.ID == db.LocalZone {
				return errors.New("the local zone is the server's own: its devices need no collector")
			}
			token, id, err := agentapi.NewEnrolmentToken(ctx, store, z.ID, ttl)
			if err != nil {
				return err
			}
			audit(ctx, store, cmd.ErrOrStderr(), "collector_token.create", "zone", z.ID, map[string]any{"zone": z.Name, "ttl_seconds": int64(ttl / time.Second), "token_id": id})
			fmt.Fprintf(cmd.ErrOrStderr(), "enrolment token %d for a collector of zone %q, valid once until %s (revoke it with `backupd collector token revoke %d`); it is shown only this once:\n",
				id, z.Name, time.Now().Add(ttl).UTC().Format(db.TimeFormat), id)
			fmt.Fprintln(cmd.OutOrStdout(), token)
			return nil
		},
	}
	create.Flags().StringVar(&zone, "zone", "", "the zone the collector will serve (required)")
	create.Flags().StringVar(&expires, "expires", "24h", "validity: a duration such as 24h, 7d, or a date 2027-01-31")
	cmd.AddCommand(create, newCollectorTokenList(cfg), newCollectorTokenRevoke(cfg))
	return cmd
}

func newCollectorTokenList(cfg *config.Config) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "list [--all]",
		Short: "List the enrolment tokens that can still enrol a collector (--all: also used, expired and revoked ones); never the tokens themselves",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			now := time.Now()
			list := func(s *db.Store, ctx context.Context) ([]db.EnrolmentToken, error) {
				if all {
					return s.ListEnrolmentTokens(ctx, nil)
				}
				return s.ListEnrolmentTokens(ctx, &now)
			}
			return printList(cmd, cfg, list, "ID\tZONE\tCREATED (UTC)\tEXPIRES (UTC)\tSTATE", func(w io.Writer, t db.EnrolmentToken) {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", t.ID, t.ZoneName, t.CreatedAt, t.ExpiresAt, tokenState(t, now))
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also list used, expired and revoked tokens (the newest 500)")
	return cmd
}

// tokenState says what became of an enrolment token.
func tokenState(t db.EnrolmentToken, now time.Time) string {
	switch {
	case t.UsedAt != nil && t.CollectorID != nil:
		return fmt.Sprintf("used %s by collector %d (%s)", *t.UsedAt, *t.CollectorID, t.CollectorName)
	case t.UsedAt != nil:
		return "used " + *t.UsedAt
	case t.RevokedAt != nil:
		return "revoked " + *t.RevokedAt
	case !t.Usable(now):
		return "expired"
	}
	return "unused"
}

func newCollectorTokenRevoke(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an unused enrolment token: it enrols no collector from now on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("token id %q: want a positive number (see `backupd collector token list`)", args[0])
			}
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			before, err := store.GetEnrolmentToken(ctx, id)
			if errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("no enrolment token %d (see `backupd collector token list --all`)", id)
			}
			if err != nil {
				return err
			}
			t, err := store.RevokeEnrolmentToken(ctx, id)
			switch {
			case errors.Is(err, db.ErrTokenUsed):
				if t.CollectorID != nil {
					return fmt.Errorf("enrolment token %d has enrolled collector %d (%s): revoke the collector instead, `backupd collector revoke %d`",
						id, *t.CollectorID, t.CollectorName, *t.CollectorID)
				}
				return fmt.Errorf("enrolment token %d has been used", id)
			case err != nil:
				return err
			}
			if before.RevokedAt != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "enrolment token %d was already revoked (%s)\n", id, *before.RevokedAt)
				return nil
			}
			audit(ctx, store, cmd.ErrOrStderr(), "collector_token.revoke", "collector_token", id, map[string]any{"zone": t.ZoneName})
			fmt.Fprintf(cmd.ErrOrStderr(), "revoked enrolment token %d of zone %q\n", id, t.ZoneName)
			return nil
		},
	}
}

func newCollectorList(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the remote collectors: zone, version, last heartbeat, jobs in hand",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printList(cmd, cfg, (*db.Store).ListCollectors, "ID\tNAME\tZONE\tVERSION\tLAST SEEN (UTC)\tFROM\tJOBS\tSTATE",
				func(w io.Writer, c db.Collector) {
					state := "active"
					if c.RevokedAt != nil {
						state = "revoked " + *c.RevokedAt
					}
					seen := "never"
					if c.LastSeenAt != nil {
						seen = *c.LastSeenAt
					}
					fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", c.ID, c.Name, c.ZoneName, c.Version, seen, c.LastAddress, c.Leased, state)
				})
		},
	}
}

func newCollectorRevoke(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a remote collector: it is refused from now on and its jobs are queued again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("collector id %q: want a positive number (see `backupd collector list`)", args[0])
			}
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.RevokeCollector(ctx, id, queue.DefaultMaxInterruptions); errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("no collector %d (see `backupd collector list`)", id)
			} else if err != nil {
				return err
			}
			audit(ctx, store, cmd.ErrOrStderr(), "collector.revoke", "collector", id, nil)
			fmt.Fprintf(cmd.ErrOrStderr(), "revoked collector %d\n", id)
			return nil
		},
	}
}

// newZone is `backupd collector zone`: the networks devices live in.
func newZone(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "zone", Short: "Zones: the networks devices live in (local is the server's own)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "create NAME",
		Short: "Create a zone",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := strings.TrimSpace(args[0])
			if name == "" || len(name) > 128 {
				return errors.New("a zone name is 1 to 128 characters")
			}
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			z, err := store.CreateZone(ctx, name)
			if errors.Is(err, db.ErrNameExists) {
				return fmt.Errorf("a zone named %q exists", name)
			}
			if err != nil {
				return err
			}
			audit(ctx, store, cmd.ErrOrStderr(), "zone.create", "zone", z.ID, map[string]any{"name": z.Name})
			fmt.Fprintf(cmd.OutOrStdout(), "%d\n", z.ID)
			return nil
		},
	}, &cobra.Command{
		Use:   "list",
		Short: "List the zones with their devices and collectors",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printList(cmd, cfg, (*db.Store).ListZones, "ID\tNAME\tDEVICES\tCOLLECTORS", func(w io.Writer, z db.Zone) {
				fmt.Fprintf(w, "%d\t%s\t%d\t%d\n", z.ID, z.Name, z.Devices, z.Collectors)
			})
		},
	}, &cobra.Command{
		Use:   "move ZONE DEVICE_ID...",
		Short: "Move devices to a zone (their queued jobs follow)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			z, err := store.ZoneByName(ctx, args[0])
			if errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("no zone %q (see `backupd collector zone list`)", args[0])
			}
			if err != nil {
				return err
			}
			for _, a := range args[1:] {
				id, err := strconv.ParseInt(a, 10, 64)
				if err != nil || id <= 0 {
					return fmt.Errorf("device id %q: want a positive number", a)
				}
				if _, err := store.UpdateDevice(ctx, id, func(d *db.Device) error { d.ZoneID = z.ID; return nil }); errors.Is(err, db.ErrNotFound) {
					return fmt.Errorf("no device %d", id)
				} else if err != nil {
					return err
				}
				audit(ctx, store, cmd.ErrOrStderr(), "device.zone", "device", id, map[string]any{"zone": z.Name})
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "moved %d devices to zone %q\n", len(args)-1, z.Name)
			return nil
		},
	})
	return cmd
}
