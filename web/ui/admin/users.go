package admin

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// The users page: who may sign in, with which roles and which device
// groups. Nobody hands out more than they hold: a role is granted only by
// someone holding all its permissions, a group only by someone who sees
// it, and a user is changed only by someone holding everything that user
// holds (else a helpdesk account with users.update could reset an
// administrator's password and become one).

// usersPage is the data of users.html.
type usersPage struct {
	Q      string
	Users  []userRow
	Total  int
	Pager  core.Pager
	Notice string
}

// userRow is a listed user; at most shownGroups group names are listed,
// MoreGroups counts the rest.
type userRow struct {
	db.UserSummary
	MoreGroups int
	Self       bool
	// TwoFactor is the user's second factor.
	TwoFactor db.TwoFactorSummary
}

const shownGroups = 3

var userNotices = map[string]string{
	"created": keyAdminUserCreated, "updated": keyAdminUserUpdated,
	"deleted": keyAdminUserDeleted, "password": keyAdminUserPasswordReset,
	"2fa_reset": keyAdmin2FAReset,
}

func (u *handlers) users(w http.ResponseWriter, r *http.Request) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	q = core.Truncate(q, core.MaxUsernameBytes)
	n := core.PageNumber(r, maxAdminPage)
	list, total, err := u.Store.UserPage(r.Context(), q, adminPageSize, (n-1)*adminPageSize)
	if err != nil {
		return err
	}
	p := usersPage{Q: q, Total: total, Pager: core.NewPager(r, n, adminPageSize, total), Notice: core.DoneNotice(r, userNotices)}
	ids := make([]int64, len(list))
	for i, us := range list {
		ids[i] = us.ID
	}
	factors, err := u.Store.TwoFactorSummaries(r.Context(), ids)
	if err != nil {
		return err
	}
	self := core.SessionOf(r).UserID
	for _, us := range list {
		row := userRow{UserSummary: us, Self: us.ID == self, TwoFactor: factors[us.ID]}
		if len(us.Groups) > shownGroups {
			row.MoreGroups = len(us.Groups) - shownGroups
			row.Groups = us.Groups[:shownGroups]
		}
		p.Users = append(p.Users, row)
	}
	return u.Render(w, r, http.StatusOK, "users.html", keyTitleUsers, p)
}

// userFormPage is the data of users_form.html: a new user (New) or an
// existing one.
type userFormPage struct {
	New      bool
	ID       int64
	Username string
	// Source is where the user signs in (db.UserLocal, UserLDAP,
	// UserOIDC); a directory or provider user has no password here, and
	// its roles follow its groups.
	Source string
	Self   bool
	// PasswordMode is "generate" or "set" (new users).
	PasswordMode string
	MustChange   bool
	Active       bool
	AllGroups    bool
	Roles        []roleChoice
	Groups       []groupChoice
	// Existing users: what the audit log knows and what this user may do.
	CreatedAt   time.Time
	LastLoginAt *time.Time
	CanEdit     bool
	CanDelete   bool
	// Locked: the user holds more than the signed-in one, who may only
	// look.
	Locked    bool
	MinLength int
	Error     string
	Args      []any
	Notice    string
	// SeesNothing: the user has neither every group nor any group, so
	// sees no device at all.
	SeesNothing bool
	// TwoFactor is the user's second factor; CanReset2FA lets the
	// signed-in user clear it (another user it may change).
	TwoFactor   db.TwoFactorSummary
	CanReset2FA bool
}

// roleChoice is a role checkbox; Disabled ones the signed-in user may not
// grant. Description is a message key for built-in roles, Text for
// custom ones.
type roleChoice struct {
	ID          int64
	Name        string
	Description string
	Text        string
	Checked     bool
	Disabled    bool
}

// groupChoice is a group checkbox, in tree order; Depth indents it.
type groupChoice struct {
	ID       int64
	Name     string
	Depth    int
	Checked  bool
	Disabled bool
}

func (u *handlers) newUserForm(w http.ResponseWriter, r *http.Request) error {
	p := userFormPage{New: true, PasswordMode: "generate", MustChange: true, Active: true}
	// The least role is ticked, as the command line defaults to it.
	var roleIDs []int64
	if viewer, err := u.Store.RoleByName(r.Context(), auth.RoleViewer); err == nil {
		roleIDs = []int64{viewer.ID}
	}
	return u.renderUserForm(w, r, http.StatusOK, p, roleIDs, nil)
}

// renderUserForm fills the role and group choices (roleIDs and groupIDs
// ticked) and renders the form.
func (u *handlers) renderUserForm(w http.ResponseWriter, r *http.Request, status int, p userFormPage, roleIDs, groupIDs []int64) error {
	s := core.SessionOf(r)
	roles, err := u.Store.ListRoles(r.Context())
	if err != nil {
		return err
	}
	editable := p.New || p.CanEdit
	for _, ro := range roles {
		c := roleChoice{ID: ro.ID, Name: ro.Name, Checked: slices.Contains(roleIDs, ro.ID),
			Disabled: !editable || !s.Principal().CanGrantRole(ro.Role)}
		if ro.Builtin {
			c.Description = builtinRoleDescriptions[ro.Name]
		}
		if c.Description == "" {
			c.Text = ro.Description
		}
		p.Roles = append(p.Roles, c)
	}
	tree, err := u.GroupTree(r.Context())
	if err != nil {
		return err
	}
	scope := s.Scope()
	for _, g := range tree.Ordered() {
		p.Groups = append(p.Groups, groupChoice{ID: g.ID, Name: g.Name, Depth: min(g.Depth, maxIndent),
			Checked: slices.Contains(groupIDs, g.ID), Disabled: !editable || !tree.Covers(scope, g.ID)})
	}
	p.MinLength = auth.MinPasswordLength
	title := keyTitleUserNew
	if !p.New {
		title = keyTitleUserEdit
	}
	return u.Render(w, r, status, "users_form.html", title, p)
}

// maxIndent is the deepest indentation the group picker draws.
const maxIndent = 6
