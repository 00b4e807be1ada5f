package core

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"backupd/app/auth"
)

// Paths of the sections of the interface: the navigation's entries, and
// how one room links to another's pages without importing it.
const (
	PathLogin         = "/login"
	PathPassword      = "/account/password"
	PathDashboard     = "/dashboard"
	PathJobs          = "/jobs"
	PathSearch        = "/search"
	PathChanges       = "/changes"
	PathDevices       = "/devices"
	PathGroups        = "/groups"
	PathCredentials   = "/credentials"
	PathTemplates     = "/templates"
	PathSchedules     = "/schedules"
	PathRules         = "/rules"
	PathUsers         = "/users"
	PathRoles         = "/roles"
	PathAPIKeys       = "/api-keys"
	PathAudit         = "/audit"
	PathSettings      = "/settings"
	PathNotifications = "/notifications"
	PathPlatforms     = "/platforms"
	PathCollectors    = "/collectors"
	PathRestores      = "/restores"
	PathChangeSets    = "/change-sets"
)

// PathInventorySources is Settings → Inventory sources, which the device
// pages link to for a synced device.
const PathInventorySources = PathSettings + "/inventory-sources"

// DevicePath is a device's page.
func DevicePath(id int64) string { return PathDevices + "/" + strconv.FormatInt(id, 10) }

// DiffPath is the diff of a device's version backupID against the version
// before it.
func DiffPath(deviceID int64, backupID string) string {
	return DevicePath(deviceID) + "/diff?to=" + url.QueryEscape(backupID)
}

// VersionPath is the page of one stored version of a device.
func VersionPath(deviceID int64, backupID string) string {
	return DevicePath(deviceID) + "/versions/" + url.PathEscape(backupID)
}

// RestorePath is the page of one restore.
func RestorePath(id int64) string { return PathRestores + "/" + strconv.FormatInt(id, 10) }

// ChangeSetPath is the page of one change set.
func ChangeSetPath(id int64) string { return PathChangeSets + "/" + strconv.FormatInt(id, 10) }

// navigation is every section of the interface, grouped as the sidebar
// shows them, with the permission each needs. An entry shows only once its
// page is mounted (see MountPage) and only to users holding its
// permission; a group with no entry left is not shown.
var navigation = []navGroup{
	{Label: keyNavOverview, items: []navItem{
		{path: PathDashboard, label: keyNavDashboard, perm: "dashboard.view"},
		{path: PathJobs, label: keyNavJobs, perm: "backups.view"},
		{path: PathChanges, label: keyNavChanges, perm: "backups.view"},
		{path: PathSearch, label: keyNavSearch, perm: "backups.view"},
	}},
	{Label: keyNavInventory, items: []navItem{
		{path: PathDevices, label: keyNavDevices, perm: "devices.view"},
		{path: PathGroups, label: keyNavGroups, perm: "groups.view"},
		{path: PathCredentials, label: keyNavCredentials, perm: "credentials.view"},
		{path: PathTemplates, label: keyNavTemplates, perm: "templates.view"},
	}},
	{Label: keyNavBackups, items: []navItem{
		{path: PathSchedules, label: keyNavSchedules, perm: "schedules.view"},
		{path: PathRules, label: keyNavRules, perm: "settings.view"},
		// Those who ask for restores and those who approve them both
		// work from the list.
		{path: PathRestores, label: keyNavRestores, perm: auth.PermRestore, orPerm: auth.PermApprove},
		// So do those who write change sets and those who approve them.
		{path: PathChangeSets, label: keyNavChangeSets, perm: auth.PermPush, orPerm: auth.PermApprove},
	}},
	{Label: keyNavAdmin, items: []navItem{
		{path: PathUsers, label: keyNavUsers, perm: "users.view"},
		{path: PathRoles, label: keyNavRoles, perm: "roles.view"},
		{path: PathAPIKeys, label: keyNavAPIKeys, perm: "api_keys.view"},
		{path: PathAudit, label: keyNavAudit, perm: "audit.view"},
		{path: PathSettings, label: keyNavSettings, perm: "settings.view"},
		{path: PathNotifications, label: keyNavNotifications, perm: "settings.view"},
		{path: PathPlatforms, label: keyNavPlatforms, perm: "settings.view"},
		{path: PathCollectors, label: keyNavCollectors, perm: "settings.view"},
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
	// orPerm, when set, shows the entry to its holders too.
	orPerm string
}

// allowed reports whether s may see the entry.
func (it navItem) allowed(s *Session) bool {
	return s.Can(it.perm) || (it.orPerm != "" && s.Can(it.orPerm))
}

// navLink is one entry as the layout renders it.
type navLink struct {
	Path, Label string
	Current     bool
}

// MountPage registers a page that has an entry in the navigation (a
// "GET /path" pattern of one of the paths above); the entry shows from
// then on (to users holding perm).
func (u *UI) MountPage(mux *http.ServeMux, pattern, perm string, h Handler) {
	_, path, _ := strings.Cut(pattern, " ")
	u.mounted[path] = true
	mux.Handle(pattern, u.Page(perm, h))
}

// HomePath is the first page of the navigation s may open, "" when there
// is none.
func (u *UI) HomePath(s *Session) string {
	for _, g := range navigation {
		for _, it := range g.items {
			if u.mounted[it.path] && it.allowed(s) {
				return it.path
			}
		}
	}
	return ""
}

// navFor returns the navigation s may see, marking the entry of the page
// at urlPath, and that entry's path.
func (u *UI) navFor(s *Session, urlPath string) ([]navGroup, string) {
	var out []navGroup
	current := ""
	for _, g := range navigation {
		var links []navLink
		for _, it := range g.items {
			if !u.mounted[it.path] || !it.allowed(s) {
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
