package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"backupd/app/auth"
	"backupd/app/config"
	"backupd/web"
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
	return cmd
}

// shutdownGrace bounds how long in-flight requests get after SIGTERM.
const shutdownGrace = 15 * time.Second

func serve(ctx context.Context, cfg config.Config, stderr interface{ Write([]byte) (int, error) }) error {
	log := cfg.Logger(stderr)
	slog.SetDefault(log)
	store, sealer, err := openData(ctx, cfg.DataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()

	keys := auth.NewKeyAuthenticator(store, log.With("component", "auth"))
	mux := http.NewServeMux()
	loc, err := cfg.Location()
	if err != nil {
		return err
	}
	api := apiv1.Mount(mux, apiv1.Deps{Store: store, Sealer: sealer, Keys: keys, Log: log.With("component", "api"), Version: Version, Location: loc})
	api.MountDocs(mux)

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	srv := &http.Server{
		Handler:           web.Wrap(mux, log.With("component", "http")),
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
	engine, stopCollection, err := startCollection(ctx, bg, cfg, store, sealer, log, goBG)
	defer stopCollection()
	if err != nil {
		ln.Close()
		stopBG()
		wg.Wait()
		return err
	}
	ui.Mount(mux, ui.Deps{Store: store, Sealer: sealer, Engine: engine, Log: log.With("component", "ui"), Location: loc, Version: Version})

	errc := make(chan error, 1)
	go func() {
		if cfg.TLSCert != "" {
			log.Info("backupd listening", "url", "https://"+ln.Addr().String(), "data", cfg.DataDir, "version", Version)
			errc <- srv.ServeTLS(ln, cfg.TLSCert, cfg.TLSKey)
			return
		}
		log.Info("backupd listening", "url", "http://"+ln.Addr().String(), "data", cfg.DataDir, "version", Version)
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
