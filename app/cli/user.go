package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"backupd/app/auth"
	"backupd/app/config"
	"backupd/db"
)

func newUser(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Create and list users, set passwords, reset second factors"}
	cmd.AddCommand(newUserCreate(cfg), newUserPasswd(cfg), newUserList(cfg), newUserReset2FA(cfg))
	return cmd
}

// readPassword takes the first line of r.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	pw := strings.TrimRight(line, "\r\n")
	if err := auth.CheckNewPassword(pw); err != nil {
		return "", err
	}
	return pw, nil
}

func newUserCreate(cfg *config.Config) *cobra.Command {
	var roles []string
	var groups []int64
	var allGroups, pwStdin bool
	cmd := &cobra.Command{
		Use:   "create USERNAME",
		Short: "Create a user with roles and a device-group scope",
		Long: "Create a user. Without --all-groups and without --group, a non-admin user sees no device.\n" +
			"Without --password-stdin a random password is generated, shown once, and must be changed at first login.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			username := strings.TrimSpace(args[0])
			if username == "" || len(username) > 128 || strings.ContainsAny(username, " \t\r\n") {
				return fmt.Errorf("username %q: want 1 to 128 characters without spaces", args[0])
			}
			if allGroups && len(groups) > 0 {
				return errors.New("--all-groups and --group exclude each other")
			}
			password, mustChange := "", false
			if pwStdin {
				pw, err := readPassword(cmd.InOrStdin())
				if err != nil {
					return err
				}
				password = pw
			} else {
				password, mustChange = auth.RandomPassword(), true
			}
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			if len(roles) == 0 {
				roles = []string{auth.RoleViewer}
			}
			var roleIDs []int64
			for _, name := range roles {
				r, err := store.RoleByName(ctx, name)
				if errors.Is(err, db.ErrNotFound) {
					known, _ := store.ListRoleNames(ctx)
					return fmt.Errorf("no role %q; known roles: %s", name, strings.Join(known, ", "))
				}
				if err != nil {
					return err
				}
				roleIDs = append(roleIDs, r.ID)
			}
			hash, err := auth.HashPassword(password)
			if err != nil {
				return err
			}
			id, err := store.CreateUser(ctx, db.NewUser{
				Username: username, PasswordHash: hash, AllGroups: allGroups,
				MustChangePassword: mustChange, RoleIDs: roleIDs, GroupIDs: groups,
			})
			switch {
			case errors.Is(err, db.ErrNameExists):
				return fmt.Errorf("user %q already exists", username)
			case errors.Is(err, db.ErrNotFound):
				return fmt.Errorf("%v (see GET /api/v1/groups for group ids)", err)
			case err != nil:
				return err
			}
			audit(ctx, store, cmd.ErrOrStderr(), "user.create", "user", id,
				map[string]any{"username": username, "roles": roles, "all_groups": allGroups, "groups": groups})
			fmt.Fprintf(cmd.ErrOrStderr(), "created user %q with roles %s\n", username, strings.Join(roles, ", "))
			if mustChange {
				fmt.Fprintf(cmd.ErrOrStderr(), "one-time password (shown only now, must be changed at first login):\n\n    %s\n\n", password)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&roles, "role", nil, "role name (repeatable); default Viewer")
	f.Int64SliceVar(&groups, "group", nil, "device group id the user may see, with its subgroups (repeatable)")
	f.BoolVar(&allGroups, "all-groups", false, "the user sees every device group")
	f.BoolVar(&pwStdin, "password-stdin", false, "read the password from the first line of stdin")
	return cmd
}

func newUserPasswd(cfg *config.Config) *cobra.Command {
	var mustChange bool
	cmd := &cobra.Command{
		Use:   "passwd USERNAME",
		Short: "Set a user's password, read from the first line of stdin",
		Long: "Set a user's password, read from the first line of stdin. The user's web sessions end.\n" +
			"With --must-change the user has to choose a new password at the next sign-in (for a reset).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pw, err := readPassword(cmd.InOrStdin())
			if err != nil {
				return err
			}
			hash, err := auth.HashPassword(pw)
			if err != nil {
				return err
			}
			store, _, err := openData(cmd.Context(), cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			u, err := store.UserByName(cmd.Context(), args[0])
			if errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("no user %q", args[0])
			} else if err != nil {
				return err
			}
			if u.Source != db.UserLocal {
				return fmt.Errorf("%s signs in through %s: its password is there, backupd keeps none", u.Username, sourceName(u.Source))
			}
			// Whoever had the old password may have a browser signed in:
			// the user's web sessions end with it.
			if err := store.ResetPassword(cmd.Context(), u.ID, hash, mustChange, nil); err != nil {
				return err
			}
			var details map[string]any
			if mustChange {
				details = map[string]any{"must_change_password": true}
			}
			audit(cmd.Context(), store, cmd.ErrOrStderr(), "user.password", "user", args[0], details)
			fmt.Fprintf(cmd.ErrOrStderr(), "password of %q changed\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&mustChange, "must-change", false, "the user must change the password at the next sign-in")
	return cmd
}

func newUserList(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List users with roles and group scope",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printList(cmd, cfg, (*db.Store).ListUsers, "ID\tUSERNAME\tACTIVE\tROLES\tGROUPS\tCREATED\t2FA", func(w io.Writer, u db.User) {
				scope := "none"
				if u.AllGroups {
					scope = "all"
				} else if len(u.GroupIDs) > 0 {
					ids := make([]string, len(u.GroupIDs))
					for i, g := range u.GroupIDs {
						ids[i] = strconv.FormatInt(g, 10)
					}
					scope = strings.Join(ids, ",")
				}
				// The local second factor; a directory or provider
				// account's is its source's business.
				twoFA := "off"
				switch {
				case u.Source != db.UserLocal:
					twoFA = "-"
				case u.TOTPEnabled:
					twoFA = "on"
				}
				fmt.Fprintf(w, "%d\t%s\t%t\t%s\t%s\t%s\t%s\n", u.ID, u.Username, u.Active, strings.Join(u.Roles, ", "), scope, u.CreatedAt, twoFA)
			})
		},
	}
}

func newUserReset2FA(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "reset-2fa USERNAME",
		Short: "Clear a user's second factor (a lost phone) and end its web sessions",
		Long: "Clear a local user's second factor: its authenticator secret and recovery codes. The user's web\n" +
			"sessions end; it signs in with its password next and may set up a new second factor (at once,\n" +
			"when a role of it requires one). Works on the data directory, with or without a running server.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			u, err := store.UserByName(ctx, args[0])
			if errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("no user %q", args[0])
			} else if err != nil {
				return err
			}
			if err := store.ResetTOTP(ctx, u.ID); err != nil {
				return err
			}
			audit(ctx, store, cmd.ErrOrStderr(), "user.2fa_reset", "user", u.ID,
				map[string]any{"username": u.Username, "was_enabled": u.TOTPEnabled, "sessions_ended": true})
			if !u.TOTPEnabled {
				fmt.Fprintf(cmd.ErrOrStderr(), "user %q had no second factor set up; its web sessions have ended\n", u.Username)
				return nil
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "second factor of %q reset; its web sessions have ended\n", u.Username)
			return nil
		},
	}
}

// sourceName names where a user signs in, for messages.
func sourceName(source string) string {
	switch source {
	case db.UserLDAP:
		return "the LDAP directory"
	case db.UserOIDC:
		return "single sign-on"
	}
	return "a local password"
}
