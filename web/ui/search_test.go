package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"backupd/app/auth"
	"backupd/db"
	"backupd/db/queue"
)

// searchVersion stores text as a successful backup of device, started
// ago, and returns the backup's id.
func searchVersion(t *testing.T, e *env, device int64, ago time.Duration, text string) string {
	t.Helper()
	ctx := context.Background()
	hash, err := e.store.PutSnapshot(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Add(-ago)
	finished := started.Add(2 * time.Second)
	size := int64(len(text))
	b := db.Backup{ID: uuid.NewString(), DeviceID: device, StartedAt: started, FinishedAt: &finished,
		Success: true, SnapshotHash: &hash, Trigger: queue.TriggerSchedule, Bytes: &size}
	if err := e.store.InsertBackup(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b.ID
}

const (
	searchCore1Old = "hostname core-1\nsnmp-server community OldSecret RO\ninterface Gi0/1\n description <script>alert(1)</script> uplink\nend\n"
	searchCore1    = "hostname core-1\n!\ninterface Gi0/1\n description <script>alert(1)</script> Uplink\n ip address 10.0.0.1 255.255.255.0\n!\n!\n!\ninterface Gi0/2\n description uplink backup\nend\n"
	searchBranch1  = "hostname branch-1\ninterface Gi0/1\n description UPLINK to core\nend\n"
)

// searchFixture is seedFleet with configurations: core-1 (an old and a
// latest version) and branch-1.
type searchFixture struct {
	fleet
	core1, branch1               int64
	core1Old, core1New, branch1V string // backup ids
}

func newSearchFixture(t *testing.T, e *env) searchFixture {
	t.Helper()
	f := searchFixture{fleet: seedFleet(t, e)}
	f.core1, f.branch1 = jobsDeviceID(t, e, "core-1"), jobsDeviceID(t, e, "branch-1")
	f.core1Old = searchVersion(t, e, f.core1, 3*time.Hour, searchCore1Old)
	f.core1New = searchVersion(t, e, f.core1, time.Hour, searchCore1)
	f.branch1V = searchVersion(t, e, f.branch1, time.Hour, searchBranch1)
	return f
}

// searchFor runs a search and returns the page.
func (b *browser) searchFor(q url.Values) page {
	b.e.t.Helper()
	return b.get("/search?" + q.Encode())
}

var searchDeviceRE = regexp.MustCompile(`<h3 id="search-device-\d+"><a href="/devices/\d+">([^<]+)</a>`)

// searchDevices lists the devices a results page shows.
func searchDevices(body string) string {
	var out []string
	for _, m := range searchDeviceRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return strings.Join(out, ",")
}

// searchHitLines lists the matching lines a page shows, as text with the
// marks written [like this].
func searchHitLines(body string) []string {
	var out []string
	for _, part := range strings.Split(body, `<tr class="hit">`)[1:] {
		code := part[strings.Index(part, "<code>")+len("<code>") : strings.Index(part, "</code>")]
		out = append(out, strings.NewReplacer("<mark>", "[", "</mark>", "]").Replace(code))
	}
	return out
}

func TestSearchFindsAndHighlights(t *testing.T) {
	e := newEnv(t)
	f := newSearchFixture(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")

	// The empty form.
	p := b.get("/search")
	expect(t, "search form", p, http.StatusOK, "")
	expectBody(t, "search form", p, `name="q"`, `value="regex"`, `name="case"`, `value="all"`, `name="group"`, `<a href="/search" aria-current="page">`)
	if strings.Contains(p.body, `id="search-results"`) {
		t.Error("the empty form shows results")
	}

	// Substring, ignoring case, latest versions: the matches are marked,
	// the configuration's markup is text.
	p = b.searchFor(url.Values{"q": {"uplink"}})
	expect(t, "search", p, http.StatusOK, "")
	if got := searchDevices(p.body); got != "branch-1,core-1" {
		t.Errorf("devices %q, want branch-1,core-1", got)
	}
	want := []string{
		" description [UPLINK] to core",
		" description &lt;script&gt;alert(1)&lt;/script&gt; [Uplink]",
		" description [uplink] backup",
	}
	if got := searchHitLines(p.body); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("hit lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(p.body, "<script>alert") {
		t.Error("configuration markup reached the page unescaped")
	}
	expectBody(t, "search", p, "Matching lines: 3 · devices: 2",
		`href="/devices/`+jobsID(f.core1)+`/versions/`+f.core1New+`#L10"`, // line numbers link into the version
		`href="/devices/`+jobsID(f.core1)+`/versions/`+f.core1New+`"`, "Latest version, backed up")
	// Two lines of context around each hit; windows that touch merge,
	// others are apart.
	expectBody(t, "context", p, `<td class="line-no"><a href="/devices/`+jobsID(f.core1)+`/versions/`+f.core1New+`#L2" aria-label="Line 2">2</a></td><td class="code"><code>!</code>`,
		`<tr class="gap">`)
	if strings.Contains(p.body, `#L7"`) {
		t.Error("line 7 of core-1, three lines from any hit, is shown as context")
	}
	p = b.searchFor(url.Values{"q": {"uplink"}, "context": {"0"}})
	if strings.Contains(p.body, `#L2"`) || len(searchHitLines(p.body)) != 3 {
		t.Error("without context the page still shows lines around the hits")
	}

	// Case-sensitive.
	p = b.searchFor(url.Values{"q": {"uplink"}, "case": {"1"}})
	if got := searchHitLines(p.body); len(got) != 1 || got[0] != " description [uplink] backup" {
		t.Errorf("case-sensitive hits %q", got)
	}

	// A regular expression; every match of a line is marked.
	p = b.searchFor(url.Values{"q": {`Gi0/\d|Up`}, "mode": {"regex"}, "case": {"1"}})
	if got := searchHitLines(p.body); strings.Join(got, "|") != "interface [Gi0/1]|interface [Gi0/1]| description &lt;script&gt;alert(1)&lt;/script&gt; [Up]link|interface [Gi0/2]" {
		t.Errorf("regex hits %q", got)
	}

	// The query itself may be markup: the escaped match is marked.
	p = b.searchFor(url.Values{"q": {"<script>"}})
	if got := searchHitLines(p.body); len(got) != 1 || got[0] != " description [&lt;script&gt;]alert(1)&lt;/script&gt; Uplink" {
		t.Errorf("markup query hits %q", got)
	}
	expectBody(t, "markup query keeps its value", p, `value="&lt;script&gt;"`)

	// Old versions only with "all versions".
	p = b.searchFor(url.Values{"q": {"OldSecret"}})
	expectBody(t, "latest only", p, `id="search-none"`, "Older versions are searched when you choose all versions.")
	// A community is a secret: it is found only with the secrets shown.
	p = b.searchFor(url.Values{"q": {"OldSecret"}, "versions": {"all"}})
	expectBody(t, "a masked secret", p, `id="search-none"`)
	p = b.searchFor(url.Values{"q": {"OldSecret"}, "versions": {"all"}, "reveal": {"1"}})
	if got := searchHitLines(p.body); len(got) != 1 || got[0] != "snmp-server community [OldSecret] RO" {
		t.Errorf("all versions hits %q", got)
	}
	expectBody(t, "all versions", p, `/versions/`+f.core1Old+`"`, "Version backed up")
	p = b.searchFor(url.Values{"q": {"description"}, "versions": {"all"}, "context": {"0"}})
	if n := strings.Count(p.body, `<div class="search-version">`); n != 3 {
		t.Errorf("all versions of description: %d versions shown, want 3 (two of core-1, one of branch-1)", n)
	}

	// A narrowing group.
	p = b.searchFor(url.Values{"q": {"uplink"}, "group": {jobsID(f.branch)}})
	if got := searchDevices(p.body); got != "branch-1" {
		t.Errorf("search in Branch shows %q", got)
	}
	expectBody(t, "group kept", p, `<option value="`+jobsID(f.branch)+`" selected>`)
}

func TestSearchRefusesBadQueries(t *testing.T) {
	e := newEnv(t)
	newSearchFixture(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")

	p := b.searchFor(url.Values{"q": {"(ab"}, "mode": {"regex"}})
	expect(t, "bad regex", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "bad regex", p, `id="search-error"`, "The query cannot run: missing closing ): `(ab`. Correct it and search again.",
		`value="(ab"`, `value="regex" checked`, `aria-invalid="true"`)
	if strings.Contains(p.body, `id="search-results"`) {
		t.Error("a bad expression shows results")
	}
	p = b.searchFor(url.Values{"q": {"a*"}, "mode": {"regex"}})
	expect(t, "regex matching everything", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "regex matching everything", p, "matches empty text")

	p = b.searchFor(url.Values{"q": {strings.Repeat("x", 1001)}})
	expect(t, "long query", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "long query", p, "The query is too long: keep it under 1000 characters.")

	p = b.searchFor(url.Values{"q": {"uplink"}, "group": {"999999"}})
	expect(t, "unknown group", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "unknown group", p, "That group does not exist or is outside your device groups.")
}

func TestSearchStaysInScope(t *testing.T) {
	e := newEnv(t)
	f := newSearchFixture(t, e)
	e.createUser("brancher", "branch-password-1", auth.RoleViewer, false, f.fleet.branch)
	e.createUser("nobody", "nobody-password-1", auth.RoleViewer, false)
	b := e.browser()
	b.mustLogin("brancher", "branch-password-1")
	for _, q := range []url.Values{
		{"q": {"uplink"}},
		{"q": {"hostname"}, "versions": {"all"}},
		{"q": {"."}, "mode": {"regex"}, "versions": {"all"}},
	} {
		p := b.searchFor(q)
		expect(t, "scoped search", p, http.StatusOK, "")
		if got := searchDevices(p.body); got != "branch-1" || strings.Contains(p.body, "core-1") {
			t.Errorf("%v: the Branch viewer sees %q", q, got)
		}
	}
	// The group list offers Branch only; Core is refused.
	p := b.get("/search")
	if strings.Contains(p.body, ">Core</option>") || !strings.Contains(p.body, ">Branch</option>") {
		t.Errorf("group choices of the Branch viewer:\n%s", p.body)
	}
	p = b.searchFor(url.Values{"q": {"uplink"}, "group": {jobsID(f.core)}})
	expect(t, "another group", p, http.StatusUnprocessableEntity, "")
	if strings.Contains(p.body, "core-1") {
		t.Error("searching another group shows its devices")
	}

	n := e.browser()
	n.mustLogin("nobody", "nobody-password-1")
	p = n.searchFor(url.Values{"q": {"hostname"}})
	expectBody(t, "no scope", p, `id="search-none"`)
}

func TestSearchPagesAndCapsResults(t *testing.T) {
	e := newEnv(t)
	core := seedFleet(t, e).core
	ctx := context.Background()
	// 23 devices with the same configuration (one snapshot), 15 matching
	// lines each.
	var text strings.Builder
	for i := range 15 {
		fmt.Fprintf(&text, "ntp server 192.0.2.%d\n", i+1)
	}
	for i := range 23 {
		d, err := e.store.CreateDevice(ctx, db.Device{Name: fmt.Sprintf("sw-%02d", i), Host: "192.0.2.9", Port: 22,
			Platform: "cisco_ios", LoginMethod: "ssh", GroupID: &core, Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		searchVersion(t, e, d.ID, time.Hour, text.String())
	}
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")
	p := b.searchFor(url.Values{"q": {"ntp server"}, "context": {"0"}})
	expect(t, "page 1", p, http.StatusOK, "")
	if got := strings.Count(searchDevices(p.body), ",") + 1; got != 20 {
		t.Errorf("page 1 shows %d devices, want 20", got)
	}
	if got := len(searchHitLines(p.body)); got != 200 {
		t.Errorf("page 1 shows %d lines, want 10 per device", got)
	}
	expectBody(t, "page 1", p, "Matching lines: 345 · devices: 23", "devices 1–20 of 23", "(5 more)",
		`href="/search?context=0&amp;page=2&amp;q=ntp&#43;server" rel="next"`)
	p = b.searchFor(url.Values{"q": {"ntp server"}, "context": {"0"}, "page": {"2"}})
	if got := searchDevices(p.body); got != "sw-20,sw-21,sw-22" {
		t.Errorf("page 2 shows %q", got)
	}
	expectBody(t, "page 2", p, "devices 21–23 of 23", `rel="prev"`)
}
