package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"backupd/app/auth"
	"backupd/app/backup"
	"backupd/app/cluster"
	"backupd/app/config"
	"backupd/app/metrics"
	"backupd/app/netguard"
	"backupd/app/redact"
	"backupd/app/restore"
	"backupd/app/syslog"
	"backupd/db"
	dbengine "backupd/db/engine"
	"backupd/web"
	"backupd/web/agentapi"
	"backupd/web/apiv1"
	"backupd/web/ui"
)

func newServe(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API, web interface, scheduler and collectors",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Validate(); err != nil {
				return err
			}
			cfg.OutboundAllowSet = cmd.Flags().Changed("outbound-allow")
			cfg.Git.Set = map[string]bool{}
			// VisitAll with Changed, not Visit: Visit skips the flags
			// applyEnv set from BACKUPD_GIT_* variables.
			cmd.Flags().VisitAll(func(f *pflag.Flag) {
				if f.Changed && strings.HasPrefix(f.Name, "git-") {
					cfg.Git.Set[f.Name] = true
				}
			})
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, *cfg, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", cfg.Listen, "address to listen on, host:port")
	f.StringVar(&cfg.Timezone, "timezone", cfg.Timezone, "IANA time zone for backup times (default: the host's)")
	f.StringVar(&cfg.TLSCert, "tls-cert", cfg.TLSCert, "TLS certificate file (PEM); enables HTTPS with --tls-key")
	f.StringVar(&cfg.TLSKey, "tls-key", cfg.TLSKey, "TLS private key file (PEM)")
	f.IntVar(&cfg.Workers, "workers", cfg.Workers, "devices backed up at once")
	f.BoolVar(&cfg.Demo, "demo", cfg.Demo, "also run a fleet of simulated devices on loopback, registered and backed up")
	f.DurationVar(&cfg.DemoChangesEvery, "demo-changes-every", cfg.DemoChangesEvery, "with --demo: how often a few demo devices change their configuration (default 3m; 1s at least)")
	f.StringVar(&cfg.MetricsListen, "metrics-listen", cfg.MetricsListen, "serve Prometheus metrics on this host:port (off when empty)")
	f.StringArrayVar(&cfg.TrustedProxy, "trusted-proxy", cfg.TrustedProxy,
		"a TLS-terminating reverse proxy whose X-Forwarded-For/-Proto (or Forwarded) headers are believed: an IP address or CIDR prefix; repeat the flag for several "+
			"(environment: BACKUPD_TRUSTED_PROXY, comma-separated)")
	f.StringSliceVar(&cfg.TrustedProxies, "trusted-proxies", cfg.TrustedProxies,
		"the same as --trusted-proxy, comma-separated")
	_ = f.MarkDeprecated("trusted-proxies", "use --trusted-proxy (BACKUPD_TRUSTED_PROXY), repeated for several")
	f.StringArrayVar(&cfg.OutboundAllow, "outbound-allow", cfg.OutboundAllow,
		"a link-local or cloud metadata address (IP address or CIDR prefix) backupd may still connect to: webhooks, SMTP, the git remote, devices; "+
			"repeat the flag for several; given (even empty), it replaces the allow list of the settings page (environment: BACKUPD_OUTBOUND_ALLOW, comma-separated)")
	f.StringVar(&cfg.SyslogListen, "syslog-listen", cfg.SyslogListen,
		"receive device logs on this host:port (UDP and TCP, e.g. 0.0.0.0:5514); a logged configuration change queues a backup (off when empty)")
	f.DurationVar(&cfg.SyslogDebounce, "syslog-debounce", cfg.SyslogDebounce,
		"quiet time after a device's last configuration-change message before its backup is queued (default 60s)")
	_ = f.MarkHidden("syslog-debounce")
	f.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL,
		"the address users open backupd at (e.g. https://backupd.example); notifications link to the device's diff page under it")
	f.DurationVar(&cfg.NotifyWindow, "notify-window", cfg.NotifyWindow,
		"digest window of notifications: new events are sent once none came for this long, so that a run's events go in one message per channel (default 60s; at most 10m held)")
	f.DurationVar(&cfg.StaleAfter, "stale-after", cfg.StaleAfter,
		"record backup.stale for a device without a good backup for this long (default 48h)")
	g := &cfg.Git
	f.BoolVar(&g.Enable, "git-mirror", g.Enable, "keep the git mirror in DATA/git/mirror: one commit per backup run (saved to the settings)")
	f.BoolVar(&g.Groups, "git-groups", g.Groups, "git mirror: a folder per group (saved to the settings)")
	f.StringVar(&g.Remote, "git-remote", g.Remote, "git mirror: push to this remote, ssh://, user@host:path or https:// (file:// or a path with --git-allow-local-remote; saved to the settings; empty: no push)")
	f.StringVar(&g.Branch, "git-branch", g.Branch, "git mirror: the remote branch (default main; saved to the settings)")
	f.StringVar(&g.AuthorName, "git-author-name", g.AuthorName, "git mirror: commit author and committer name (saved to the settings)")
	f.StringVar(&g.AuthorEmail, "git-author-email", g.AuthorEmail, "git mirror: commit author and committer email (saved to the settings)")
	f.StringVar(&g.KnownHostsFile, "git-known-hosts-file", g.KnownHostsFile, "git mirror: file with the SSH remote's pinned host key, known_hosts lines (saved to the settings)")
	f.StringVar(&g.SSHKeyFile, "git-ssh-key-file", g.SSHKeyFile, "git mirror: the SSH deploy key's file (stored sealed)")
	f.StringVar(&g.HTTPSUser, "git-https-user", g.HTTPSUser, "git mirror: HTTPS user name (saved to the settings)")
	f.StringVar(&g.TokenFile, "git-token-file", g.TokenFile, "git mirror: file holding the HTTPS token (stored sealed)")
	f.BoolVar(&g.AllowLocalRemote, "git-allow-local-remote", g.AllowLocalRemote,
		"git mirror: take a remote on this machine, file:// or a path (saved to the settings; the web form cannot set it)")
	f.DurationVar(&g.MaxWait, "git-max-wait", g.MaxWait, "git mirror: commit at least this often while the backup queue stays busy (default 10m)")
	return cmd
}

