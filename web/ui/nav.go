package ui

import (
	"net/http"
	"strings"
)

// Paths of the pages this package serves, and of the sections the
// navigation knows.
const (
	pathLogin     = "/login"
	pathPassword  = "/account/password"
	pathDashboard = "/dashboard"
)

// navigation is every section of the interface, grouped as the sidebar
// shows them, with the permission each needs. An entry shows only once its
// page is mounted (see mountPage) and only to users holding its
// permission; a group with no entry left is not shown.
var navigation = []navGroup{
	{Label: keyNavOverview, items: []navItem{
		{path: pathDashboard, label: keyNavDashboard, perm: "dashboard.view"},
		{path: "/jobs", label: keyNavJobs, perm: "backups.view"},
		{path: "/search", label: keyNavSearch, perm: "backups.view"},
	}},
	{Label: keyNavInventory, items: []navItem{
		{path: "/devices", label: keyNavDevices, perm: "devices.view"},
		{path: "/groups", label: keyNavGroups, perm: "groups.view"},
		{path: "/credentials", label: keyNavCredentials, perm: "credentials.view"},
		{path: "/templates", label: keyNavTemplates, perm: "templates.view"},
	}},
	{Label: keyNavBackups, items: []navItem{
		{path: "/schedules", label: keyNavSchedules, perm: "schedules.view"},
		{path: "/rules", label: keyNavRules, perm: "settings.view"},
	}},
	{Label: keyNavAdmin, items: []navItem{
		{path: "/users", label: keyNavUsers, perm: "users.view"},
		{path: "/roles", label: keyNavRoles, perm: "roles.view"},
		{path: "/api-keys", label: keyNavAPIKeys, perm: "api_keys.view"},
		{path: "/audit", label: keyNavAudit, perm: "audit.view"},
		{path: "/settings", label: keyNavSettings, perm: "settings.view"},
		{path: pathNotifications, label: keyNavNotifications, perm: "settings.view"},
		{path: pathPlatforms, label: keyNavPlatforms, perm: "settings.view"},
		{path: pathCollectors, label: keyNavCollectors, perm: "settings.view"},
	}},
}

// navGroup is a titled group of the sidebar. Label is a message key.
type navGroup struct {
	Label string
	Items []navLink
	items []navItem
}

type navItem struct {
	path, label, perm string
}

// navLink is one entry as the layout renders it.
type navLink struct {
	Path, Label string
	Current     bool
}

// navFor returns the navigation s may see, marking the entry of the page
// at urlPath, and that entry's path.
func (u *UI) navFor(s *Session, urlPath string) ([]navGroup, string) {
	var out []navGroup
	current := ""
	for _, g := range navigation {
		var links []navLink
		for _, it := range g.items {
			if !u.mounted[it.path] || !s.Can(it.perm) {
				continue
			}
			here := urlPath == it.path || strings.HasPrefix(urlPath, it.path+"/")
			if here {
				current = it.path
			}
			links = append(links, navLink{Path: it.path, Label: it.label, Current: here})
		}
		if len(links) > 0 {
			out = append(out, navGroup{Label: g.Label, Items: links})
		}
	}
	return out, current
}

// forbidden is the error page for a user who lacks the permission a page
// or an action needs. Handlers return it for actions beyond the page's own
// permission (a form that deletes, say) and for a device outside the
// user's scope.
func forbidden() error {
	return &pageError{status: http.StatusForbidden, message: keyErrForbidden}
}
