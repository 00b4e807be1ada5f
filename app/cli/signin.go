package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"backupd/app/config"
	"backupd/app/identity"
	"backupd/app/identity/ldapdir"
	"backupd/db"
)

// The sign-in settings from the command line, for a headless set-up:
// every flag is also an environment variable (BACKUPD_LDAP_URL,
// BACKUPD_OIDC_ISSUER, …), and a flag left out keeps what is stored.
// Secrets come from files, never from the command line, where other
// users of the machine could read them.

func newSignIn(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "signin", Short: "Set up LDAP / Active Directory and OpenID Connect sign-in"}
	cmd.AddCommand(newSignInShow(cfg), newSignInLDAP(cfg), newSignInOIDC(cfg), newSignInMap(cfg), newSignInUnmap(cfg),
		newSignInTest(cfg), newSignInSync(cfg))
	return cmd
}

func newSignInShow(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "show",
		Short: "Show the sign-in settings (never a secret) and their mappings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			l, err := store.LDAPConfig(ctx)
			if err != nil {
				return err
			}
			o, err := store.OIDCConfig(ctx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "ldap\t%s\n", onOff(l.Enabled))
			for _, kv := range [][2]string{{"url", l.URL}, {"security", l.Security}, {"bind dn", l.BindDN},
				{"bind password", stored(len(l.BindPassword) > 0)}, {"ca certificate", pinned(l.CACert)},
				{"base dn", l.BaseDN}, {"user filter", l.UserFilter}, {"username attribute", l.UsernameAttr},
				{"group mode", l.GroupMode}, {"group base dn", l.GroupBaseDN}, {"group filter", l.GroupFilter},
				{"timeout", ldapTimeout(l)}, {"sync interval", identity.SyncInterval(l).String()}} {
				fmt.Fprintf(tw, "  %s\t%s\n", kv[0], kv[1])
			}
			fmt.Fprintf(tw, "oidc\t%s\n", onOff(o.Enabled))
			for _, kv := range [][2]string{{"name", o.Name}, {"issuer", o.Issuer}, {"client id", o.ClientID},
				{"client secret", stored(len(o.ClientSecret) > 0)}, {"ca certificate", pinned(o.CACert)}, {"external url", o.ExternalURL},
				{"scopes", strings.Join(o.Scopes, " ")}, {"username claim", o.UsernameClaim}, {"groups claim", o.GroupsClaim}} {
				fmt.Fprintf(tw, "  %s\t%s\n", kv[0], kv[1])
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, src := range []struct {
				name string
				ms   []db.GroupMapping
			}{{db.UserLDAP, l.Mappings}, {db.UserOIDC, o.Mappings}} {
				for _, m := range src.ms {
					roles, _ := roleNamesByID(ctx, store, m.RoleIDs)
					scope := "no device group"
					if m.AllGroups {
						scope = "all device groups"
					} else if len(m.GroupIDs) > 0 {
						scope = fmt.Sprintf("device groups %v", m.GroupIDs)
					}
					fmt.Fprintf(out, "map %s %q → %s; %s\n", src.name, m.Group, strings.Join(roles, ", "), scope)
				}
			}
			return nil
		},
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// pinned says whether a CA certificate is pinned (it is no secret, but
// long).
func pinned(pem string) string {
	if pem == "" {
		return "(none: the system's authorities)"
	}
	return "(pinned)"
}

// ldapTimeout is the settings' timeout or the default.
func ldapTimeout(s db.LDAPSettings) string {
	if s.Timeout > 0 {
		return time.Duration(s.Timeout).String()
	}
	return ldapdir.DefaultTimeout.String()
}

func stored(b bool) string {
	if b {
		return "(stored, sealed)"
	}
	return "(none)"
}

// roleNamesByID names role ids (unknown ones as their number).
func roleNamesByID(ctx context.Context, store *db.Store, ids []int64) ([]string, error) {
	roles, err := store.ListRoles(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		name := fmt.Sprintf("role %d", id)
		for _, r := range roles {
			if r.ID == id {
				name = r.Name
			}
		}
		out = append(out, name)
	}
	return out, nil
}

// setChanged sets *dst to v when the flag name was given (or set from
// the environment): a flag left out keeps the stored value.
func setChanged(fl *pflag.FlagSet, name string, dst *string, v string) {
	if fl.Changed(name) {
		*dst = v
	}
}

// readSecretFile reads a secret from a file ("-": standard input), its
// first line, bounded.
func readSecretFile(path string, stdin io.Reader) (string, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return "", err
	}
	s, _, _ := strings.Cut(string(b), "\n")
	s = strings.TrimRight(s, "\r")
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return s, nil
}

