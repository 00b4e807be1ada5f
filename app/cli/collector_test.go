package cli_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/db"
)

// TestCollectorAndZoneLists: the tables `collector list` and `collector
// zone list` print, header and one line per row, on either engine.
func TestCollectorAndZoneLists(t *testing.T) {
	data := storeDir(t)
	createKey(t, data, "--name", "bootstrap")
	zoneID := strings.TrimSpace(mustRun(t, call{}, "collector", "zone", "create", "branch", "--data", data).stdout)

	ctx := t.Context()
	s := openStore(t, data)
	id, _ := strconv.ParseInt(zoneID, 10, 64)
	d, err := s.CreateDevice(ctx, db.Device{Name: "branch-sw", Host: "192.0.2.98", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, name := range []string{"branch-1", "branch-2"} {
		token := []byte("token-" + name)
		if _, err := s.CreateEnrolmentToken(ctx, id, token, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		c, err := s.EnrolCollector(ctx, token, db.Collector{Name: name, PublicKey: "public", Version: "9.9.9"}, []byte("bearer-"+name))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	mustRun(t, call{}, "collector", "zone", "move", "branch", strconv.FormatInt(d.ID, 10), "--data", data)
	mustRun(t, call{}, "collector", "revoke", strconv.FormatInt(ids[1], 10), "--data", data)

	lines := func(args ...string) []string {
		t.Helper()
		out := mustRun(t, call{}, append(args, "--data", data)...).stdout
		var rows []string
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			rows = append(rows, strings.Join(strings.Fields(l), " "))
		}
		return rows
	}
	stamp := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`
	want := []*regexp.Regexp{
		regexp.MustCompile(`^ID NAME ZONE VERSION LAST SEEN \(UTC\) FROM JOBS STATE$`),
		regexp.MustCompile(`^` + strconv.FormatInt(ids[0], 10) + ` branch-1 branch 9\.9\.9 ` + stamp + ` 0 active$`),
		regexp.MustCompile(`^` + strconv.FormatInt(ids[1], 10) + ` branch-2 branch 9\.9\.9 ` + stamp + ` 0 revoked ` + stamp + `$`),
	}
	got := lines("collector", "list")
	if len(got) != len(want) {
		t.Fatalf("collector list:\n%s", strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !w.MatchString(got[i]) {
			t.Errorf("collector list line %d: %q; want %s", i+1, got[i], w)
		}
	}
	got = lines("collector", "zone", "list")
	if wantZones := []string{"ID NAME DEVICES COLLECTORS", "1 local 0 0", zoneID + " branch 1 1"}; strings.Join(got, "\n") != strings.Join(wantZones, "\n") {
		t.Errorf("zone list:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantZones, "\n"))
	}
	mustFail(t, call{}, []string{"no collector 999"}, "collector", "revoke", "999", "--data", data)
}
