package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/gitmirror"
	"backupd/app/netguard"
	"backupd/app/secret"
	"backupd/db"
)

func newExport(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "export", Short: "Export the stored configurations (git) or the device list (csv)"}
	cmd.AddCommand(newExportGit(cfg), newExportCSV(cfg))
	commandLineOnly(cmd)
	return cmd
}

// rewriteWarning is what --rewrite says before it acts, and what it
// asks --yes for.
const rewriteWarning = `WARNING: --rewrite replaces the git mirror's whole history with a new one,
written as secret masking is set now, and force-pushes it over the remote's
branch. Every clone, fork and cache of the remote made before keeps the old
commits: treat each secret they held in clear text as exposed and change it
on the devices. The old working clone is kept in the data directory (its
path is printed); delete it once the new history is pushed.
`

func newExportGit(cfg *config.Config) *cobra.Command {
	var history, rewrite, yes, noPush bool
	cmd := &cobra.Command{
		Use:   "git [--history [--rewrite --yes]]",
		Short: "Write the git mirror now (DATA/git/mirror) and push it to its remote",
		Long: `Write the latest good configuration of every device into the git mirror in
the data directory (DATA/git/mirror: one file per device, named after it,
under a folder per group when the mirror's groups setting is on) and commit
it, naming the devices that changed; nothing is committed when nothing
changed. Then push to the configured remote, unless --no-push.

--history fills an empty mirror with the whole stored history instead (a
device's first backup and each change): one commit per past run (backups
less than 10 minutes apart, no device twice), oldest first, dated when its
last backup ran, so that git log -p DEVICE shows each change.

--history --rewrite replaces a mirror's existing history the same way: to
mask the secrets of commits written before masking was on (see
docs/secrets.md). It asks for --yes, since everyone who cloned the remote
keeps the old commits, and force-pushes.

Needs the git program (apt install git); backups themselves never do.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rewrite {
				if !history {
					return errors.New("--rewrite goes with --history: it writes the whole history anew")
				}
				fmt.Fprint(cmd.ErrOrStderr(), rewriteWarning)
				if !yes {
					return errors.New("nothing was changed: add --yes to replace the mirror's history")
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			store, sealer, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			m := gitmirror.New(store, sealer, cfg.Logger(cmd.ErrOrStderr()), cfg.DataDir)
			out := cmd.OutOrStdout()
			if rewrite {
				moved, n, err := m.RewriteHistory(ctx)
				if moved != "" {
					fmt.Fprintf(out, "moved the old clone to %s\n", moved)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "wrote %d commit(s) into %s\n", n, m.Dir())
				if noPush {
					return nil
				}
				return pushMirror(ctx, store, m, out, true)
			}
			if history {
				n, err := m.Backfill(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "wrote %d commit(s) into %s\n", n, m.Dir())
			} else {
				res, err := m.Sync(ctx)
				if fe := (*gitmirror.ForeignCommitError)(nil); errors.As(err, &fe) && !noPush {
					// Recorded as the push's failure (settings page,
					// metric, git.push_failed); the refusal is the error.
					_ = pushMirror(ctx, store, m, out, false)
				}
				if err != nil {
					return err
				}
				printSync(out, res, m.Dir())
			}
			if noPush {
				return nil
			}
			return pushMirror(ctx, store, m, out, false)
		},
	}
	cmd.Flags().BoolVar(&history, "history", false, "fill an empty mirror with the whole history, one commit per past run, oldest first")
	cmd.Flags().BoolVar(&rewrite, "rewrite", false, "with --history: replace the mirror's existing history (to mask secrets it holds), then force-push")
	cmd.Flags().BoolVar(&yes, "yes", false, "with --rewrite: go ahead, having read its warning")
	cmd.Flags().BoolVar(&noPush, "no-push", false, "commit only; do not push to the remote")
	return cmd
}

// printSync says what a Sync committed.
func printSync(out io.Writer, res gitmirror.Result, dir string) {
	if res.LayoutCommit != "" {
		fmt.Fprintf(out, "committed %.12s: layout changed, %d file(s) moved in %s\n", res.LayoutCommit, len(res.Moved), dir)
	}
	switch {
	case res.Commit == "":
		fmt.Fprintf(out, "nothing changed since the last commit in %s\n", dir)
	case res.Commit != res.LayoutCommit:
		fmt.Fprintf(out, "committed %.12s: %d file(s) changed in %s\n", res.Commit, len(res.Changes), dir)
	}
}

// pushMirror pushes to the configured remote, if any, and says how it
// went; force pushes a rewritten history over the remote's.
func pushMirror(ctx context.Context, store *db.Store, m *gitmirror.Mirror, out io.Writer, force bool) error {
	gm, err := store.GitMirrorSettings(ctx)
	if err != nil {
		return err
	}
	if gm.RemoteURL == "" {
		return nil
	}
	push, what, done := m.Push, "push", "pushed to"
	if force {
		push, what, done = m.ForcePush, "force-push", "force-pushed the new history to"
	}
	remote := gitmirror.PublicRemote(gm.RemoteURL, nil)
	if err := push(ctx); err != nil {
		return fmt.Errorf("%s to %s: %w", what, remote, err)
	}
	fmt.Fprintf(out, "%s %s\n", done, remote)
	return nil
}

// mirrorAfterRun commits a backup run to the git mirror when the mirror is
// enabled. A mirror failure is reported, never the run's failure.
func mirrorAfterRun(ctx context.Context, store *db.Store, sealer *secret.Sealer, log *slog.Logger, dataDir string, stderr io.Writer) {
	gm, err := store.GitMirrorSettings(ctx)
	if err != nil || !gm.Enabled {
		return
	}
	m := gitmirror.New(store, sealer, log, dataDir)
	// One try: the run is over, and the next run (or the server) pushes
	// whatever is left.
	m.PushAttempts = 1
	res, err := m.Sync(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "warning: %v\n", err)
		if fe := (*gitmirror.ForeignCommitError)(nil); errors.As(err, &fe) {
			_ = pushMirror(ctx, store, m, io.Discard, false) // records the refusal
		}
		return
	}
	if res.LayoutCommit != "" {
		fmt.Fprintf(stderr, "git mirror: committed %.12s (layout changed, %d file(s) moved)\n", res.LayoutCommit, len(res.Moved))
	}
	if res.Commit != "" && res.Commit != res.LayoutCommit {
		fmt.Fprintf(stderr, "git mirror: committed %.12s (%d file(s) changed)\n", res.Commit, len(res.Changes))
	}
	if err := pushMirror(ctx, store, m, io.Discard, false); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "warning: git mirror: %v\n", err)
	}
}

// applyGitFlags saves the git mirror flags serve was given (by flag or
// environment) to the mirror's settings, secrets sealed.
func applyGitFlags(ctx context.Context, store *db.Store, sealer *secret.Sealer, g config.GitFlags, stderr io.Writer) error {
	if len(g.Set) == 0 || len(g.Set) == 1 && g.Set["git-max-wait"] {
		return nil
	}
	gm, err := store.GitMirrorSettings(ctx)
	if err != nil {
		return err
	}
	readFile := func(flag, path string) (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("--%s: %w", flag, err)
		}
		return string(b), nil
	}
	var changed []string
	for name := range g.Set {
		changed = append(changed, name)
		switch name {
		case "git-mirror":
			gm.Enabled = g.Enable
		case "git-groups":
			gm.Groups = g.Groups
		case "git-remote":
			gm.RemoteURL = strings.TrimSpace(g.Remote)
		case "git-branch":
			gm.Branch = strings.TrimSpace(g.Branch)
		case "git-author-name":
			gm.AuthorName = strings.TrimSpace(g.AuthorName)
		case "git-author-email":
			gm.AuthorEmail = strings.TrimSpace(g.AuthorEmail)
		case "git-https-user":
			gm.HTTPSUsername = strings.TrimSpace(g.HTTPSUser)
		case "git-known-hosts-file":
			text, err := readFile(name, g.KnownHostsFile)
			if err != nil {
				return err
			}
			if err := gitmirror.CheckKnownHosts(text); err != nil {
				return fmt.Errorf("--%s: %w", name, err)
			}
			gm.KnownHosts = strings.TrimSpace(text)
		case "git-ssh-key-file":
			key, err := readFile(name, g.SSHKeyFile)
			if err != nil {
				return err
			}
			if err := gitmirror.CheckPrivateKey(key); err != nil {
				return fmt.Errorf("--%s: %w", name, err)
			}
			gm.SSHKey = sealer.Seal(key, secret.PurposeGitKey)
		case "git-allow-local-remote":
			gm.AllowLocalRemote = g.AllowLocalRemote
		case "git-token-file":
			tok, err := readFile(name, g.TokenFile)
			if err != nil {
				return err
			}
			gm.HTTPSToken = sealer.Seal(strings.TrimSpace(tok), secret.PurposeGitToken)
		}
	}
	outbound, err := netguard.Load(ctx, store)
	if err != nil {
		return err
	}
	if err := gitmirror.Validate(gm, outbound); err != nil {
		return fmt.Errorf("git mirror flags: %w", err)
	}
	if err := store.PutSetting(ctx, db.SettingGitMirror, gm); err != nil {
		return err
	}
	slices.Sort(changed)
	audit(ctx, store, stderr, "settings.update", "settings", db.SettingGitMirror, map[string]any{"flags": changed})
	return nil
}