// readPEMFile reads a CA certificate file ("" keeps none).
func readPEMFile(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if len(b) > 64<<10 {
		return "", fmt.Errorf("%s: larger than 64 KiB", path)
	}
	return strings.TrimSpace(string(b)), nil
}

func newSignInLDAP(cfg *config.Config) *cobra.Command {
	var in db.LDAPSettings
	var enabled bool
	var caFile, pwFile, preset string
	var clearPW bool
	var timeout, syncEvery time.Duration
	cmd := &cobra.Command{
		Use:   "ldap",
		Short: "Set the LDAP / Active Directory sign-in (flags left out keep their stored value)",
		Long: "Set the LDAP / Active Directory sign-in. Only the flags given change; each is also read from\n" +
			"BACKUPD_<FLAG> (BACKUPD_LDAP_URL, BACKUPD_LDAP_BIND_PASSWORD_FILE, …). --ldap-preset fills the\n" +
			"filter, attribute and group fields with a directory type's usual values, before the other flags apply.\n" +
			"Example:\n  backupd signin ldap --ldap-enabled --ldap-url ldaps://dc1.corp.example:636 --ldap-security ldaps \\\n" +
			"    --ldap-ca-cert-file corp-ca.pem --ldap-preset ad --ldap-bind-dn 'CN=backupd,OU=Services,DC=corp,DC=example' \\\n" +
			"    --ldap-bind-password-file /run/secrets/ldap --ldap-base-dn 'OU=Staff,DC=corp,DC=example'",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			store, sealer, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			cur, err := store.LDAPConfig(ctx)
			if err != nil {
				return err
			}
			fl := cmd.Flags()
			if fl.Changed("ldap-preset") {
				p, ok := ldapdir.Preset(preset)
				if !ok {
					return fmt.Errorf("--ldap-preset %q: want openldap, ad or ad-upn", preset)
				}
				cur.Preset, cur.UserFilter, cur.UsernameAttr = preset, p.UserFilter, p.UsernameAttr
				cur.GroupMode, cur.GroupFilter, cur.GroupMemberAttr = p.GroupMode, p.GroupFilter, p.GroupMemberAttr
			}
			set := func(name string, dst *string, v string) { setChanged(fl, name, dst, v) }
			set("ldap-url", &cur.URL, in.URL)
			set("ldap-security", &cur.Security, in.Security)
			set("ldap-bind-dn", &cur.BindDN, in.BindDN)
			set("ldap-base-dn", &cur.BaseDN, in.BaseDN)
			set("ldap-user-filter", &cur.UserFilter, in.UserFilter)
			set("ldap-username-attr", &cur.UsernameAttr, in.UsernameAttr)
			set("ldap-group-mode", &cur.GroupMode, in.GroupMode)
			set("ldap-group-base-dn", &cur.GroupBaseDN, in.GroupBaseDN)
			set("ldap-group-filter", &cur.GroupFilter, in.GroupFilter)
			set("ldap-group-member-attr", &cur.GroupMemberAttr, in.GroupMemberAttr)
			if fl.Changed("ldap-enabled") {
				cur.Enabled = enabled
			}
			if fl.Changed("ldap-timeout") {
				cur.Timeout = db.Duration(timeout)
			}
			if fl.Changed("ldap-sync-interval") {
				cur.SyncInterval = db.Duration(syncEvery)
			}
			if fl.Changed("ldap-ca-cert-file") {
				if cur.CACert, err = readPEMFile(caFile); err != nil {
					return fmt.Errorf("--ldap-ca-cert-file: %w", err)
				}
			}
			bind := identity.Secret{Clear: clearPW}
			if pwFile != "" {
				if bind.Value, err = readSecretFile(pwFile, cmd.InOrStdin()); err != nil {
					return fmt.Errorf("--ldap-bind-password-file: %w", err)
				}
			}
			before, after, err := identity.SaveLDAP(ctx, store, sealer, cur, bind)
			if err != nil {
				return flagErrors(err, "ldap-")
			}
			audit(ctx, store, cmd.ErrOrStderr(), "settings.update", "settings", db.SettingLDAP, identity.LDAPAudit(before, after))
			fmt.Fprintf(cmd.OutOrStdout(), "LDAP sign-in saved (%s); test it with: backupd signin test USERNAME\n", onOff(after.Enabled))
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&enabled, "ldap-enabled", false, "let directory users sign in (--ldap-enabled=false turns it off)")
	f.StringVar(&preset, "ldap-preset", "", "fill the schema fields for a directory type: openldap, ad (sAMAccountName) or ad-upn (userPrincipalName)")
	f.StringVar(&in.URL, "ldap-url", "", "server URL, ldaps://host:636 or ldap://host:389")
	f.StringVar(&in.Security, "ldap-security", "", "ldaps, starttls, or insecure (plain LDAP: passwords readable on the network)")
	f.StringVar(&caFile, "ldap-ca-cert-file", "", "PEM file of the CA that signed the server's certificate (empty: the system's)")
	f.StringVar(&in.BindDN, "ldap-bind-dn", "", "service account DN (empty: search anonymously)")
	f.StringVar(&pwFile, "ldap-bind-password-file", "", "file holding the service account's password (- for standard input; stored sealed)")
	f.BoolVar(&clearPW, "ldap-clear-bind-password", false, "forget the stored service account password")
	f.StringVar(&in.BaseDN, "ldap-base-dn", "", "base DN where users are searched")
	f.StringVar(&in.UserFilter, "ldap-user-filter", "", "user filter; {username} stands for the typed name, escaped")
	f.StringVar(&in.UsernameAttr, "ldap-username-attr", "", "attribute that is the backupd user name (uid, sAMAccountName, userPrincipalName)")
	f.StringVar(&in.GroupMode, "ldap-group-mode", "", "how groups are found: memberof, search (nested followed) or ad-chain")
	f.StringVar(&in.GroupBaseDN, "ldap-group-base-dn", "", "base DN of groups (empty: the users' base DN)")
	f.StringVar(&in.GroupFilter, "ldap-group-filter", "", "filter of group entries, e.g. (objectClass=groupOfNames)")
	f.StringVar(&in.GroupMemberAttr, "ldap-group-member-attr", "", "group attribute listing members (member, uniqueMember)")
	f.DurationVar(&timeout, "ldap-timeout", 0, "bound of each conversation with the server (default 10s)")
	f.DurationVar(&syncEvery, "ldap-sync-interval", 0, "how often directory users are read again (default 15m)")
	return cmd
}

