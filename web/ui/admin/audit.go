package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"backupd/app/identity"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// The audit log page: every change, newest first, filtered by user,
// action, interface, target type, date range and text. Pages are walked
// along the log's time index and not counted: "older" shows while more
// entries match.

// auditPage is the data of audit.html.
type auditPage struct {
	Filter  auditForm
	Entries []auditRow
	Pager   core.Pager
	Zone    string
	// Filtered is set when any filter applies.
	Filtered bool
	Error    string
}

// auditForm is the filter form as typed.
type auditForm struct {
	User, Action, Interface, Target, From, To, Q string
}

// auditRow is one entry as the page shows it. Via names the key or
// session the change came through.
type auditRow struct {
	At        time.Time
	Username  string
	Interface string
	// InterfaceLabel is the interface's name as a message key.
	InterfaceLabel string
	KeyPrefix      string
	KeyID          int64
	Session        string
	Action         string
	TargetType     string
	TargetID       string
	// TargetName is the target's name as the entry recorded it, and
	// TargetURL its page; both "" when unknown (a deleted target's page
	// answers 404, which says so).
	TargetName string
	TargetURL  string
	RequestID  string
	RemoteAddr string
	Details    []detail
}

// detail is one key=value of an entry's details.
type detail struct{ Key, Value string }

// auditInterfaces are the interfaces and their names' message keys.
var auditInterfaces = map[string]string{"web": keyAdminIfaceWeb, "api": keyAdminIfaceAPI, "cli": keyAdminIfaceCLI,
	identity.AuditInterface: keyAdminIfaceSystem}

// maxFilterBytes bounds each filter field.
const maxFilterBytes = 200

func (u *handlers) auditLog(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	field := func(name string) string { return core.Truncate(strings.TrimSpace(q.Get(name)), maxFilterBytes) }
	form := auditForm{User: field("user"), Action: field("action"), Interface: field("interface"),
		Target: field("target"), From: field("from"), To: field("to"), Q: field("q")}
	p := auditPage{Filter: form, Zone: u.DefaultZone()}
	// A user scoped to some device groups sees no entry about another
	// group's devices, as the devices list shows none of them.
	scope := core.SessionOf(r).Scope()
	f := db.AuditFilter{Username: form.User, Action: form.Action, TargetType: form.Target, Text: form.Q, Scope: &scope}
	if _, ok := auditInterfaces[form.Interface]; ok {
		f.Interface = form.Interface
	}
	status := http.StatusOK
	var err error
	if f.From, err = u.day(form.From, 0); err != nil {
		p.Error, status = keyAdminErrAuditFrom, http.StatusUnprocessableEntity
	}
	// "To" is the day itself, included: the range ends at the next
	// midnight.
	if f.To, err = u.day(form.To, 1); err != nil {
		p.Error, status = keyAdminErrAuditTo, http.StatusUnprocessableEntity
	}
	p.Filtered = form != auditForm{}
	n := core.PageNumber(r, maxAdminPage)
	if p.Error == "" {
		records, more, err := u.Store.SearchAudit(r.Context(), f, adminPageSize, (n-1)*adminPageSize)
		if err != nil {
			return err
		}
		// Not counted: only "newer" and "older" are known.
		p.Pager = core.Pager{Page: n}
		if n > 1 {
			p.Pager.PrevURL = core.PageURL(r.URL.Path, q, n-1)
		}
		if more && n < maxAdminPage {
			p.Pager.NextURL = core.PageURL(r.URL.Path, q, n+1)
		}
		for _, rec := range records {
			p.Entries = append(p.Entries, auditRowOf(rec))
		}
	}
	return u.Render(w, r, status, "audit.html", keyTitleAudit, p)
}

// day reads a date of the filter form as the midnight starting it in the
// server's zone, plus addDays; "" is the zero time.
func (u *handlers) day(v string, addDays int) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation(time.DateOnly, v, u.Location)
	if err != nil {
		return time.Time{}, err
	}
	return t.AddDate(0, 0, addDays), nil
}

func auditRowOf(rec db.AuditRecord) auditRow {
	row := auditRow{Username: rec.Username, Interface: rec.Interface, Action: rec.Action, TargetType: rec.TargetType,
		TargetID: rec.TargetID, RequestID: rec.RequestID, RemoteAddr: rec.RemoteAddr, Details: details(rec.Details)}
	row.At, _ = db.ParseTime(rec.At)
	row.InterfaceLabel = labelOr(auditInterfaces, rec.Interface)
	row.TargetName, row.TargetURL = auditTarget(rec)
	if rec.KeyID != nil && *rec.KeyID != 0 {
		row.KeyID = *rec.KeyID
		if rec.KeyPrefix != "" {
			row.KeyPrefix = auth.KeyScheme + rec.KeyPrefix
		}
	}
	if rec.SessionID != nil && *rec.SessionID != "" {
		row.Session = core.Truncate(*rec.SessionID, 8)
	}
	return row
}

// auditTargetPages are the pages of the targets that have one, by
// target type.
var auditTargetPages = map[string]string{
	"device": core.PathDevices, "group": core.PathGroups, "user": core.PathUsers, "role": core.PathRoles,
	"credential": core.PathCredentials, "template": core.PathTemplates, "schedule": core.PathSchedules,
	"notification_channel": core.PathNotifications + "/channels", "notification_rule": core.PathNotifications + "/rules",
}

// auditTarget is the name an entry recorded of its target (details
// "name", "username" or "device_name") and the target's page.
func auditTarget(rec db.AuditRecord) (name, url string) {
	for _, k := range []string{"name", "username", "device_name"} {
		if v, ok := rec.Details[k].(string); ok && v != "" {
			name = v
			break
		}
	}
	if base, ok := auditTargetPages[rec.TargetType]; ok && rec.TargetID != "" &&
		strings.Trim(rec.TargetID, "0123456789") == "" && len(rec.TargetID) <= 18 {
		url = base + "/" + rec.TargetID
	}
	return name, url
}

// details lays an entry's details out as key=value pairs, sorted by key;
// strings as they are, anything else as JSON. The template escapes them.
func details(m map[string]any) []detail {
	out := make([]detail, 0, len(m))
	for k, v := range m {
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case nil:
			s = "—"
		default:
			b, err := json.Marshal(v)
			if err != nil {
				s = fmt.Sprint(v)
			} else {
				s = string(b)
			}
		}
		out = append(out, detail{Key: k, Value: s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
