package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"backupd/app/auth"
	"backupd/app/config"
	"backupd/db"
)

func newKey(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "key", Short: "Create, list and revoke API keys"}
	cmd.AddCommand(newKeyCreate(cfg), newKeyList(cfg), newKeyRevoke(cfg))
	return cmd
}

func newKeyCreate(cfg *config.Config) *cobra.Command {
	var username, name, expires string
	var perms []string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an API key; the key alone is printed on stdout, once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			name = strings.TrimSpace(name)
			if name == "" {
				return errors.New("--name is required: a label saying what the key is for")
			}
			if len(name) > 128 {
				return errors.New("--name must be at most 128 characters")
			}
			for _, p := range perms {
				if !auth.IsPermission(p) {
					return fmt.Errorf("--permission %q is not a permission; known: %s", p, strings.Join(auth.Permissions, ", "))
				}
			}
			var expiresAt *string
			if expires != "" {
				t, err := parseExpiry(expires, time.Now())
				if err != nil {
					return err
				}
				s := t.UTC().Format(db.TimeFormat)
				expiresAt = &s
			}
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			user, err := store.UserByName(ctx, username)
			if errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("no user %q (see `backupd user list`)", username)
			}
			if err != nil {
				return err
			}
			if len(perms) > 0 {
				grants, err := store.UserGrants(ctx, user.ID)
				if err != nil {
					return err
				}
				for _, p := range perms {
					if !grants.All && !grants.Permissions[p] {
						return fmt.Errorf("user %q does not hold %s; a key can only narrow its owner's permissions", username, p)
					}
				}
			}
			key, prefix, hash := auth.NewAPIKey()
			id, err := store.CreateAPIKey(ctx, db.APIKey{
				UserID: user.ID, Name: name, Prefix: prefix, Hash: hash,
				Narrowed: len(perms) > 0, Permissions: perms, ExpiresAt: expiresAt,
			})
			if err != nil {
				return err
			}
			audit(ctx, store, cmd.ErrOrStderr(), "api_key.create", "api_key", id,
				map[string]any{"name": name, "owner": username, "prefix": auth.KeyScheme + prefix, "permissions": perms, "expires_at": expiresAt})
			fmt.Fprintf(cmd.ErrOrStderr(), "created API key %d %q for user %q; it is shown only this once:\n", id, name, username)
			fmt.Fprintln(cmd.OutOrStdout(), key)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&username, "user", auth.AdminUsername, "user who owns the key (its permissions and group scope apply)")
	f.StringVar(&name, "name", "", "label saying what the key is for (required)")
	f.StringArrayVar(&perms, "permission", nil, "narrow the key to this permission (repeatable); default: all of the owner's")
	f.StringVar(&expires, "expires", "", "expiry: a duration such as 90d, 12h, 2w, or a date 2027-01-31")
	return cmd
}

// parseExpiry reads "90d", "2w", "12h", any Go duration, or a date.
func parseExpiry(v string, now time.Time) (time.Time, error) {
	bad := fmt.Errorf("--expires %q: want a duration such as 90d, 2w, 12h, or a date such as 2027-01-31", v)
	if t, err := time.ParseInLocation("2006-01-02", v, time.UTC); err == nil {
		if !t.After(now) {
			return t, fmt.Errorf("--expires %q is in the past", v)
		}
		return t, nil
	}
	var d time.Duration
	if n, err := strconv.Atoi(strings.TrimRight(v, "dw")); err == nil && len(v) > 1 && strings.ContainsAny(v[len(v)-1:], "dw") {
		unit := 24 * time.Hour
		if strings.HasSuffix(v, "w") {
			unit *= 7
		}
		if n <= 0 || n > 36500 {
			return time.Time{}, bad
		}
		d = time.Duration(n) * unit
	} else if pd, err := time.ParseDuration(v); err == nil && pd > 0 {
		d = pd
	} else {
		return time.Time{}, bad
	}
	return now.Add(d), nil
}

func newKeyList(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List API keys (never the keys themselves)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printList(cmd, cfg, (*db.Store).ListAPIKeys, "ID\tPREFIX\tNAME\tUSER\tSTATE\tEXPIRES\tLAST USED\tCREATED",
				func(w io.Writer, k db.APIKey) {
					state := "active"
					if k.RevokedAt != nil {
						state = "revoked"
					} else if k.ExpiresAt != nil && *k.ExpiresAt <= db.Now() {
						state = "expired"
					}
					fmt.Fprintf(w, "%d\t%s%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, auth.KeyScheme, k.Prefix, k.Name, k.Username,
						state, orDash(k.ExpiresAt), orDash(k.LastUsedAt), k.CreatedAt)
				})
		},
	}
}

func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func newKeyRevoke(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key; it is refused from then on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("key ID %q: want the number from `backupd key list`", args[0])
			}
			store, _, err := openData(cmd.Context(), cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.RevokeAPIKey(cmd.Context(), id); errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("no API key %d", id)
			} else if err != nil {
				return err
			}
			audit(cmd.Context(), store, cmd.ErrOrStderr(), "api_key.revoke", "api_key", id, nil)
			fmt.Fprintf(cmd.ErrOrStderr(), "revoked API key %d\n", id)
			return nil
		},
	}
}