func newSignInOIDC(cfg *config.Config) *cobra.Command {
	var in db.OIDCSettings
	var enabled, clearSecret bool
	var caFile, secretFile string
	var scopes []string
	cmd := &cobra.Command{
		Use:   "oidc",
		Short: "Set the OpenID Connect single sign-on (flags left out keep their stored value)",
		Long: "Set the OpenID Connect single sign-on. Only the flags given change; each is also read from\n" +
			"BACKUPD_<FLAG> (BACKUPD_OIDC_ISSUER, BACKUPD_OIDC_CLIENT_SECRET_FILE, …). Register backupd at the\n" +
			"provider with the redirect URL EXTERNAL_URL/login/oidc/callback.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			store, sealer, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			cur, err := store.OIDCConfig(ctx)
			if err != nil {
				return err
			}
			fl := cmd.Flags()
			set := func(name string, dst *string, v string) { setChanged(fl, name, dst, v) }
			set("oidc-name", &cur.Name, in.Name)
			set("oidc-issuer", &cur.Issuer, in.Issuer)
			set("oidc-client-id", &cur.ClientID, in.ClientID)
			set("oidc-external-url", &cur.ExternalURL, in.ExternalURL)
			set("oidc-username-claim", &cur.UsernameClaim, in.UsernameClaim)
			set("oidc-groups-claim", &cur.GroupsClaim, in.GroupsClaim)
			if fl.Changed("oidc-enabled") {
				cur.Enabled = enabled
			}
			if fl.Changed("oidc-scopes") {
				cur.Scopes = scopes
			}
			if fl.Changed("oidc-ca-cert-file") {
				if cur.CACert, err = readPEMFile(caFile); err != nil {
					return fmt.Errorf("--oidc-ca-cert-file: %w", err)
				}
			}
			sec := identity.Secret{Clear: clearSecret}
			if secretFile != "" {
				if sec.Value, err = readSecretFile(secretFile, cmd.InOrStdin()); err != nil {
					return fmt.Errorf("--oidc-client-secret-file: %w", err)
				}
			}
			before, after, err := identity.SaveOIDC(ctx, store, sealer, cur, sec)
			if err != nil {
				return flagErrors(err, "oidc-")
			}
			audit(ctx, store, cmd.ErrOrStderr(), "settings.update", "settings", db.SettingOIDC, identity.OIDCAudit(before, after))
			fmt.Fprintf(cmd.OutOrStdout(), "single sign-on saved (%s); redirect URL to register at the provider: %s/login/oidc/callback\n",
				onOff(after.Enabled), strings.TrimRight(after.ExternalURL, "/"))
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&enabled, "oidc-enabled", false, "show the single sign-on button (--oidc-enabled=false hides it)")
	f.StringVar(&in.Name, "oidc-name", "", "the provider's name on the button (Keycloak, Entra ID, …)")
	f.StringVar(&in.Issuer, "oidc-issuer", "", "issuer URL (discovery at ISSUER/.well-known/openid-configuration)")
	f.StringVar(&in.ClientID, "oidc-client-id", "", "client ID registered at the provider")
	f.StringVar(&secretFile, "oidc-client-secret-file", "", "file holding the client secret (- for standard input; stored sealed; none: a public client)")
	f.BoolVar(&clearSecret, "oidc-clear-client-secret", false, "forget the stored client secret")
	f.StringVar(&in.ExternalURL, "oidc-external-url", "", "how browsers reach backupd, e.g. https://backupd.example.com (behind a proxy, its URL)")
	f.StringSliceVar(&scopes, "oidc-scopes", nil, "scopes beside openid (default profile,email,groups)")
	f.StringVar(&in.UsernameClaim, "oidc-username-claim", "", "claim that is the user name (default preferred_username)")
	f.StringVar(&in.GroupsClaim, "oidc-groups-claim", "", "claim holding the groups (default groups)")
	f.StringVar(&caFile, "oidc-ca-cert-file", "", "PEM file of the CA that signed the provider's certificate (empty: the system's)")
	return cmd
}

