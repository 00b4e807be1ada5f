package ui_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"backupd/app/auth"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// detailFleet is two groups with one device each, core-r1 (Core, a
// cisco_ios router with a credential, remarks and a history of its own)
// and branch-r1 (Branch).
type detailFleet struct {
	core, branch       int64
	coreDev, branchDev db.Device
	n                  int
}

func newDetailFleet(t *testing.T, e *env) *detailFleet {
	t.Helper()
	ctx := context.Background()
	core, err := e.store.CreateGroup(ctx, "Core", nil)
	if err != nil {
		t.Fatal(err)
	}
	branch, err := e.store.CreateGroup(ctx, "Branch", nil)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := e.store.CreateCredential(ctx, db.Credential{Name: "lab login", Username: "netops",
		Password: e.sealer.Seal("pw-never-shown-9", secret.PurposePassword)})
	if err != nil {
		t.Fatal(err)
	}
	remarks := "rack 4 <b>top</b>"
	coreDev, err := e.store.CreateDevice(ctx, db.Device{Name: "core-r1", Host: "192.0.2.10", Port: 2222, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &core.ID, CredentialID: &cred.ID, Encoding: "gbk", Enabled: true, Remarks: &remarks})
	if err != nil {
		t.Fatal(err)
	}
	branchDev, err := e.store.CreateDevice(ctx, db.Device{Name: "branch-r1", Host: "192.0.2.20", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &branch.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	return &detailFleet{core: core.ID, branch: branch.ID, coreDev: coreDev, branchDev: branchDev}
}

// version records a finished attempt of d started ago before now: a
// success storing text (unless text is "" and msg set), as the engine's
// FinishJob would.
func (f *detailFleet) version(t *testing.T, e *env, d db.Device, ago time.Duration, text string, changed bool, msg string) db.Backup {
	t.Helper()
	ctx := context.Background()
	f.n++
	started := e.clock.Now().UTC().Add(-ago).Truncate(time.Millisecond)
	finished := started.Add(1500 * time.Millisecond)
	dur := int64(1500)
	b := db.Backup{ID: fmt.Sprintf("bk%04d", f.n), DeviceID: d.ID, StartedAt: started, FinishedAt: &finished,
		Trigger: queue.TriggerSchedule, DurationMS: &dur}
	if msg == "" {
		hash, err := e.store.PutSnapshot(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		size := int64(len(text))
		b.Success, b.SnapshotHash, b.Bytes, b.Changed = true, &hash, &size, changed
	} else {
		b.ErrorMessage = &msg
	}
	if err := e.store.InsertBackup(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func devicePath(d db.Device) string { return fmt.Sprintf("/devices/%d", d.ID) }

func TestDeviceDetailSummary(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	f.version(t, e, f.coreDev, time.Hour, "hostname core-r1\n", true, "")
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")

	p := b.get(devicePath(f.coreDev))
	expect(t, "device page", p, http.StatusOK, "")
	expectBody(t, "device page", p,
		`<h1 id="device-name">core-r1</h1>`, "192.0.2.10:2222", "Cisco IOS", "cisco_ios", "SSH", "Core", "lab login",
		"Platform default commands", "gbk", "rack 4 &lt;b&gt;top&lt;/b&gt;", "Not checked",
		fmt.Sprintf(`href="/devices/%d/edit"`, f.coreDev.ID),
		`action="/devices/backup"`, fmt.Sprintf(`name="id" value="%d"`, f.coreDev.ID),
		fmt.Sprintf(`name="next" value="/devices/%d"`, f.coreDev.ID),
		`id="history-table"`, "No host key pinned yet",
		`<a href="/devices" aria-current="page">Devices</a>`)
	if strings.Contains(p.body, "pw-never-shown-9") || strings.Contains(p.body, "<b>top</b>") {
		t.Error("the page shows a secret or unescaped remarks")
	}
	if strings.Contains(p.body, `id="device-no-credential"`) {
		t.Error("a device with a credential is said to have none")
	}
	// A device without a credential says its backups fail, with the way
	// to choose one.
	if p := b.get(devicePath(f.branchDev)); !strings.Contains(p.body, `id="device-no-credential"`) ||
		!strings.Contains(p.body, fmt.Sprintf(`href="/devices/%d/edit#d-credential"`, f.branchDev.ID)) {
		t.Error("a device without a credential is not said to have none")
	}
	for _, bad := range []string{"<script>", "style=", "<style", "onclick", "javascript:"} {
		if strings.Contains(p.body, bad) {
			t.Errorf("the device page holds %q, which the CSP blocks", bad)
		}
	}
	// Chinese.
	b.header.Set("Accept-Language", "zh-CN")
	expectBody(t, "Chinese device page", b.get(devicePath(f.coreDev)), "备份历史", "立即备份", "平台默认命令")
	b.header.Del("Accept-Language")

	for _, path := range []string{"/devices/abc", "/devices/0", "/devices/-1", "/devices/99999", "/devices/1x",
		devicePath(f.coreDev) + "/versions/nope", devicePath(f.coreDev) + "/nothing-here"} {
		expect(t, "GET "+path, b.get(path), http.StatusNotFound, "")
	}
	// A backup of another device is not found under this one.
	other := f.version(t, e, f.branchDev, time.Hour, "hostname branch-r1\n", true, "")
	expect(t, "another device's version", b.get(devicePath(f.coreDev)+"/versions/"+other.ID), http.StatusNotFound, "")
	expect(t, "another device's raw", b.get(devicePath(f.coreDev)+"/versions/"+other.ID+"/raw"), http.StatusNotFound, "")
}

// A user scoped to Branch can neither see nor act on Core's device, on
// any of the device's pages.
func TestDeviceDetailScope(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	v1 := f.version(t, e, f.coreDev, 2*time.Hour, "hostname core-r1\n", true, "")
	v2 := f.version(t, e, f.coreDev, time.Hour, "hostname core-r1\nntp server 192.0.2.1\n", true, "")
	detailSetHostKeys(t, e, f.coreDev.ID, detailKey(t), detailKey(t))
	e.createUser("brancher", "branch-password-1", auth.RoleOperator, false, f.branch)
	b := e.browser()
	b.mustLogin("brancher", "branch-password-1")

	expect(t, "own device", b.get(devicePath(f.branchDev)), http.StatusOK, "")
	core := devicePath(f.coreDev)
	for _, path := range []string{
		core, core + "/versions/" + v1.ID, core + "/versions/" + v1.ID + "/raw?download=1",
		core + "/diff?from=" + v1.ID + "&to=" + v2.ID, core + "/diff/raw?from=" + v1.ID + "&to=" + v2.ID,
	} {
		p := b.get(path)
		expect(t, "out of scope "+path, p, http.StatusForbidden, "")
		if strings.Contains(p.body, "ntp server") || strings.Contains(p.body, "core-r1") {
			t.Errorf("%s: the refusal shows the device", path)
		}
		// A refusal says so, not "Something went wrong".
		if !strings.Contains(p.body, `<h1 id="error-title">You do not have access</h1>`) {
			t.Errorf("%s: the refusal is not titled as one", path)
		}
	}
	pinned, pending := detailHostKeys(t, e, f.coreDev.ID)
	expect(t, "accept out of scope", b.post(core+"/host-key/accept", url.Values{"fingerprint": {"x"}}), http.StatusForbidden, "")
	if p2, q2 := detailHostKeys(t, e, f.coreDev.ID); p2 != pinned || q2 != pending {
		t.Error("a refused accept changed the keys")
	}
	// A user with no group sees no device at all.
	e.createUser("nobody", "nobody-password-1", auth.RoleViewer, false)
	n := e.browser()
	n.mustLogin("nobody", "nobody-password-1")
	expect(t, "no groups", n.get(devicePath(f.branchDev)), http.StatusForbidden, "")
}

func TestDeviceDetailPermissions(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	v1 := f.version(t, e, f.coreDev, 2*time.Hour, "hostname core-r1\n", true, "")
	v2 := f.version(t, e, f.coreDev, time.Hour, "hostname core-r1\nntp server 192.0.2.1\n", true, "")
	detailSetHostKeys(t, e, f.coreDev.ID, detailKey(t), detailKey(t))
	ctx := context.Background()
	if err := e.store.EnsureRole(ctx, db.Role{Name: "Inventory only", Permissions: []string{"devices.view"}}); err != nil {
		t.Fatal(err)
	}
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	e.createUser("reader", "reader-password-1", auth.RoleBackupReader, true)
	e.createUser("inventory", "inventory-password-1", "Inventory only", true)
	core := devicePath(f.coreDev)
	version := core + "/versions/" + v2.ID
	diff := core + "/diff?from=" + v1.ID + "&to=" + v2.ID

	viewer := e.browser()
	viewer.mustLogin("viewer", "viewer-password-1")
	p := viewer.get(core)
	expect(t, "viewer page", p, http.StatusOK, "")
	expectBody(t, "viewer page", p, `id="history-table"`, v2.ID, `id="host-key-changed"`, "Ask someone allowed to edit devices")
	for _, hidden := range []string{`id="device-edit"`, `id="device-backup-now"`, `id="host-key-accept"`} {
		if strings.Contains(p.body, hidden) {
			t.Errorf("the viewer sees %s", hidden)
		}
	}
	expect(t, "viewer version", viewer.get(version), http.StatusOK, "")
	expect(t, "viewer diff", viewer.get(diff), http.StatusOK, "")
	expect(t, "viewer accepts", viewer.post(core+"/host-key/accept", nil), http.StatusForbidden, "")

	// backups.view without devices.view: versions and diffs, not the page.
	reader := e.browser()
	reader.mustLogin("reader", "reader-password-1")
	expect(t, "reader page", reader.get(core), http.StatusForbidden, "")
	p = reader.get(version)
	expect(t, "reader version", p, http.StatusOK, "")
	if strings.Contains(p.body, `href="`+core+`#history"`) {
		t.Error("the version page links the reader to a page it may not open")
	}
	expect(t, "reader raw", reader.get(version+"/raw"), http.StatusOK, "")
	expect(t, "reader diff", reader.get(diff), http.StatusOK, "")

	// devices.view without backups.view: the summary only.
	inv := e.browser()
	inv.mustLogin("inventory", "inventory-password-1")
	p = inv.get(core)
	expect(t, "inventory page", p, http.StatusOK, "")
	expectBody(t, "inventory page", p, "core-r1", "192.0.2.10:2222")
	if strings.Contains(p.body, `id="history"`) || strings.Contains(p.body, v1.ID) {
		t.Error("a user without backups.view sees the history")
	}
	expect(t, "inventory version", inv.get(version), http.StatusForbidden, "")
	expect(t, "inventory raw", inv.get(version+"/raw"), http.StatusForbidden, "")
	expect(t, "inventory diff", inv.get(diff), http.StatusForbidden, "")
}

var historyRowRE = regexp.MustCompile(`<tr data-backup="([^"]+)"`)

func historyIDs(body string) []string {
	var out []string
	for _, m := range historyRowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

var pagerLinkRE = regexp.MustCompile(`<a href="([^"]+)" id="history-(newest|newer|older|oldest)"`)

func pagerLinks(body string) map[string]string {
	out := map[string]string{}
	for _, m := range pagerLinkRE.FindAllStringSubmatch(body, -1) {
		out[m[2]] = strings.ReplaceAll(m[1], "&amp;", "&")
	}
	return out
}

func TestDeviceHistoryPaging(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	var all []db.Backup // oldest first
	for i := range 120 {
		ago := time.Duration(120-i) * time.Hour
		switch {
		case i == 50:
			all = append(all, f.version(t, e, f.coreDev, ago, "", false, "login: authentication failed <script>"))
		default:
			all = append(all, f.version(t, e, f.coreDev, ago, fmt.Sprintf("hostname core-r1\n! v%d\n", i/10), i%10 == 0, ""))
		}
	}
	want := func(from, to int) string { // newest first, indexes into all
		var ids []string
		for i := from; i >= to; i-- {
			ids = append(ids, all[i].ID)
		}
		return strings.Join(ids, " ")
	}
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	b := e.browser()
	b.mustLogin("viewer", "viewer-password-1")

	// Every attempt: with more than a page, the history shows the
	// changes only unless asked (TestDeviceHistoryChangesOnly).
	p := b.get(devicePath(f.coreDev) + "?show=all")
	expect(t, "page 1", p, http.StatusOK, "")
	if got := strings.Join(historyIDs(p.body), " "); got != want(119, 70) {
		t.Fatalf("page 1 lists %s", got)
	}
	expectBody(t, "page 1", p, "Page 1 of 3", "Backups 1–50 of 120")
	links := pagerLinks(p.body)
	if links["newer"] != "" || links["older"] == "" || links["oldest"] == "" {
		t.Fatalf("page 1 links %v", links)
	}
	// A changed version has a visible badge and a diff with the version
	// before it; the newest two versions are the comparison's default.
	expectBody(t, "page 1", p, `class="device-badge device-badge-changed"`,
		fmt.Sprintf(`href="/devices/%d/diff?from=%s&amp;to=%s"`, f.coreDev.ID, all[109].ID, all[110].ID),
		fmt.Sprintf(`name="to" value="%s" aria-label="Compare to the version of %s" checked`, all[119].ID, all[119].StartedAt.Format("2006-01-02 15:04:05")),
		fmt.Sprintf(`name="from" value="%s"`, all[118].ID))

	p = b.get(links["older"])
	if got := strings.Join(historyIDs(p.body), " "); got != want(69, 20) {
		t.Fatalf("page 2 lists %s", got)
	}
	expectBody(t, "page 2", p, "Page 2 of 3", "Backups 51–100 of 120",
		"login: authentication failed &lt;script&gt;", `class="device-badge device-badge-bad"`)
	// The oldest row of page 2 is a changed version whose previous
	// version is on page 3: its diff link looks past the page.
	expectBody(t, "page 2", p, fmt.Sprintf(`to=%s"`, all[20].ID))
	page2 := pagerLinks(p.body)
	p = b.get(page2["older"])
	if got := strings.Join(historyIDs(p.body), " "); got != want(19, 0) {
		t.Fatalf("page 3 lists %s", got)
	}
	expectBody(t, "page 3", p, "Page 3 of 3", "Backups 101–120 of 120")
	page3 := pagerLinks(p.body)
	if page3["older"] != "" || page3["newer"] == "" {
		t.Fatalf("page 3 links %v", page3)
	}
	p = b.get(page3["newer"])
	if got := strings.Join(historyIDs(p.body), " "); got != want(69, 20) {
		t.Fatalf("newer than page 3 lists %s", got)
	}
	p = b.get(links["oldest"])
	if got := strings.Join(historyIDs(p.body), " "); got != want(19, 0) {
		t.Fatalf("the oldest page lists %s", got)
	}
	expectBody(t, "oldest", p, "Page 3 of 3")
	for _, l := range []string{links["older"], links["oldest"], page3["newer"]} {
		if !strings.Contains(l, "show=all") {
			t.Errorf("page link %s drops the choice of every attempt", l)
		}
	}
	expect(t, "bad page link", b.get(devicePath(f.coreDev)+"?before=garbage"), http.StatusBadRequest, "")
}

// A history longer than a page shows its changes only by default, each
// linked to its own diff; a date range narrows either view; dates that
// are not dates are refused with the form kept.
func TestDeviceHistoryChangesOnly(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	var all []db.Backup // oldest first; every tenth changed, the 51st failed
	for i := range 120 {
		ago := time.Duration(120-i) * time.Hour
		if i == 50 {
			all = append(all, f.version(t, e, f.coreDev, ago, "", false, "login: authentication failed"))
			continue
		}
		all = append(all, f.version(t, e, f.coreDev, ago, fmt.Sprintf("hostname core-r1\n! v%d\n", i/10), i%10 == 0, ""))
	}
	ids := func(idx ...int) string {
		var out []string
		for _, i := range idx {
			out = append(out, all[i].ID)
		}
		return strings.Join(out, " ")
	}
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	b := e.browser()
	b.mustLogin("viewer", "viewer-password-1")

	p := b.get(devicePath(f.coreDev))
	expect(t, "default", p, http.StatusOK, "")
	if got, want := strings.Join(historyIDs(p.body), " "), ids(110, 100, 90, 80, 70, 60, 40, 30, 20, 10, 0); got != want {
		t.Fatalf("the default history lists %s, want the changes %s", got, want)
	}
	expectBody(t, "default", p, `<option value="changes" selected>`, "Backups 1–11 of 11",
		fmt.Sprintf(`href="/devices/%d/diff?to=%s"`, f.coreDev.ID, all[60].ID))

	// A date range, in the server's zone (UTC here), both days included.
	day := func(i int) string { return all[i].StartedAt.UTC().Format(time.DateOnly) }
	lo, hi := 30, 95
	p = b.get(devicePath(f.coreDev) + "?show=changes&since=" + day(lo) + "&until=" + day(hi))
	var want []string
	for i := 119; i >= 0; i-- {
		d := day(i)
		if i%10 == 0 && i != 50 && d >= day(lo) && d <= day(hi) {
			want = append(want, all[i].ID)
		}
	}
	if got := strings.Join(historyIDs(p.body), " "); got != strings.Join(want, " ") {
		t.Errorf("changes from %s to %s: %s, want %s", day(lo), day(hi), got, strings.Join(want, " "))
	}
	p = b.get(devicePath(f.coreDev) + "?show=all&since=" + day(119) + "&until=" + day(119))
	for _, id := range historyIDs(p.body) {
		if id < all[96].ID {
			t.Errorf("the last day's attempts include %s", id)
		}
	}

	// Nothing left: said so, with the way to every attempt.
	p = b.get(devicePath(f.coreDev) + "?show=changes&since=2001-01-01&until=2001-01-02")
	expectBody(t, "empty range", p, "Nothing in the history matches.", "?show=all#history")

	for _, c := range []struct{ query, message string }{
		{"since=2026-02-30", "Give the first day as a date"},
		{"until=soon", "Give the last day as a date"},
		{"since=2026-02-02&until=2026-02-01", "The last day comes before the first"},
	} {
		p := b.get(devicePath(f.coreDev) + "?" + c.query)
		expect(t, c.query, p, http.StatusUnprocessableEntity, "")
		expectBody(t, c.query, p, c.message)
		if len(historyIDs(p.body)) != 0 {
			t.Errorf("%s: the history is listed beside the error", c.query)
		}
	}
}

func TestDeviceVersionViewAndDownload(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	ctx := context.Background()
	name := `核心/sw 1"x`
	odd, err := e.store.CreateDevice(ctx, db.Device{Name: name, Host: "192.0.2.30", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &f.core, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	text := "hostname sw1\n!\ninterface Gi0/1\n description <uplink> & \"core\"\n\tno shutdown\n"
	old := f.version(t, e, odd, 3*time.Hour, "hostname sw1\n", true, "")
	v := f.version(t, e, odd, 2*time.Hour, text, true, "")
	failed := f.version(t, e, odd, time.Hour, "", false, "connect: connection refused")
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	b := e.browser()
	b.mustLogin("viewer", "viewer-password-1")

	path := devicePath(odd) + "/versions/" + v.ID
	p := b.get(path)
	expect(t, "version page", p, http.StatusOK, "")
	expectBody(t, "version page", p,
		`<span class="device-line" id="L4"> description &lt;uplink&gt; &amp; &#34;core&#34;</span>`,
		`<span class="device-line" id="L5">	no shutdown</span>`, "5 lines",
		`href="`+path+`/raw?download=1"`, `id="version-copy" hidden`,
		`href="`+devicePath(odd)+`/versions/`+old.ID+`"`, // older version
		`href="`+devicePath(odd)+`/diff?from=`+old.ID+`&amp;to=`+v.ID+`"`)

	raw := b.get(path + "/raw?download=1")
	expect(t, "download", raw, http.StatusOK, "")
	if raw.body != text {
		t.Errorf("download body %q, want %q", raw.body, text)
	}
	stamp := v.StartedAt.UTC().Format("20060102-150405")
	wantCD := `attachment; filename="___sw_1_x_` + stamp + `.txt"; filename*=UTF-8''%E6%A0%B8%E5%BF%83_sw_1_x_` + stamp + `.txt`
	for k, want := range map[string]string{
		"Content-Type":           "text/plain; charset=utf-8",
		"Content-Disposition":    wantCD,
		"X-Content-Type-Options": "nosniff",
		"Content-Length":         fmt.Sprint(len(text)),
		"Cache-Control":          "no-store",
	} {
		if got := raw.header.Get(k); got != want {
			t.Errorf("download %s = %q, want %q", k, got, want)
		}
	}
	inline := b.get(path + "/raw")
	if inline.body != text || !strings.HasPrefix(inline.header.Get("Content-Disposition"), "inline;") {
		t.Errorf("inline raw: %q, disposition %q", inline.body, inline.header.Get("Content-Disposition"))
	}

	// A failed attempt has no text, and says so.
	p = b.get(devicePath(odd) + "/versions/" + failed.ID)
	expect(t, "failed version", p, http.StatusOK, "")
	expectBody(t, "failed version", p, "This backup attempt failed", "connect: connection refused")
	if strings.Contains(p.body, `id="version-copy"`) || strings.Contains(p.body, `id="config-text"`) {
		t.Error("a failed attempt offers text")
	}
	expect(t, "failed raw", b.get(devicePath(odd)+"/versions/"+failed.ID+"/raw?download=1"), http.StatusNotFound, "")
}

// cisco_ios marks "ntp clock-period" as noise (app/collect/driver/noise.go).
const (
	detailConfigV1 = "Building configuration...\n!\nhostname core-r1\nntp clock-period 17179869\ninterface Gi0/1\n description to-old-core\n!\nend\n"
	detailConfigV2 = "Building configuration...\n!\nhostname core-r1\nntp clock-period 17179870\ninterface Gi0/1\n description to-new-core\n ip address 10.0.0.1 255.255.255.0\n!\nend\n"
)

func TestDeviceDiffSideBySide(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	v1 := f.version(t, e, f.coreDev, 3*time.Hour, detailConfigV1, true, "")
	failed := f.version(t, e, f.coreDev, 150*time.Minute, "", false, "timeout")
	v2 := f.version(t, e, f.coreDev, 2*time.Hour, detailConfigV2, true, "")
	v3 := f.version(t, e, f.coreDev, time.Hour, strings.Replace(detailConfigV2, "17179870", "17179871", 1), false, "")
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	b := e.browser()
	b.mustLogin("viewer", "viewer-password-1")
	base := devicePath(f.coreDev) + "/diff"

	p := b.get(base + "?from=" + v1.ID + "&to=" + v2.ID)
	expect(t, "diff", p, http.StatusOK, "")
	// The ntp clock-period line changed too, as noise: counted apart.
	expectBody(t, "diff", p, "Added lines: 2", "Removed lines: 1", "Noise lines, not counted: 2",
		// The characters that changed within a line are marked.
		`<td class="diff-del"> description to-<mark class="diff-char">old</mark>-core</td><td class="device-ln">6</td><td class="diff-add"> description to-<mark class="diff-char">new</mark>-core</td>`,
		`<td class="device-ln">7</td><td class="diff-add"> ip address 10.0.0.1 255.255.255.0</td>`,
		// The noise line is dimmed on both sides, and the legend explains.
		`<td class="diff-del diff-noise">ntp clock-period 17179869</td><td class="device-ln">4</td><td class="diff-add diff-noise">ntp clock-period 17179870</td>`,
		`id="diff-legend"`, "Dimmed lines are noise",
		`<td class="diff-ctx">hostname core-r1</td>`)
	if strings.Contains(p.body, `id="diff-same"`) || strings.Contains(p.body, `id="diff-noise-only"`) {
		t.Error("a real change is shown as no change")
	}
	// Unified view and download.
	p = b.get(base + "?from=" + v1.ID + "&to=" + v2.ID + "&view=unified")
	expectBody(t, "unified", p, `<td class="diff-del"> description to-<mark class="diff-char">old</mark>-core</td>`,
		`<td class="diff-add"> description to-<mark class="diff-char">new</mark>-core</td>`, `id="diff-view-unified" aria-current="page"`)
	raw := b.get(devicePath(f.coreDev) + "/diff/raw?from=" + v1.ID + "&to=" + v2.ID)
	expect(t, "diff download", raw, http.StatusOK, "")
	for _, want := range []string{"-ntp clock-period 17179869\n", "+ description to-new-core\n", "+ ip address 10.0.0.1 255.255.255.0\n", "@@ "} {
		if !strings.Contains(raw.body, want) {
			t.Errorf("unified diff lacks %q:\n%s", want, raw.body)
		}
	}
	if cd := raw.header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="core-r1_`) || !strings.Contains(cd, `.diff"`) {
		t.Errorf("diff download disposition %q", cd)
	}
	// Noise only.
	p = b.get(base + "?from=" + v2.ID + "&to=" + v3.ID)
	expectBody(t, "noise only", p, `id="diff-noise-only"`, "Added lines: 0", "Removed lines: 0", "Noise lines, not counted: 2")
	// The same version: no differences.
	expectBody(t, "same", b.get(base+"?from="+v2.ID+"&to="+v2.ID), `id="diff-same"`, "No differences")
	// A hunk's header names the block its change is in.
	v4 := f.version(t, e, f.coreDev, 30*time.Minute, strings.Replace(detailConfigV2, "to-new-core", "to-core-2", 1), true, "")
	p = b.get(base + "?from=" + v2.ID + "&to=" + v4.ID)
	expectBody(t, "section", p, `<tr class="device-hunk"><td colspan="4">@@ -3,7 &#43;3,7 @@ interface Gi0/1</td></tr>`)
	// The version pickers offer the changes, newest first, the compared
	// two chosen; not the noise-only version nor the failure.
	picks := regexp.MustCompile(`<select id="pick-from" name="from">([\s\S]*?)</select>`).FindStringSubmatch(p.body)
	if picks == nil {
		t.Fatal("the diff page has no version picker")
	}
	var offered []string
	for _, m := range regexp.MustCompile(`<option value="([^"]+)"( selected)?>`).FindAllStringSubmatch(picks[1], -1) {
		offered = append(offered, m[1]+m[2])
	}
	if want := []string{v4.ID, v2.ID + " selected", v1.ID}; !slices.Equal(offered, want) {
		t.Errorf("the from picker offers %v, want %v (v3 is noise only, %s failed)", offered, want, failed.ID)
	}
	expectBody(t, "pickers", p, fmt.Sprintf(`<option value="%s" selected>`, v4.ID), `id="pick-compare"`)
	// Without from: the version before to (the failure in between is skipped).
	p = b.get(base + "?to=" + v2.ID)
	expect(t, "diff with previous", p, http.StatusOK, "")
	expectBody(t, "diff with previous", p, `href="/devices/`+fmt.Sprint(f.coreDev.ID)+`/versions/`+v1.ID+`" id="diff-from"`)
	expect(t, "first version has no previous", b.get(base+"?to="+v1.ID), http.StatusNotFound, "")
	expect(t, "no versions chosen", b.get(base), http.StatusBadRequest, "")
	p = b.get(base + "?from=" + failed.ID + "&to=" + v2.ID)
	expect(t, "diff with a failure", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "diff with a failure", p, "has no configuration to compare")
	expect(t, "unknown version", b.get(base+"?from=nope&to="+v2.ID), http.StatusNotFound, "")
}

func TestDeviceDiffIsBounded(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	var a, c strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&a, "access-list 10 permit 10.0.%d.%d\n", i/250, i%250)
		fmt.Fprintf(&c, "access-list 20 permit 10.0.%d.%d\n", i/250, i%250)
	}
	v1 := f.version(t, e, f.coreDev, 2*time.Hour, a.String(), true, "")
	v2 := f.version(t, e, f.coreDev, time.Hour, c.String(), true, "")
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	b := e.browser()
	b.mustLogin("viewer", "viewer-password-1")
	p := b.get(devicePath(f.coreDev) + "/diff?from=" + v1.ID + "&to=" + v2.ID)
	expect(t, "long diff", p, http.StatusOK, "")
	expectBody(t, "long diff", p, `id="diff-truncated"`, "Added lines: 6,000", "Removed lines: 6,000", "of 12,000 changed")
	if rows := strings.Count(p.body, "<tr>"); rows > 5100 {
		t.Errorf("the long diff renders %d rows", rows)
	}
}

// detailKey is a fresh SSH host key in wire format.
func detailKey(t *testing.T) []byte {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k.Marshal()
}

func detailFP(t *testing.T, key []byte) string {
	t.Helper()
	k, err := ssh.ParsePublicKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return k.Type() + " " + ssh.FingerprintSHA256(k)
}

// detailFPHTML is the fingerprint as the page writes it: html/template
// escapes "+".
func detailFPHTML(t *testing.T, key []byte) string {
	t.Helper()
	return strings.ReplaceAll(detailFP(t, key), "+", "&#43;")
}

func detailSetHostKeys(t *testing.T, e *env, id int64, pinned, pending []byte) {
	t.Helper()
	if _, err := dbtest.Poke(t, e.store).ExecContext(context.Background(), `UPDATE devices SET host_key = ?, pending_host_key = ? WHERE id = ?`, pinned, pending, id); err != nil {
		t.Fatal(err)
	}
}

func detailHostKeys(t *testing.T, e *env, id int64) (pinned, pending string) {
	t.Helper()
	p, q, err := e.store.HostKeys(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return string(p), string(q)
}

func TestDeviceHostKeyAccept(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	oldKey, newKey, otherKey := detailKey(t), detailKey(t), detailKey(t)
	detailSetHostKeys(t, e, f.coreDev.ID, oldKey, newKey)
	uid := e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("alice", "alice-password-1")
	path := devicePath(f.coreDev)

	p := b.get(path)
	expectBody(t, "changed key", p, `id="host-key-changed"`,
		`<dd class="device-mono" id="host-key-pinned">`+detailFPHTML(t, oldKey)+`</dd>`,
		`<dd class="device-mono" id="host-key-pending">`+detailFPHTML(t, newKey)+`</dd>`,
		`id="host-key-accept"`, `data-confirm="Pin the host key `+detailFPHTML(t, newKey),
		`name="fingerprint" value="`+detailFPHTML(t, newKey)+`"`)
	unchanged := func(what string) {
		t.Helper()
		if pinned, pending := detailHostKeys(t, e, f.coreDev.ID); pinned != string(oldKey) || pending != string(newKey) {
			t.Fatalf("%s changed the keys", what)
		}
	}
	accept := path + "/host-key/accept"
	expect(t, "accept without CSRF token", b.post(accept, url.Values{"csrf": {""}, "fingerprint": {detailFP(t, newKey)}}), http.StatusForbidden, "")
	unchanged("a tokenless accept")
	expect(t, "accept with a wrong token", b.post(accept, url.Values{"csrf": {"forged"}, "fingerprint": {detailFP(t, newKey)}}), http.StatusForbidden, "")
	unchanged("a forged accept")
	// The key the page showed is no longer the one pending.
	p = b.post(accept, url.Values{"fingerprint": {detailFP(t, otherKey)}})
	expect(t, "accept another key", p, http.StatusConflict, "")
	expectBody(t, "accept another key", p, "presented another host key", detailFPHTML(t, newKey))
	unchanged("accepting an unseen key")

	p = b.post(accept, url.Values{"fingerprint": {detailFP(t, newKey)}})
	expect(t, "accept", p, http.StatusSeeOther, path+"?hostkey=accepted#host-key")
	if pinned, pending := detailHostKeys(t, e, f.coreDev.ID); pinned != string(newKey) || pending != "" {
		t.Fatal("the accepted key is not pinned")
	}
	p = b.get(path + "?hostkey=accepted")
	expectBody(t, "after accepting", p, `id="device-notice"`, "The new host key is pinned",
		`<code class="device-mono" id="host-key-pinned">`+detailFPHTML(t, newKey)+`</code>`)
	if strings.Contains(p.body, `id="host-key-changed"`) {
		t.Error("the warning stays after accepting")
	}
	var found bool
	for _, a := range e.auditEntries() {
		if a.Action != "device.accept_hostkey" {
			continue
		}
		found = true
		if a.TargetType != "device" || a.TargetID != fmt.Sprint(f.coreDev.ID) || a.Username != "alice" || a.UserID == nil || *a.UserID != uid ||
			a.Details["fingerprint"] != detailFP(t, newKey) || a.Details["previous"] != detailFP(t, oldKey) || a.SessionID == nil {
			t.Errorf("audit entry %+v", a)
		}
	}
	if !found {
		t.Error("accepting a host key was not audited")
	}
	// Nothing left to accept.
	p = b.post(accept, url.Values{"fingerprint": {detailFP(t, newKey)}})
	expect(t, "accept twice", p, http.StatusConflict, "")
	expectBody(t, "accept twice", p, "no changed host key to accept")
	// A telnet device shows no host key section.
	ctx := context.Background()
	tel, err := e.store.CreateDevice(ctx, db.Device{Name: "old-switch", Host: "192.0.2.40", Port: 23, Platform: "cisco_ios",
		LoginMethod: "telnet", GroupID: &f.core, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if p := b.get(devicePath(tel)); strings.Contains(p.body, `id="host-key"`) {
		t.Error("a telnet device shows a host key section")
	}
}

// "Back up now" posts to the devices page's handler, which queues the
// backup and comes back here; the attempt then shows in the history.
func TestDeviceDetailBackUpNow(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("alice", "alice-password-1")
	path := devicePath(f.branchDev)
	expectBody(t, "device page", b.get(path), `id="device-backup-now"`)
	p := b.post("/devices/backup", url.Values{"id": {fmt.Sprint(f.branchDev.ID)}, "next": {path}})
	expect(t, "back up now", p, http.StatusSeeOther, path+"?queued=1")
	expectBody(t, "after queueing", b.get(path+"?queued=1"), `id="device-notice"`, "A backup of this device is queued",
		`<a href="/jobs?device=`+strings.TrimPrefix(path, "/devices/")+`" id="device-notice-link">Follow it on the Jobs page</a>`)
	// branch-r1 has no credential: the engine fails the attempt at once,
	// saying what to do.
	deadline := time.Now().Add(10 * time.Second)
	for {
		p = b.get(path)
		if strings.Contains(p.body, "the device has no credential") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the attempt never showed in the history:\n%s", p.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	expectBody(t, "history", p, `class="device-badge device-badge-bad"`, "Manual")
}
