package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/db/queue"
)

// The changes list: the last day by default, wider ranges, two dates in
// the configured zone, one group, a user's scope, pages; dates that are
// not dates refused with the form kept and nothing listed.
func TestChangesList(t *testing.T) {
	e := newEnv(t)
	f := seedFleet(t, e)
	ctx := context.Background()
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	e.createUser("brancher", "branch-password-1", auth.RoleViewer, false, f.branch)
	devs, _, err := e.store.ListDevices(ctx, db.Scope{All: true}, db.DeviceFilter{}, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	id := map[string]int64{}
	for _, d := range devs {
		id[d.Name] = d.ID
	}
	now := e.clock.Now().UTC()
	// Besides seedFleet's changes of core-1 2 h and 10 days ago: branch-1
	// changed 3 days ago, core-1 60 days ago.
	for i, c := range []struct {
		dev string
		ago time.Duration
	}{{"branch-1", 72 * time.Hour}, {"core-1", 1440 * time.Hour}} {
		started := now.Add(-c.ago)
		finished := started.Add(time.Second)
		if err := e.store.InsertBackup(ctx, db.Backup{ID: fmt.Sprintf("chg%d", i), DeviceID: id[c.dev], StartedAt: started,
			FinishedAt: &finished, Success: true, Changed: true, Trigger: queue.TriggerSchedule}); err != nil {
			t.Fatal(err)
		}
	}
	root := e.browser()
	root.mustLogin("root", "root-password-1")
	listed := func(who *browser, query string) (int, string) {
		t.Helper()
		p := who.get("/changes?" + query)
		return p.status, p.body
	}
	for _, c := range []struct {
		query string
		want  []string // device names, newest first
	}{
		{"", []string{"core-1"}},
		{"range=7d", []string{"core-1", "branch-1"}},
		{"range=30d", []string{"core-1", "branch-1", "core-1"}},
		{"range=30d&group=" + fmt.Sprint(f.branch), []string{"branch-1"}},
		{"range=custom&from=" + now.AddDate(0, 0, -11).Format(time.DateOnly) + "&to=" + now.AddDate(0, 0, -2).Format(time.DateOnly),
			[]string{"branch-1", "core-1"}},
	} {
		status, body := listed(root, c.query)
		if status != http.StatusOK {
			t.Fatalf("/changes?%s: status %d", c.query, status)
		}
		got := rowNames(body)
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("/changes?%s lists %v, want %v", c.query, got, c.want)
		}
		if !strings.Contains(body, fmt.Sprintf(">%d changes<", len(c.want))) {
			t.Errorf("/changes?%s does not count %d changes", c.query, len(c.want))
		}
		// The internal API answers the same list.
		if names, total := apiChangeNames(t, root, c.query); strings.Join(names, " ") != strings.Join(c.want, " ") || total != len(c.want) {
			t.Errorf("/api/changes?%s lists %v of %d, want %v", c.query, names, total, c.want)
		}
	}
	// The form keeps the group asked for.
	if _, body := listed(root, fmt.Sprintf("range=30d&group=%d", f.branch)); !strings.Contains(body, fmt.Sprintf(`<option value="%d" selected>`, f.branch)) ||
		!strings.Contains(body, `<select id="changes-group" name="group">`) {
		t.Error("the changes form does not keep the group asked for")
	}
	// Each row leads to the device, its diff and its version.
	_, body := listed(root, "range=7d")
	for _, want := range []string{`href="/devices/` + fmt.Sprint(id["branch-1"]) + `"`,
		`href="/devices/` + fmt.Sprint(id["branch-1"]) + `/diff?to=chg0"`, `href="/devices/` + fmt.Sprint(id["branch-1"]) + `/versions/chg0"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the changes list has no %s", want)
		}
	}

	// A user of Branch sees Branch's changes only, whatever group is asked.
	scoped := e.browser()
	scoped.mustLogin("brancher", "branch-password-1")
	for _, q := range []string{"range=30d", "range=30d&group=" + fmt.Sprint(f.core)} {
		_, body := listed(scoped, q)
		names, _ := apiChangeNames(t, scoped, q)
		for _, name := range append(rowNames(body), names...) {
			if name != "branch-1" {
				t.Errorf("a user of Branch sees %s's change (/changes?%s or /api/changes)", name, q)
			}
		}
	}

	// The internal API refuses what the page would quietly replace.
	for _, c := range []struct{ query, field string }{
		{"range=1y", "range"}, {"group=core", "group"}, {"group=0", "group"}, {"page=0", "page"},
		{"range=custom&from=2026-13-01&to=2026-01-02", "from"}, {"range=custom&from=2026-02-01&to=2026-01-01", "to"},
	} {
		p := root.get("/api/changes?" + c.query)
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `"field":"`+c.field+`"`) {
			t.Errorf("/api/changes?%s: %d %s, want 422 naming %s", c.query, p.status, p.body, c.field)
		}
	}
	if p := e.browser().get("/api/changes"); p.status != http.StatusUnauthorized {
		t.Errorf("/api/changes without a session: %d", p.status)
	}

	// Dates that are not dates, or the wrong way round: refused, kept.
	for _, c := range []struct{ query, message string }{
		{"range=custom&from=2026-13-01&to=2026-01-02", "Give the first day as a date"},
		{"range=custom&from=2026-01-01&to=yesterday", "Give the last day as a date"},
		{"range=custom&from=2026-02-01&to=2026-01-01", "The last day comes before the first"},
		{"range=custom&from=" + url.QueryEscape(strings.Repeat("9", 5000)) + "&to=2026-01-01", "Give the first day as a date"},
	} {
		status, body := listed(root, c.query)
		if status != http.StatusUnprocessableEntity || !strings.Contains(body, c.message) || strings.Contains(body, `id="changes-list"`) {
			t.Errorf("/changes?%.60s: status %d, message %q shown %v", c.query, status, c.message, strings.Contains(body, c.message))
		}
	}
	if _, body := listed(root, "range=custom&from=2026-02-01&to=2026-01-01"); !strings.Contains(body, `value="2026-02-01"`) {
		t.Error("a refused range does not keep the dates typed")
	}
}

// rowNames are the device names of the changes list's rows, in order.
func rowNames(body string) []string {
	var out []string
	i := strings.Index(body, `id="changes-list"`)
	if i < 0 {
		return nil
	}
	rest := body[i:]
	for {
		j := strings.Index(rest, `<th scope="row"><a href="/devices/`)
		if j < 0 {
			return out
		}
		rest = rest[j+len(`<th scope="row">`):]
		k := strings.Index(rest, `">`)
		end := strings.Index(rest, `</a>`)
		out = append(out, rest[k+2:end])
		rest = rest[end:]
	}
}

// apiChangeNames are the device names of GET /api/changes?query, in
// order, and its total.
func apiChangeNames(t *testing.T, who *browser, query string) ([]string, int) {
	t.Helper()
	p := who.get("/api/changes?" + query)
	if p.status != http.StatusOK {
		t.Fatalf("/api/changes?%s: %d %s", query, p.status, p.body)
	}
	var got struct {
		Items []struct {
			DeviceName string `json:"device_name"`
			DiffURL    string `json:"diff_url"`
		} `json:"items"`
		Total int `json:"total"`
	}
	if err := json.Unmarshal([]byte(p.body), &got); err != nil {
		t.Fatalf("/api/changes?%s: %v", query, err)
	}
	var names []string
	for _, it := range got.Items {
		names = append(names, it.DeviceName)
		if !strings.Contains(it.DiffURL, "/diff?to=") {
			t.Errorf("/api/changes?%s: diff_url %q", query, it.DiffURL)
		}
	}
	return names, got.Total
}