// mappingFlags are map's flags.
type mappingFlags struct {
	roles, groups []string
	all           bool
}

func newSignInMap(cfg *config.Config) *cobra.Command {
	var mf mappingFlags
	cmd := &cobra.Command{
		Use:   "map ldap|oidc GROUP",
		Short: "Give the members of a directory group (or holders of a claim value) roles and device groups",
		Long: "Map a group to roles and a device-group scope. GROUP is an LDAP group's DN or name, or a value of\n" +
			"the provider's groups claim. Several mappings add up; a user in no mapped group cannot sign in.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			m, err := mf.mapping(ctx, store, args[1])
			if err != nil {
				return err
			}
			if err := identity.AddMapping(ctx, store, args[0], m); err != nil {
				return mappingError(err)
			}
			names, _ := roleNamesByID(ctx, store, m.RoleIDs)
			audit(ctx, store, cmd.ErrOrStderr(), "signin.mapping_add", "settings", args[0], map[string]any{
				"source": args[0], "group": m.Group, "role_ids": m.RoleIDs, "roles": names, "all_groups": m.AllGroups, "group_ids": m.GroupIDs})
			fmt.Fprintf(cmd.OutOrStdout(), "mapped %s group %q to %s\n", args[0], m.Group, strings.Join(names, ", "))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&mf.roles, "role", nil, "a role it gives (repeat for several; at least one)")
	f.StringArrayVar(&mf.groups, "group", nil, "a device group it gives, by name or ID (repeat for several)")
	f.BoolVar(&mf.all, "all-groups", false, "it gives every device group")
	return cmd
}

// mapping reads the flags into a mapping of group.
func (mf mappingFlags) mapping(ctx context.Context, store *db.Store, group string) (db.GroupMapping, error) {
	m := db.GroupMapping{Group: group, AllGroups: mf.all}
	if mf.all && len(mf.groups) > 0 {
		return m, errors.New("--all-groups and --group exclude each other")
	}
	if len(mf.roles) == 0 {
		return m, errors.New("name at least one --role")
	}
	for _, name := range mf.roles {
		r, err := store.RoleByName(ctx, name)
		if errors.Is(err, db.ErrNotFound) {
			known, _ := store.ListRoleNames(ctx)
			return m, fmt.Errorf("no role %q; known roles: %s", name, strings.Join(known, ", "))
		}
		if err != nil {
			return m, err
		}
		m.RoleIDs = append(m.RoleIDs, r.ID)
	}
	for _, arg := range mf.groups {
		g, err := resolveGroup(ctx, store, arg)
		if err != nil {
			return m, err
		}
		m.GroupIDs = append(m.GroupIDs, g.ID)
	}
	return m, nil
}

