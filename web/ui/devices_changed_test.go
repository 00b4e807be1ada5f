package ui_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// changedFleet is four devices: "old" changed 10 days ago, "recent" 1 day
// ago, "firstonly" has only its first backup, "never" no backup at all.
type changedFleet struct {
	old, recent, firstOnly, never db.Device
	oldChange, recentChange       db.Backup
	n                             int
}

func newChangedFleet(t *testing.T, e *env) *changedFleet {
	t.Helper()
	ctx := context.Background()
	f := &changedFleet{}
	for _, d := range []*db.Device{&f.old, &f.recent, &f.firstOnly, &f.never} {
		name := map[*db.Device]string{&f.old: "old", &f.recent: "recent", &f.firstOnly: "firstonly", &f.never: "never"}[d]
		created, err := e.store.CreateDevice(ctx, db.Device{Name: name, Host: "192.0.2.1", Port: 22, Platform: "cisco_ios",
			LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		*d = created
	}
	day := 24 * time.Hour
	f.version(t, e, f.old, 40*day, "hostname old\n", "first")
	f.oldChange = f.version(t, e, f.old, 10*day, "hostname old-2\n", "changed")
	f.version(t, e, f.recent, 40*day, "hostname recent\n", "first")
	f.version(t, e, f.recent, 20*day, "hostname recent-2\n", "changed")
	f.recentChange = f.version(t, e, f.recent, day, "hostname recent-3\n", "changed")
	f.version(t, e, f.recent, time.Hour, "hostname recent-3\n", "")
	f.version(t, e, f.firstOnly, 2*day, "hostname firstonly\n", "first")
	f.version(t, e, f.firstOnly, day, "hostname firstonly\n", "")
	return f
}

// version records a good backup as the engine's FinishJob would: kind is
// "first", "changed" or "" (same configuration).
func (f *changedFleet) version(t *testing.T, e *env, d db.Device, ago time.Duration, text, kind string) db.Backup {
	t.Helper()
	ctx := context.Background()
	f.n++
	hash, err := e.store.PutSnapshot(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	started := e.clock.Now().UTC().Add(-ago).Truncate(time.Millisecond)
	finished := started.Add(time.Second)
	size := int64(len(text))
	b := db.Backup{ID: fmt.Sprintf("ch%04d", f.n), DeviceID: d.ID, StartedAt: started, FinishedAt: &finished, Success: true,
		SnapshotHash: &hash, Bytes: &size, Trigger: queue.TriggerSchedule, First: kind == "first", Changed: kind == "changed"}
	if err := e.store.InsertBackup(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE devices SET last_backup_at = ?, last_backup_success = 1 WHERE id = ?`,
		finished.Format(db.TimeFormat), d.ID); err != nil {
		t.Fatal(err)
	}
	return b
}

// changedCell is the "Last changed" cell of the named device's row.
func changedCell(t *testing.T, body, name string) string {
	t.Helper()
	i := strings.Index(body, `">`+name+`</a></th>`)
	if i < 0 {
		t.Fatalf("no row of %s:\n%s", name, body)
	}
	row := body[i:]
	row = row[:strings.Index(row, "</tr>")]
	cells := strings.Split(row, "<td")
	// address, platform, group, status, last backup, last changed, ...
	if len(cells) < 7 {
		t.Fatalf("row of %s has %d cells", name, len(cells)-1)
	}
	return cells[6]
}

// The devices list shows when each configuration last changed (a first
// backup is not a change), sorts by it both ways, and filters "changed in
// the last N days"; a number of days that is not one is refused with a
// clear message, on the list and on the export.
func TestDevicesLastChangedColumn(t *testing.T) {
	e := newEnv(t)
	f := newChangedFleet(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")

	p := b.get("/devices")
	expect(t, "devices list", p, http.StatusOK, "")
	expectBody(t, "devices list", p, "Last backup</th>", ">Last changed", `href="/devices?sort=last_changed"`)
	if i, j := strings.Index(p.body, "Last backup</th>"), strings.Index(p.body, ">Last changed"); i > j {
		t.Error(`"Last changed" is not after "Last backup"`)
	}
	want := map[string]string{
		"old":       `<time datetime="` + f.oldChange.StartedAt.UTC().Format(time.RFC3339) + `"`,
		"recent":    `<time datetime="` + f.recentChange.StartedAt.UTC().Format(time.RFC3339) + `"`,
		"firstonly": "No change",
		"never":     "Never",
	}
	for name, w := range want {
		if c := changedCell(t, p.body, name); !strings.Contains(c, w) {
			t.Errorf("last changed of %s: %q, want %q", name, c, w)
		}
	}

	for _, c := range []struct{ query, want string }{
		{"", "[old recent firstonly never]"},
		{"sort=last_changed", "[recent old firstonly never]"},
		{"sort=last_changed_asc", "[old recent firstonly never]"},
		{"changed_days=7", "[recent]"},
		{"changed_days=+30&sort=last_changed", "[recent old]"},
		{"changed_days=3650", "[old recent]"},
		{"sort=bogus", "[old recent firstonly never]"},
	} {
		p := b.get("/devices?" + c.query)
		expect(t, c.query, p, http.StatusOK, "")
		if got := fmt.Sprint(devicesListed(p.body)); got != c.want {
			t.Errorf("/devices?%s lists %s, want %s", c.query, got, c.want)
		}
	}
	// The sort link turns the order round and keeps the filters; the
	// filter form keeps the order.
	p = b.get("/devices?sort=last_changed&changed_days=30")
	expectBody(t, "sorted, filtered", p, `aria-sort="descending"`,
		`href="/devices?changed_days=30&amp;sort=last_changed_asc"`, `name="sort" value="last_changed"`, `value="30"`,
		`href="/devices/export?changed_days=30&amp;sort=last_changed"`)
	p = b.get("/devices?sort=last_changed_asc")
	expectBody(t, "sorted oldest first", p, `aria-sort="ascending"`, `href="/devices?sort=last_changed"`)

	for _, bad := range []string{"abc", "0", "-3", "3651", "1.5", "1e3", "99999999999999999999999", "7 days", "<b>7</b>"} {
		p := b.get("/devices?changed_days=" + url.QueryEscape(bad))
		expect(t, "changed_days="+bad, p, http.StatusBadRequest, "")
		expectBody(t, "changed_days="+bad, p, `id="devices-error"`, "takes a whole number of days from 1 to 3650", `aria-invalid="true"`)
		if n := len(devicesListed(p.body)); n != 0 {
			t.Errorf("changed_days=%s: %d devices listed under a refused filter", bad, n)
		}
		if strings.Contains(p.body, "<b>7</b>") {
			t.Error("the refused value is echoed unescaped")
		}
		x := b.get("/devices/export?changed_days=" + url.QueryEscape(bad))
		expect(t, "export changed_days="+bad, x, http.StatusBadRequest, "")
		expectBody(t, "export changed_days="+bad, x, "takes a whole number of days from 1 to 3650")
	}
	// The export follows the filter.
	x := b.get("/devices/export?changed_days=7")
	expect(t, "export changed in 7 days", x, http.StatusOK, "")
	if !strings.Contains(x.body, "\r\nrecent,") || strings.Contains(x.body, "\r\nold,") || strings.Contains(x.body, "\r\nfirstonly,") {
		t.Errorf("export of the devices changed in 7 days:\n%s", x.body)
	}

	b.header.Set("Accept-Language", "zh-CN")
	p = b.get("/devices?changed_days=x")
	b.header.Del("Accept-Language")
	expect(t, "zh refused", p, http.StatusBadRequest, "")
	expectBody(t, "zh refused", p, "最近几天内有变更（天数）", "须为 1 到 3650 之间的整数天数")
}

// The device page says when the configuration last changed, and its
// history marks the first version "First backup", not "Changed".
func TestDeviceDetailLastChangedAndFirstBackup(t *testing.T) {
	e := newEnv(t)
	f := newChangedFleet(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")

	p := b.get(devicePath(f.old))
	expect(t, "old", p, http.StatusOK, "")
	expectBody(t, "old", p, `Last changed</dt><dd id="device-last-changed"><time datetime="`+f.oldChange.StartedAt.UTC().Format(time.RFC3339)+`"`)
	if n := strings.Count(p.body, `device-badge-first`); n != 1 {
		t.Errorf("old: %d first-backup badges, want 1", n)
	}
	if n := strings.Count(p.body, `<span class="device-badge device-badge-changed">`); n != 1 {
		t.Errorf("old: %d changed badges, want 1 (the first backup is not a change)", n)
	}

	p = b.get(devicePath(f.firstOnly))
	expectBody(t, "firstonly", p, `id="device-last-changed"><span class="muted">No change since the first backup</span>`, ">First backup</span>")
	if strings.Contains(p.body, `<span class="device-badge device-badge-changed">`) {
		t.Error("firstonly: a version is marked changed")
	}
	p = b.get(devicePath(f.never))
	expectBody(t, "never", p, `id="device-last-changed"><span class="muted">Never</span>`)

	b.header.Set("Accept-Language", "zh-CN")
	p = b.get(devicePath(f.firstOnly))
	b.header.Del("Accept-Language")
	expectBody(t, "firstonly zh", p, "上次变更", "自首次备份以来无变更", ">首次备份</span>")
}

// End to end with the backup engine and two simulated devices over real
// SSH: their first backups are not changes on the dashboard, the list or
// the history; a real change on one device is, there only; a second
// backup with only noise moved is not.
func TestFirstBackupsAreNotChangesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real backups")
	}
	e := newEnv(t)
	ctx := context.Background()
	g, err := e.store.CreateGroup(ctx, "Lab", nil)
	if err != nil {
		t.Fatal(err)
	}
	sims := map[string]*devsim.Device{}
	ids := map[string]int64{}
	for i, name := range []string{"sim-a", "sim-b"} {
		sim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: name, Username: "admin",
			Password: "sim-password-1", SSHAddr: "127.0.0.1:0", ConfigSize: devsim.MinConfigSize, Seed: int64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sim.Close() })
		cred, err := e.store.CreateCredential(ctx, db.Credential{Name: "login of " + name, Username: "admin",
			Password: e.sealer.Seal("sim-password-1", secret.PurposePassword)})
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := net.SplitHostPort(sim.SSHAddr())
		p, _ := strconv.Atoi(port)
		d, err := e.store.CreateDevice(ctx, db.Device{Name: name, Host: "127.0.0.1", Port: p, Platform: "cisco_ios",
			LoginMethod: "ssh", GroupID: &g.ID, CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		sims[name], ids[name] = sim, d.ID
	}
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")
	backUpAll := func(round int) {
		t.Helper()
		b.get("/devices")
		p := b.post("/devices/backup", url.Values{"id": {strconv.FormatInt(ids["sim-a"], 10), strconv.FormatInt(ids["sim-b"], 10)}})
		expect(t, "back up", p, http.StatusSeeOther, "")
		deadline := time.Now().Add(30 * time.Second)
		for _, id := range ids {
			for {
				jobs := devicesJobs(t, e, id)
				if len(jobs) == round && jobs[0].FinishedAt != nil && jobs[len(jobs)-1].FinishedAt != nil {
					for _, j := range jobs {
						if j.State != queue.JobSucceeded {
							t.Fatalf("device %d: job %s: %v", id, j.State, j.Error)
						}
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("device %d: backups of round %d not finished after 30 s: %+v", id, round, jobs)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	changed24h := func() string {
		t.Helper()
		p := b.get("/dashboard")
		expect(t, "dashboard", p, http.StatusOK, "")
		i := strings.Index(p.body, `data-count="changed">`)
		if i < 0 {
			t.Fatalf("no changed count on the dashboard:\n%s", p.body)
		}
		rest := p.body[i+len(`data-count="changed">`):]
		return rest[:strings.Index(rest, "<")]
	}

	backUpAll(1)
	if n := changed24h(); n != "0" {
		t.Errorf("after the first backups, changed in 24 h = %s, want 0", n)
	}
	p := b.get("/devices")
	for _, name := range []string{"sim-a", "sim-b"} {
		if c := changedCell(t, p.body, name); !strings.Contains(c, "No change") {
			t.Errorf("%s after its first backup: last changed %q", name, c)
		}
	}
	expectBody(t, "history", b.get(fmt.Sprintf("/devices/%d", ids["sim-a"])), ">First backup</span>")

	// Nothing but timestamps moved: still no change.
	backUpAll(2)
	if n := changed24h(); n != "0" {
		t.Errorf("after a backup with only noise moved, changed in 24 h = %s, want 0", n)
	}

	sims["sim-b"].Mutate(42)
	backUpAll(3)
	if n := changed24h(); n != "1" {
		t.Errorf("after one real change, changed in 24 h = %s, want 1", n)
	}
	if got := fmt.Sprint(devicesListed(b.get("/devices?changed_days=1").body)); got != "[sim-b]" {
		t.Errorf("changed in the last day: %s, want [sim-b]", got)
	}
	d, err := e.store.GetDevice(ctx, ids["sim-b"])
	if err != nil || d.LastChangedAt == nil {
		t.Fatalf("sim-b: last changed %v, %v", d.LastChangedAt, err)
	}
}
