package admin

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"backupd/app/identity"
	"backupd/app/identity/ldapdir"
	"backupd/db"
	"backupd/web/ui/core"
)

// The sign-in settings: LDAP / Active Directory, OpenID Connect, and the
// mappings of their groups to roles and scope. Whoever edits them decides
// who may sign in and with which roles — pointing the directory elsewhere
// is as good as mapping a group — so saving anything here needs
// users.create and users.update besides settings.update, and the right to
// grant every role and scope any mapping gives, before and after.

// pathSignIn is the sign-in settings page.
const pathSignIn = core.PathSettings + "/sign-in"

// signInPage is the data of settings_signin.html.
type signInPage struct {
	LDAP ldapForm
	OIDC oidcForm
	// LDAPMap and OIDCMap are the mappings as shown, with the
	// add-a-mapping form's choices.
	LDAPMap, OIDCMap mappingSection
	// BreakGlass are the active local accounts holding every
	// permission: they sign in whatever the directory's state.
	BreakGlass []string
	// LocalUsers, LDAPUsers and OIDCUsers count active users by source.
	LocalUsers, LDAPUsers, OIDCUsers int
	// SyncEvery is the sync interval as text.
	SyncEvery string
	CanEdit   bool
	// Test is the LDAP test's report, when one ran.
	Test *ldapTest
	// Sync is the result of "Sync now", when it ran.
	Sync *syncResult
	// Notice is a message key; Error a refusal's key with Args, Section
	// the section it belongs to.
	Notice, Error, Section string
	Args                   []any
	// Fields are a refused form's problems, by field.
	Fields map[string]fieldProblem
}

// fieldProblem is a field's problem: a message key of ours, or the text
// a protocol package's validation wrote (in English).
type fieldProblem struct{ Key, Text string }

// ldapForm is the LDAP section as stored or as typed.
type ldapForm struct {
	db.LDAPSettings
	HasBindPassword, ClearBindPassword bool
	Timeout, SyncInterval              string
}

// oidcForm is the OpenID Connect section as stored or as typed.
type oidcForm struct {
	db.OIDCSettings
	HasClientSecret, ClearClientSecret bool
	Scopes                             string
	RedirectURL                        string
}

// ldapFormOf is the LDAP section as stored.
func ldapFormOf(s db.LDAPSettings) ldapForm {
	f := ldapForm{LDAPSettings: s}
	if s.Timeout > 0 {
		f.Timeout = time.Duration(s.Timeout).String()
	}
	if s.SyncInterval > 0 {
		f.SyncInterval = time.Duration(s.SyncInterval).String()
	}
	return f
}

// oidcFormOf is the OpenID Connect section as stored.
func oidcFormOf(s db.OIDCSettings) oidcForm {
	return oidcForm{OIDCSettings: s, Scopes: strings.Join(s.Scopes, " ")}
}

// mappingSection is one source's mappings and the add form's choices.
type mappingSection struct {
	Source  string
	Rows    []mappingRow
	Roles   []roleChoice
	Groups  []groupChoice
	CanEdit bool
}

// mappingRow is one mapping with its roles' and groups' names.
type mappingRow struct {
	Group     string
	Roles     []string
	AllGroups bool
	Groups    []string
}

// ldapTest is a test's outcome: the report and what the groups found
// give.
type ldapTest struct {
	Username string
	Report   ldapdir.Report
	// Steps are the report's steps with their names' message keys.
	Steps   []testStep
	Roles   []string
	Matched []string
}

// testStep is a step of the test as the page shows it: its name's
// message key, and the directory's own words (English) for the detail.
type testStep struct {
	Key    string
	OK     bool
	Detail string
}

// stepKeys are the message keys of the test's steps.
var stepKeys = map[string]string{
	ldapdir.StepConnect: keySignInStepConnect, ldapdir.StepServiceBind: keySignInStepServiceBind,
	ldapdir.StepUserSearch: keySignInStepUserSearch, ldapdir.StepGroups: keySignInStepGroups,
}

// syncResult is a "Sync now" outcome.
type syncResult struct {
	Report identity.SyncReport
	Error  string
}