// mappingError words a mapping refusal for the command line.
func mappingError(err error) error {
	if errors.Is(err, identity.ErrSource) {
		return errors.New("the first argument is ldap or oidc")
	}
	return err
}

func newSignInUnmap(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "unmap ldap|oidc GROUP",
		Short: "Delete a group's mapping (its users lose what it gave at their next sign-in or sync)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			gone, err := identity.DeleteMapping(ctx, store, args[0], args[1])
			if errors.Is(err, identity.ErrNoMapping) {
				return fmt.Errorf("no %s mapping of %q (see backupd signin show)", args[0], args[1])
			}
			if err != nil {
				return mappingError(err)
			}
			audit(ctx, store, cmd.ErrOrStderr(), "signin.mapping_delete", "settings", args[0], map[string]any{
				"source": args[0], "group": gone.Group, "role_ids": gone.RoleIDs})
			fmt.Fprintf(cmd.OutOrStdout(), "deleted the %s mapping of %q\n", args[0], gone.Group)
			return nil
		},
	}
}

func newSignInTest(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "test USERNAME",
		Short: "Bind to the directory, look a user up and show its groups and the roles they give (no password)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			store, sealer, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			set, err := store.LDAPConfig(ctx)
			if err != nil {
				return err
			}
			dir, err := identity.OpenLDAP(set, sealer)
			if err != nil {
				return err
			}
			tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			rep := dir.Test(tctx, args[0])
			out := cmd.OutOrStdout()
			failed := false
			for _, s := range rep.Steps {
				mark := "ok"
				if !s.OK {
					mark, failed = "FAILED", true
				}
				fmt.Fprintf(out, "%-6s %s", mark, s.Name)
				if s.Detail != "" {
					fmt.Fprintf(out, ": %s", s.Detail)
				}
				fmt.Fprintln(out)
			}
			if e := rep.Entry; e != nil {
				fmt.Fprintf(out, "dn: %s\nuser: %s\n", e.DN, e.Username)
				for _, g := range e.Groups {
					fmt.Fprintf(out, "group: %s (%s)\n", g.Name, g.DN)
				}
				a := identity.Resolve(set.Mappings, e.GroupKeys())
				if len(a.RoleIDs) == 0 {
					fmt.Fprintln(out, "roles: none — in no mapped group, this user cannot sign in")
				} else {
					names, _ := roleNamesByID(ctx, store, a.RoleIDs)
					fmt.Fprintf(out, "roles: %s (from %s)\n", strings.Join(names, ", "), strings.Join(a.Matched, "; "))
				}
			}
			if failed {
				return errors.New("the directory test failed")
			}
			return nil
		},
	}
}

func newSignInSync(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "sync",
		Short: "Read the directory users again now: roles follow groups, users gone from the directory are disabled",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			store, sealer, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			s := identity.Syncer{Store: store, Sealer: sealer, Log: cfg.Logger(cmd.ErrOrStderr())}
			rep, err := s.Sync(ctx)
			fmt.Fprintf(cmd.OutOrStdout(), "checked %d, changed %d, disabled %d\n", rep.Checked, rep.Changed, rep.Disabled)
			return err
		},
	}
}

// flagErrors words refused settings by the flags that set them
// (--ldap-base-dn: …), one per line.
func flagErrors(err error, prefix string) error {
	var fe identity.FieldErrors
	if !errors.As(err, &fe) {
		return err
	}
	lines := []string{"the settings were not saved:"}
	for _, e := range fe {
		name := prefix + strings.ReplaceAll(e.Field, "_", "-")
		switch e.Field {
		case "ca_cert":
			name += "-file"
		case "bind_password", "client_secret":
			name += "-file"
		}
		lines = append(lines, "  --"+name+": "+e.Message)
	}
	return errors.New(strings.Join(lines, "\n"))
}