// shutdownGrace bounds how long in-flight requests get after SIGTERM.
const shutdownGrace = 15 * time.Second

func serve(ctx context.Context, cfg config.Config, stderr interface{ Write([]byte) (int, error) }) error {
	log := cfg.Logger(stderr)
	slog.SetDefault(log)
	store, sealer, err := openData(ctx, &cfg, stderr)
	if err != nil {
		return err
	}
	defer store.Close()

	if cfg.OutboundAllowSet {
		if err := applyOutboundAllow(ctx, store, cfg.OutboundAllow, stderr); err != nil {
			return err
		}
	}

	keys := auth.NewKeyAuthenticator(store, log.With("component", "auth"))
	mux := http.NewServeMux()
	loc, err := cfg.Location()
	if err != nil {
		return err
	}
	api := apiv1.Mount(mux, apiv1.Deps{Store: store, Sealer: sealer, Keys: keys, Log: log.With("component", "api"), Version: Version, Location: loc})
	api.MountDocs(mux)
	proxies, err := web.ParseProxies(append(slices.Clone(cfg.TrustedProxy), cfg.TrustedProxies...))
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	srv := &http.Server{
		Handler:           web.TrustProxies(web.Wrap(mux, log.With("component", "http")), proxies),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
	}

	var wg sync.WaitGroup
	bg, stopBG := context.WithCancel(context.Background())
	defer stopBG()
	goBG := func(fn func()) {
		wg.Add(1)
		go func() { defer wg.Done(); fn() }()
	}
	goBG(func() { keys.Run(bg, 30*time.Second) })
	engine, syslogTrigger, lead, stopCollection, err := startCollection(ctx, bg, cfg, store, sealer, log, goBG)
	defer stopCollection()
	if err != nil {
		ln.Close()
		stopBG()
		wg.Wait()
		return err
	}
	// Ready when the database takes writes and the backup engine works
	// the queue (it does not while it waits for the database).
	web.MountHealth(mux, func(ctx context.Context) error {
		if err := store.Ready(ctx); err != nil {
			return err
		}
		return engine.Ready(ctx)
	}, log.With("component", "health"))
	uiDeps := ui.Deps{Store: store, Sealer: sealer, Engine: engine, Log: log.With("component", "ui"), Location: loc, Version: Version}
	// Restores asked for and decided in the pages take their backups
	// with the same engine, which runs them too.
	uiDeps.Restores = &restore.Service{Store: store, Engine: engine, Keys: redact.NewKeyring(sealer), Log: log.With("component", "restore")}
	if syslogTrigger != nil {
		uiDeps.Syslog = syslogTrigger
	}
	ui.Mount(mux, uiDeps)
	// Every node serves the web interface and the API and runs backups;
	// the leader also runs the schedules and the other fleet-wide work.
	node := cluster.New(store, cluster.Options{Version: Version, Log: log.With("component", "cluster")})
	goBG(func() { node.Run(bg, lead) })
	// Remote collectors take their zones' jobs through /collector/v1.
	collectors := agentapi.New(store, sealer, engine, log.With("component", "collectors"), agentapi.Options{})
	collectors.Mount(mux)
	goBG(func() { collectors.Run(bg) })
	if cfg.MetricsListen != "" {
		stopMetrics, err := serveMetrics(cfg.MetricsListen, cfg.DataDir, store, node, syslogTrigger, log)
		if err != nil {
			ln.Close()
			stopBG()
			wg.Wait()
			return err
		}
		defer stopMetrics()
	}

	storeLog := []any{"data", cfg.DataDir, "version", Version}
	if cfg.Postgres() {
		storeLog = []any{"database", dbengine.RedactURL(cfg.DB), "version", Version}
	}
	errc := make(chan error, 1)
	go func() {
		if cfg.TLSCert != "" {
			log.Info("backupd listening", append([]any{"url", "https://" + ln.Addr().String()}, storeLog...)...)
			errc <- srv.ServeTLS(ln, cfg.TLSCert, cfg.TLSKey)
			return
		}
		log.Info("backupd listening", append([]any{"url", "http://" + ln.Addr().String()}, storeLog...)...)
		if msg := plainHTTPWarning(ln.Addr(), proxies); msg != "" {
			log.Warn(msg, "listen", ln.Addr().String())
		}
		errc <- srv.Serve(ln)
	}()

	select {
	case err = <-errc:
	case <-ctx.Done():
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		err = srv.Shutdown(sctx)
		cancel()
	}
	stopBG()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if err == nil {
		log.Info("stopped")
	}
	return err
}