func (u *handlers) signInSettings(w http.ResponseWriter, r *http.Request) error {
	p := signInPage{}
	switch r.URL.Query().Get("done") {
	case "ldap":
		p.Notice = keySignInLDAPSaved
	case "oidc":
		p.Notice = keySignInOIDCSaved
	case "mapping_added":
		p.Notice = keySignInMappingAdded
	case "mapping_deleted":
		p.Notice = keySignInMappingDeleted
	}
	return u.renderSignIn(w, r, http.StatusOK, p, false)
}

// renderSignIn fills what the page shows beside the forms (typed: the
// forms hold what was typed and stay so).
func (u *handlers) renderSignIn(w http.ResponseWriter, r *http.Request, status int, p signInPage, typed bool) error {
	ctx := r.Context()
	lset, err := u.Store.LDAPConfig(ctx)
	if err != nil {
		return err
	}
	oset, err := u.Store.OIDCConfig(ctx)
	if err != nil {
		return err
	}
	if !typed {
		p.LDAP, p.OIDC = ldapFormOf(lset), oidcFormOf(oset)
	}
	p.LDAP.HasBindPassword = len(lset.BindPassword) > 0
	p.OIDC.HasClientSecret = len(oset.ClientSecret) > 0
	if p.OIDC.ExternalURL != "" {
		p.OIDC.RedirectURL = strings.TrimRight(p.OIDC.ExternalURL, "/") + "/login/oidc/callback"
	}
	p.SyncEvery = shortDuration(identity.SyncInterval(lset))
	roles, err := u.Store.ListRoles(ctx)
	if err != nil {
		return err
	}
	tree, err := u.GroupTree(ctx)
	if err != nil {
		return err
	}
	p.CanEdit = u.mayEditSignIn(r, roles, tree, lset.Mappings, oset.Mappings) == ""
	s := core.SessionOf(r)
	var roleChoices []roleChoice
	for _, ro := range roles {
		roleChoices = append(roleChoices, roleChoice{ID: ro.ID, Name: ro.Name, Disabled: !p.CanEdit || !s.Principal().CanGrantRole(ro.Role)})
	}
	var groupChoices []groupChoice
	for _, g := range tree.Ordered() {
		groupChoices = append(groupChoices, groupChoice{ID: g.ID, Name: g.Name, Depth: min(g.Depth, maxIndent),
			Disabled: !p.CanEdit || !tree.Covers(s.Scope(), g.ID)})
	}
	p.LDAPMap = mappingSection{Source: db.UserLDAP, Rows: mappingRows(lset.Mappings, roles, tree),
		Roles: roleChoices, Groups: groupChoices, CanEdit: p.CanEdit}
	p.OIDCMap = mappingSection{Source: db.UserOIDC, Rows: mappingRows(oset.Mappings, roles, tree),
		Roles: roleChoices, Groups: groupChoices, CanEdit: p.CanEdit}
	users, err := u.Store.ListUsers(ctx)
	if err != nil {
		return err
	}
	for _, us := range users {
		if !us.Active {
			continue
		}
		switch us.Source {
		case db.UserLDAP:
			p.LDAPUsers++
		case db.UserOIDC:
			p.OIDCUsers++
		default:
			p.LocalUsers++
			if g, err := u.Store.UserGrants(ctx, us.ID); err == nil && g.All {
				p.BreakGlass = append(p.BreakGlass, us.Username)
			}
		}
	}
	return u.Render(w, r, status, "settings_signin.html", keySignInTitle, p)
}

