package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/queue"
)

// iosMergeVersion is a stored version of a classic IOS switch.
const iosMergeVersion = "!\nhostname merge-sw\n!\ninterface Gi0/1\n description uplink\n!\nend\n"

// On a platform that merges, the version page offers the version's
// lines with a box each and says it is not a full replace; a request
// without lines, with a line outside the version or not a number, and
// lines for a platform that replaces are refused with a sentence; a
// good one is labelled a merge on its page (with the parent line that
// will be sent first) and in the list, in English and Chinese.
func TestRestoreMergeForm(t *testing.T) {
	f := newRestoreFixture(t)
	e := f.e
	ctx := context.Background()
	sw, err := e.store.CreateDevice(ctx, db.Device{Name: "merge-sw", Host: "192.0.2.8", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &f.core, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := e.store.PutSnapshot(ctx, iosMergeVersion)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour)
	v := "00000000-0000-4000-8000-0000000000d1"
	if err := e.store.InsertBackup(ctx, db.Backup{ID: v, DeviceID: sw.ID, StartedAt: at, FinishedAt: &at, Success: true,
		SnapshotHash: &hash, Trigger: queue.TriggerManual}); err != nil {
		t.Fatal(err)
	}
	root := f.signedIn("root")
	p := root.get(versionPath(sw.ID, v))
	expectBody(t, "merge form", p, `id="version-restore-lines"`, `name="line" value="2"`, `name="line" value="5"`, `name="all" value="1"`)
	expectBody(t, "merge form, comment", p, `<div class="device-merge-line muted"><span class="device-ln">3</span>`)
	expectText(t, "merge form", p, "a merge of the lines you select — not a full replace", "Request a merge of the selected lines",
		"still a merge, not a full replace")

	post := func(device int64, version string, lines ...string) page {
		t.Helper()
		return root.post("/restores", url.Values{"device_id": {strconv.FormatInt(device, 10)}, "version": {version}, "line": lines})
	}
	for _, c := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"no lines", nil, "select the lines of the version to merge"},
		{"out of range", []string{"2", "999"}, "line 999 is not in the version, which has 7 lines"},
		{"not a number", []string{"2", "x"}, "The selected lines are not line numbers of the version"},
		{"comments only", []string{"1", "3"}, "blank lines or comments"},
	} {
		p := post(sw.ID, v, c.lines...)
		expect(t, c.name, p, http.StatusUnprocessableEntity, "")
		expectText(t, c.name, p, c.want)
	}
	p = post(f.edge, f.edgeV1, "2")
	expect(t, "lines on a replace platform", p, http.StatusUnprocessableEntity, "")
	expectText(t, "lines on a replace platform", p, "lines cannot be selected")
	if n := len(mustList(t, e, db.RestoreFilter{DeviceID: sw.ID})); n != 0 {
		t.Fatalf("%d restores after refused requests", n)
	}

	id := requested(t, post(sw.ID, v, "5"))
	p = root.get(restorePath(id))
	expectText(t, "merge page", p, "Merge of 1 selected lines — not a full replace: lines not selected and lines the device has that the version lacks are left as they are.")
	expectBody(t, "merge page", p, `id="restore-merge-lines"`, `<td class="device-ln">4</td><td><code>interface Gi0/1</code> <span class="muted">(parent)</span>`,
		`<td class="device-ln">5</td><td><code> description uplink</code></td>`)
	expectText(t, "list", root.get("/restores"), "Merge of 1 selected lines — not a full replace")
	root.header.Set("Accept-Language", "zh-CN")
	expectText(t, "merge page, zh", root.get(restorePath(id)), "合并所选的 1 行——不是整体替换")
	root.header.Del("Accept-Language")
}

// iosBannerVersion is a classic IOS version with a banner (the C9200L's
// "banner login" recorded in oxidized, spec/model/data/ios#C9200L-24P-4G_17.09.04a).
const iosBannerVersion = "hostname merge-sw\n!\nbanner login ^C\n.\nLogin banner.\n.\n^C\ninterface Gi0/1\n description uplink\nend\n"

// A banner cannot be merged line by line: the form shows its lines
// with a disabled box and why, and says "select all" leaves them out;
// a request that names one of its lines anyway is refused naming the
// banner's lines; "select all" is taken without them.
func TestRestoreMergeFormBanner(t *testing.T) {
	f := newRestoreFixture(t)
	e := f.e
	ctx := context.Background()
	sw, err := e.store.CreateDevice(ctx, db.Device{Name: "banner-sw", Host: "192.0.2.9", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &f.core, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := e.store.PutSnapshot(ctx, iosBannerVersion)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour)
	v := "00000000-0000-4000-8000-0000000000d2"
	if err := e.store.InsertBackup(ctx, db.Backup{ID: v, DeviceID: sw.ID, StartedAt: at, FinishedAt: &at, Success: true,
		SnapshotHash: &hash, Trigger: queue.TriggerManual}); err != nil {
		t.Fatal(err)
	}
	root := f.signedIn("root")
	p := root.get(versionPath(sw.ID, v))
	expectBody(t, "banner form", p, `name="line" value="1"`, `name="line" value="9"`, `id="version-restore-block-3"`,
		`<input type="checkbox" disabled> <span class="device-ln">5</span>`, `id="version-restore-skipped"`)
	if strings.Contains(p.body, `name="line" value="4"`) {
		t.Error("a line of the banner has a box to tick")
	}
	expectText(t, "banner form", p, "Lines 3-7: a banner spans several lines", "Select all leaves out lines 3-7")
	root.header.Set("Accept-Language", "zh-CN")
	expectText(t, "banner form, zh", root.get(versionPath(sw.ID, v)), "第 3-7 行：横幅", "“选择全部”不包括第 3-7 行")
	root.header.Del("Accept-Language")

	bad := root.post("/restores", url.Values{"device_id": {strconv.FormatInt(sw.ID, 10)}, "version": {v}, "line": {"1", "5"}})
	expect(t, "a banner line", bad, http.StatusUnprocessableEntity, "")
	expectText(t, "a banner line", bad, "lines 3-7 are a banner: a banner spans several lines and cannot be merged line by line; set it by hand")
	if n := len(mustList(t, e, db.RestoreFilter{DeviceID: sw.ID})); n != 0 {
		t.Fatalf("%d restores after a refused request", n)
	}
	id := requested(t, root.post("/restores", url.Values{"device_id": {strconv.FormatInt(sw.ID, 10)}, "version": {v}, "all": {"1"}}))
	r, err := e.store.Restore(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(r.Lines) != "[1 8 9]" {
		t.Errorf("select all took lines %v, want [1 8 9]", r.Lines)
	}
}