// applyOutboundAllow saves serve's --outbound-allow to the settings (the
// settings page shows and edits the same list), audited.
func applyOutboundAllow(ctx context.Context, store *db.Store, list []string, stderr io.Writer) error {
	allow, err := netguard.ParseAllow(list)
	if err != nil {
		return fmt.Errorf("--outbound-allow: %w", err)
	}
	if err := netguard.Save(ctx, store, allow); err != nil {
		return err
	}
	audit(ctx, store, stderr, "settings.update", "settings", netguard.SettingAllow, map[string]any{"allow": netguard.Strings(allow)})
	return nil
}

// plainHTTPWarning is what serve warns of when it speaks plain HTTP on
// addr: "" on a loopback address (only this machine reaches it) or behind
// trusted proxies (they hold the TLS); otherwise how to add TLS.
func plainHTTPWarning(addr net.Addr, proxies []netip.Prefix) string {
	if len(proxies) > 0 {
		return ""
	}
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		return ""
	}
	return "serving plain HTTP on an address other machines can reach: passwords and session cookies cross the network unencrypted. " +
		"Add TLS with --tls-cert FILE --tls-key FILE (BACKUPD_TLS_CERT, BACKUPD_TLS_KEY), " +
		"or put a reverse proxy that terminates TLS in front and name it with --trusted-proxy ADDRESS (BACKUPD_TRUSTED_PROXY), " +
		"or listen on 127.0.0.1 only (--listen 127.0.0.1:8080)"
}

// serveMetrics serves /metrics on its own listener, so that the metrics
// can stay on a private address while the interface faces users.
func serveMetrics(addr, dataDir string, store *db.Store, node *cluster.Node, syslogTrigger *backup.SyslogTrigger, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	opts := metrics.Options{Version: Version, Commit: Commit, DataDir: dataDir}
	if syslogTrigger != nil {
		opts.Syslog = func() metrics.Syslog {
			s := syslogTrigger.Stats()
			dropped := make([]metrics.SyslogDrop, 0, len(syslog.Drops))
			for _, d := range syslog.Drops {
				dropped = append(dropped, metrics.SyslogDrop{Class: d.Class, Reason: d.Reason, Count: s.Dropped[d]})
			}
			return metrics.Syslog{
				Received: s.Received, Truncated: s.Truncated, Matched: s.Matched, UnknownSender: s.UnknownSender,
				Triggered: s.Triggered, Queued: s.Queued, Existing: s.Existing, Skipped: s.Skipped, Dropped: dropped, Evicted: s.Evicted,
				PendingDevices: s.PendingDevices, Connections: s.OpenConns,
			}
		}
	}
	mux.Handle("GET /metrics", metrics.Handler(opts, func(ctx context.Context) (metrics.State, error) {
		var st metrics.State
		var err error
		if st.FleetHealth, err = store.FleetHealth(ctx); err != nil {
			return st, err
		}
		if st.JobsQueued, st.JobsRunning, err = store.JobCounts(ctx); err != nil {
			return st, err
		}
		if st.DevicesByStatus, err = store.DevicesByStatus(ctx); err != nil {
			return st, err
		}
		q, err := store.DeliveryQueueState(ctx)
		if err != nil {
			return st, err
		}
		st.NotificationsPending, st.OldestNotification = q.Waiting, q.OldestWaiting
		if st.Snapshots, err = store.SnapshotFigures(ctx); err != nil {
			return st, err
		}
		st.DatabaseBytes = store.SizeBytes()
		st.ClusterLeader = node.Leader()
		if st.ClusterNodes, err = store.FreshNodes(ctx, time.Now()); err != nil {
			return st, err
		}
		online, offline, revoked, err := store.CollectorCounts(ctx, 90*time.Second)
		if err != nil {
			return st, err
		}
		st.Collectors = map[string]int{metrics.CollectorOnline: online, metrics.CollectorOffline: offline, metrics.CollectorRevoked: revoked}
		if st.RestoresOpen, err = store.OpenRestoreCounts(ctx); err != nil {
			return st, err
		}
		if st.ChangeSetsOpen, err = store.OpenChangeSetCounts(ctx); err != nil {
			return st, err
		}
		if st.Inventory, err = store.InventoryHealth(ctx, time.Now()); err != nil {
			return st, err
		}
		return st, nil
	}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute}
	log.Info("metrics listening", "url", "http://"+ln.Addr().String()+"/metrics")
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