// mappingRows names the mappings' roles and groups.
func mappingRows(ms []db.GroupMapping, roles []db.RoleSummary, tree core.GroupTree) []mappingRow {
	rows := make([]mappingRow, 0, len(ms))
	for _, m := range ms {
		row := mappingRow{Group: m.Group, AllGroups: m.AllGroups}
		for _, id := range m.RoleIDs {
			if i := slices.IndexFunc(roles, func(r db.RoleSummary) bool { return r.ID == id }); i >= 0 {
				row.Roles = append(row.Roles, roles[i].Name)
			}
		}
		for _, id := range m.GroupIDs {
			if g, ok := tree.Group(id); ok {
				row.Groups = append(row.Groups, g.Name)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// mayEditSignIn says why the session may not change the sign-in
// settings ("" when it may): the permissions to create and change users,
// and the right to grant every role and scope of every mapping.
func (u *handlers) mayEditSignIn(r *http.Request, roles []db.RoleSummary, tree core.GroupTree, mappings ...[]db.GroupMapping) string {
	s := core.SessionOf(r)
	if !s.Can("settings.update") || !s.Can("users.create") || !s.Can("users.update") {
		return keySignInErrPermission
	}
	for _, ms := range mappings {
		for _, m := range ms {
			if msg := mayGrant(s, roles, tree, m); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// mayGrant says why s may not give what m gives ("" when it may).
func mayGrant(s *core.Session, roles []db.RoleSummary, tree core.GroupTree, m db.GroupMapping) string {
	for _, id := range m.RoleIDs {
		i := slices.IndexFunc(roles, func(r db.RoleSummary) bool { return r.ID == id })
		if i >= 0 && !s.Principal().CanGrantRole(roles[i].Role) {
			return keySignInErrAboveYou
		}
	}
	if !tree.CoversAll(s.Scope(), m.AllGroups, m.GroupIDs) {
		return keySignInErrAboveYou
	}
	return ""
}

// guard loads what the checks need and refuses a session that may not
// edit (403 with the reason on the page).
func (u *handlers) guardSignIn(w http.ResponseWriter, r *http.Request, extra ...db.GroupMapping) (refused bool, err error) {
	ctx := r.Context()
	lset, err := u.Store.LDAPConfig(ctx)
	if err != nil {
		return true, err
	}
	oset, err := u.Store.OIDCConfig(ctx)
	if err != nil {
		return true, err
	}
	roles, err := u.Store.ListRoles(ctx)
	if err != nil {
		return true, err
	}
	tree, err := u.GroupTree(ctx)
	if err != nil {
		return true, err
	}
	if msg := u.mayEditSignIn(r, roles, tree, lset.Mappings, oset.Mappings, extra); msg != "" {
		return true, u.renderSignIn(w, r, http.StatusForbidden, signInPage{Error: msg}, false)
	}
	return false, nil
}

// saveLDAP stores the LDAP section (or fills in a preset's schema
// fields without saving, action=preset).
func (u *handlers) saveLDAP(w http.ResponseWriter, r *http.Request) error {
	if refused, err := u.guardSignIn(w, r); refused || err != nil {
		return err
	}
	f := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	in := db.LDAPSettings{
		Enabled: r.PostFormValue("enabled") == "1", URL: f("url"), Security: f("security"),
		CACert: strings.TrimSpace(strings.ReplaceAll(r.PostFormValue("ca_cert"), "\r\n", "\n")),
		Preset: f("preset"), BindDN: f("bind_dn"), BaseDN: f("base_dn"), UserFilter: f("user_filter"),
		UsernameAttr: f("username_attr"), GroupMode: f("group_mode"), GroupBaseDN: f("group_base_dn"),
		GroupFilter: f("group_filter"), GroupMemberAttr: f("group_member_attr"),
	}
	typed := ldapForm{LDAPSettings: in, ClearBindPassword: r.PostFormValue("clear_bind_password") == "1",
		Timeout: f("timeout"), SyncInterval: f("sync_interval")}
	page := signInPage{LDAP: typed, Section: "ldap"}
	if r.PostFormValue("action") == "preset" {
		if ps, ok := ldapdir.Preset(in.Preset); ok {
			typed.UserFilter, typed.UsernameAttr, typed.GroupMode = ps.UserFilter, ps.UsernameAttr, ps.GroupMode
			typed.GroupFilter, typed.GroupMemberAttr = ps.GroupFilter, ps.GroupMemberAttr
		}
		page.LDAP = typed
		return u.renderSignInTyped(w, r, http.StatusOK, page)
	}
	var bad bool
	if in.Timeout, bad = formDuration(typed.Timeout); bad {
		return u.refuseSignIn(w, r, page, map[string]fieldProblem{"timeout": {Key: keySignInErrDuration}})
	}
	if in.SyncInterval, bad = formDuration(typed.SyncInterval); bad {
		return u.refuseSignIn(w, r, page, map[string]fieldProblem{"sync_interval": {Key: keySignInErrDuration}})
	}
	if len(r.PostFormValue("bind_password")) > 1024 || len(in.CACert) > 65536 {
		return u.refuseSignIn(w, r, page, map[string]fieldProblem{"bind_password": {Key: keySignInErrTooLong}})
	}
	before, after, err := identity.SaveLDAP(r.Context(), u.Store, u.Sealer, in,
		identity.Secret{Value: r.PostFormValue("bind_password"), Clear: typed.ClearBindPassword})
	if err != nil {
		return u.refuseSignInErr(w, r, page, err)
	}
	u.AuditAs(r, "settings.update", "settings", db.SettingLDAP, identity.LDAPAudit(before, after))
	http.Redirect(w, r, pathSignIn+"?done=ldap#ldap", http.StatusSeeOther)
	return nil
}

// formDuration reads an optional duration field ("" is 0); bad reports
// text that is not one.
func formDuration(s string) (db.Duration, bool) {
	if s == "" {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, true
	}
	return db.Duration(d), false
}

// saveOIDC stores the OpenID Connect section.
func (u *handlers) saveOIDC(w http.ResponseWriter, r *http.Request) error {
	if refused, err := u.guardSignIn(w, r); refused || err != nil {
		return err
	}
	f := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	in := db.OIDCSettings{
		Enabled: r.PostFormValue("enabled") == "1", Name: f("name"), Issuer: f("issuer"), ClientID: f("client_id"),
		ExternalURL: f("external_url"), Scopes: strings.Fields(r.PostFormValue("scopes")),
		UsernameClaim: f("username_claim"), GroupsClaim: f("groups_claim"),
		CACert: strings.TrimSpace(strings.ReplaceAll(r.PostFormValue("ca_cert"), "\r\n", "\n")),
	}
	typed := oidcForm{OIDCSettings: in, ClearClientSecret: r.PostFormValue("clear_client_secret") == "1", Scopes: f("scopes")}
	page := signInPage{OIDC: typed, Section: "oidc"}
	if len(r.PostFormValue("client_secret")) > 4096 || len(in.CACert) > 65536 {
		return u.refuseSignIn(w, r, page, map[string]fieldProblem{"client_secret": {Key: keySignInErrTooLong}})
	}
	before, after, err := identity.SaveOIDC(r.Context(), u.Store, u.Sealer, in,
		identity.Secret{Value: r.PostFormValue("client_secret"), Clear: typed.ClearClientSecret})
	if err != nil {
		return u.refuseSignInErr(w, r, page, err)
	}
	u.AuditAs(r, "settings.update", "settings", db.SettingOIDC, identity.OIDCAudit(before, after))
	http.Redirect(w, r, pathSignIn+"?done=oidc#oidc", http.StatusSeeOther)
	return nil
}

// renderSignInTyped shows the page with the typed section kept (the
// other section as stored).
func (u *handlers) renderSignInTyped(w http.ResponseWriter, r *http.Request, status int, p signInPage) error {
	ctx := r.Context()
	lset, err := u.Store.LDAPConfig(ctx)
	if err != nil {
		return err
	}
	oset, err := u.Store.OIDCConfig(ctx)
	if err != nil {
		return err
	}
	if p.Section != "ldap" {
		p.LDAP = ldapFormOf(lset)
	}
	if p.Section != "oidc" {
		p.OIDC = oidcFormOf(oset)
	}
	return u.renderSignIn(w, r, status, p, true)
}

// refuseSignIn answers a refused section with its field problems.
func (u *handlers) refuseSignIn(w http.ResponseWriter, r *http.Request, p signInPage, fields map[string]fieldProblem) error {
	p.Fields, p.Error = fields, keySignInErrFields
	return u.renderSignInTyped(w, r, http.StatusUnprocessableEntity, p)
}

// refuseSignInErr turns a save's error into the page's refusal.
func (u *handlers) refuseSignInErr(w http.ResponseWriter, r *http.Request, p signInPage, err error) error {
	var fe identity.FieldErrors
	switch {
	case errors.As(err, &fe):
		fields := map[string]fieldProblem{}
		for _, e := range fe {
			if _, ok := fields[e.Field]; !ok {
				fields[e.Field] = fieldProblem{Text: e.Message}
			}
		}
		return u.refuseSignIn(w, r, p, fields)
	case errors.Is(err, identity.ErrHostRefused):
		field := "url"
		if p.Section == "oidc" {
			field = "issuer"
		}
		return u.refuseSignIn(w, r, p, map[string]fieldProblem{field: {Text: err.Error()}})
	}
	return err
}

// testLDAP binds, searches a named user and reads its groups with the
// settings as stored, and shows each step and the roles the groups give.
func (u *handlers) testLDAP(w http.ResponseWriter, r *http.Request) error {
	if refused, err := u.guardSignIn(w, r); refused || err != nil {
		return err
	}
	ctx := r.Context()
	username := strings.TrimSpace(r.PostFormValue("username"))
	p := signInPage{Section: "ldap-test"}
	set, err := u.Store.LDAPConfig(ctx)
	if err != nil {
		return err
	}
	t := &ldapTest{Username: core.Truncate(username, core.MaxUsernameBytes)}
	dir, err := identity.OpenLDAP(set, u.Sealer)
	if err != nil {
		t.Report.Steps = []ldapdir.Step{{Name: "settings", Detail: err.Error()}}
	} else {
		tctx, cancel := context.WithTimeout(ctx, ldapTestTimeout)
		t.Report = dir.Test(tctx, username)
		cancel()
	}
	for _, st := range t.Report.Steps {
		key, ok := stepKeys[st.Name]
		if !ok {
			key = keySignInStepSettings
		}
		t.Steps = append(t.Steps, testStep{Key: key, OK: st.OK, Detail: st.Detail})
	}
	if t.Report.Entry != nil {
		a := identity.Resolve(set.Mappings, t.Report.Entry.GroupKeys())
		t.Matched = a.Matched
		roles, err := u.Store.ListRoles(ctx)
		if err != nil {
			return err
		}
		for _, ro := range roles {
			if slices.Contains(a.RoleIDs, ro.ID) {
				t.Roles = append(t.Roles, ro.Name)
			}
		}
	}
	p.Test = t
	u.AuditAs(r, "signin.ldap_test", "settings", db.SettingLDAP, map[string]any{"username": t.Username, "found": t.Report.Entry != nil})
	return u.renderSignIn(w, r, http.StatusOK, p, false)
}

// ldapTestTimeout bounds the Test button's whole conversation.
const ldapTestTimeout = 30 * time.Second

// syncNow runs the directory sync once, bounded, and shows its outcome.
func (u *handlers) syncNow(w http.ResponseWriter, r *http.Request) error {
	if refused, err := u.guardSignIn(w, r); refused || err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), syncNowTimeout)
	defer cancel()
	s := identity.Syncer{Store: u.Store, Sealer: u.Sealer, Log: u.Log}
	rep, err := s.Sync(ctx)
	res := &syncResult{Report: rep}
	if err != nil {
		res.Error = err.Error()
	}
	u.AuditAs(r, "signin.ldap_sync", "settings", db.SettingLDAP, map[string]any{
		"checked": rep.Checked, "changed": rep.Changed, "disabled": rep.Disabled, "failed": err != nil})
	return u.renderSignIn(w, r, http.StatusOK, signInPage{Sync: res, Section: "ldap-sync"}, false)
}

// syncNowTimeout bounds "Sync now".
const syncNowTimeout = 2 * time.Minute

// saveMapping adds (action=add) or deletes (action=delete) a mapping of
// source (ldap or oidc).
func (u *handlers) saveMapping(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	source := r.PostFormValue("source")
	if source != db.UserLDAP && source != db.UserOIDC {
		return badSignInForm()
	}
	section := source + "-mappings"
	if r.PostFormValue("action") == "delete" {
		if refused, err := u.guardSignIn(w, r); refused || err != nil {
			return err
		}
		gone, err := identity.DeleteMapping(ctx, u.Store, source, r.PostFormValue("group"))
		if errors.Is(err, identity.ErrNoMapping) {
			return u.renderSignIn(w, r, http.StatusNotFound, signInPage{Error: keySignInErrNoMapping, Section: section}, false)
		}
		if err != nil {
			return err
		}
		u.AuditAs(r, "signin.mapping_delete", "settings", source, mappingAudit(ctx, u, source, gone))
		http.Redirect(w, r, pathSignIn+"?done=mapping_deleted#"+section, http.StatusSeeOther)
		return nil
	}
	roleIDs, ok := core.FormIDs(r, "role")
	groupIDs, ok2 := core.FormIDs(r, "group")
	if !ok || !ok2 {
		return badSignInForm()
	}
	m := db.GroupMapping{Group: strings.TrimSpace(r.PostFormValue("group_name")), RoleIDs: roleIDs,
		AllGroups: r.PostFormValue("scope") == "all", GroupIDs: groupIDs}
	if m.AllGroups {
		m.GroupIDs = nil
	}
	if refused, err := u.guardSignIn(w, r, m); refused || err != nil {
		return err
	}
	roles, err := u.Store.ListRoles(ctx)
	if err != nil {
		return err
	}
	tree, err := u.GroupTree(ctx)
	if err != nil {
		return err
	}
	for _, id := range m.RoleIDs {
		if !slices.ContainsFunc(roles, func(r db.RoleSummary) bool { return r.ID == id }) {
			return u.renderSignIn(w, r, http.StatusUnprocessableEntity, signInPage{Error: keyAdminErrUnknownRole, Section: section}, false)
		}
	}
	for _, id := range m.GroupIDs {
		if _, ok := tree.Group(id); !ok {
			return u.renderSignIn(w, r, http.StatusUnprocessableEntity, signInPage{Error: keyAdminErrUnknownGroup, Section: section}, false)
		}
	}
	err = identity.AddMapping(ctx, u.Store, source, m)
	if key, ok := mappingErrors[errorKey(err)]; ok {
		return u.renderSignIn(w, r, http.StatusUnprocessableEntity, signInPage{Error: key, Section: section}, false)
	}
	if err != nil {
		return err
	}
	u.AuditAs(r, "signin.mapping_add", "settings", source, mappingAudit(ctx, u, source, m))
	http.Redirect(w, r, pathSignIn+"?done=mapping_added#"+section, http.StatusSeeOther)
	return nil
}

// mappingErrors are AddMapping's refusals and their message keys.
var mappingErrors = map[error]string{
	identity.ErrMappingGroup:  keySignInErrMappingGroup,
	identity.ErrMappingRoles:  keyAdminErrNoRole,
	identity.ErrMappingExists: keySignInErrMappingExists,
	identity.ErrMappingLimit:  keySignInErrMappingLimit,
}

// errorKey is the mappingErrors key err matches (nil when none).
func errorKey(err error) error {
	for k := range mappingErrors {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

// mappingAudit is what the audit log keeps of a mapping: the group, and
// its roles and groups by name as well as by id.
func mappingAudit(ctx context.Context, u *handlers, source string, m db.GroupMapping) map[string]any {
	d := map[string]any{"source": source, "group": m.Group, "role_ids": m.RoleIDs, "all_groups": m.AllGroups, "group_ids": m.GroupIDs}
	if names, err := u.roleNames(ctx, m.RoleIDs); err == nil {
		d["roles"] = names
	}
	return d
}

// badSignInForm answers a form no page of ours sends.
func badSignInForm() error {
	return &core.PageError{Status: http.StatusBadRequest, Message: keyAdminErrBadForm}
}

// shortDuration writes d without Go's trailing zero units: 15m, 1h, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
