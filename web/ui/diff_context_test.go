package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/db"
)

// gapTexts are two versions of a 300-line configuration that differ at
// lines 20 and 250: the diff has unchanged lines before, between and
// after its two changes.
func gapTexts() (old, new string) {
	var a, b strings.Builder
	for i := 1; i <= 300; i++ {
		line := fmt.Sprintf("interface Loopback%d\n", i)
		if i%10 == 0 {
			line = "ntp clock-period 17179869\n" // a noise line of cisco_ios
		}
		a.WriteString(line)
		switch i {
		case 20:
			b.WriteString(" description changed at 20\n")
		case 250:
			b.WriteString(" description changed at 250\n")
		default:
			b.WriteString(line)
		}
	}
	return a.String(), b.String()
}

// gapVersions stores the two versions of gapTexts on the fleet's core
// device.
func gapVersions(t *testing.T, e *env, f *detailFleet) (v1, v2 db.Backup) {
	t.Helper()
	old, new := gapTexts()
	return f.version(t, e, f.coreDev, 2*time.Hour, old, true, ""), f.version(t, e, f.coreDev, time.Hour, new, true, "")
}

// GET /api/devices/{id}/versions/{backup}/lines gives a version's lines
// with their noise flag, to a signed-in user who sees backups of the
// device, and a clear error to anyone else or for a bad question.
func TestVersionLinesAPI(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	_, v2 := gapVersions(t, e, f)
	other := f.version(t, e, f.branchDev, time.Hour, "hostname branch\n", true, "")
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	e.createUser("brancher", "branch-password-1", auth.RoleViewer, false, f.branch)
	base := fmt.Sprintf("/api/devices/%d/versions/%s/lines", f.coreDev.ID, v2.ID)

	anon := e.browser()
	expect(t, "without a session", anon.get(base+"?start=1&count=5"), http.StatusUnauthorized, "")

	b := e.browser()
	b.mustLogin("viewer", "viewer-password-1")
	p := b.get(base + "?start=18&count=4")
	expect(t, "lines 18 to 21", p, http.StatusOK, "")
	var got struct {
		Lines []struct {
			No    int    `json:"no"`
			Text  string `json:"text"`
			Noise bool   `json:"noise"`
		} `json:"lines"`
		Total int `json:"total"`
	}
	if err := json.Unmarshal([]byte(p.body), &got); err != nil {
		t.Fatalf("%v: %s", err, p.body)
	}
	want := fmt.Sprint([]any{18, "interface Loopback18", false, 19, "interface Loopback19", false,
		20, " description changed at 20", false, 21, "interface Loopback21", false})
	var have []any
	for _, l := range got.Lines {
		have = append(have, l.No, l.Text, l.Noise)
	}
	if fmt.Sprint(have) != want || got.Total != 300 {
		t.Errorf("lines 18–21 = %v (of %d), want %s (of 300)", have, got.Total, want)
	}
	p = b.get(base + "?start=299&count=5")
	if err := json.Unmarshal([]byte(p.body), &got); err != nil || len(got.Lines) != 2 || !got.Lines[1].Noise || got.Lines[1].No != 300 {
		t.Errorf("lines 299 on = %s, want 299 and 300, the last one noise", p.body)
	}

	for _, c := range []struct {
		what, path string
		status     int
		code       string
	}{
		{"no start", base + "?count=5", http.StatusUnprocessableEntity, "VALIDATION_ERROR"},
		{"start 0", base + "?start=0&count=5", http.StatusUnprocessableEntity, "VALIDATION_ERROR"},
		{"count 0", base + "?start=1&count=0", http.StatusUnprocessableEntity, "VALIDATION_ERROR"},
		{"count 1001", base + "?start=1&count=1001", http.StatusUnprocessableEntity, "VALIDATION_ERROR"},
		{"another device's version", fmt.Sprintf("/api/devices/%d/versions/%s/lines?start=1&count=1", f.coreDev.ID, other.ID), http.StatusNotFound, "RESOURCE_NOT_FOUND"},
		{"an unknown version", fmt.Sprintf("/api/devices/%d/versions/nope/lines?start=1&count=1", f.coreDev.ID), http.StatusNotFound, "RESOURCE_NOT_FOUND"},
	} {
		p := b.get(c.path)
		if p.status != c.status || !strings.Contains(p.body, `"`+c.code+`"`) {
			t.Errorf("%s: %d %s, want %d %s", c.what, p.status, p.body, c.status, c.code)
		}
	}

	outside := e.browser()
	outside.mustLogin("brancher", "branch-password-1")
	if p := outside.get(base + "?start=1&count=5"); p.status != http.StatusForbidden || strings.Contains(p.body, "Loopback") {
		t.Errorf("a user of another group: %d %s, want 403 and no line", p.status, p.body)
	}
}
