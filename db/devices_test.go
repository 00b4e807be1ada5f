package db_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"backupd/db"
)

func TestDeviceLabels(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	core := createGroup(t, s, "Core", nil)
	access := createGroup(t, s, "Access", &core.ID)
	cred, err := s.CreateCredential(ctx, db.Credential{Name: "lab login", Username: "admin", Password: []byte("sealed")})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := s.CreateTemplate(ctx, db.Template{Name: "ios full", Platform: "cisco_ios", Commands: "show run"})
	if err != nil {
		t.Fatal(err)
	}
	id := insertDevice(t, s, "r1", &access.ID, &cred.ID, &tpl.ID)
	d, err := s.GetDevice(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.DeviceLabelsOf(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(l.GroupPath, "/") != "Core/Access" || l.Credential != "lab login" || l.Template != "ios full" {
		t.Errorf("labels %+v", l)
	}
	bare, err := s.GetDevice(ctx, insertDevice(t, s, "r2", nil, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if l, err := s.DeviceLabelsOf(ctx, bare); err != nil || len(l.GroupPath) != 0 || l.Credential != "" || l.Template != "" {
		t.Errorf("labels of a bare device %+v, %v", l, err)
	}
}

func TestDevicesPageQueriesFollowScope(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	core := createGroup(t, s, "Core", nil)
	access := createGroup(t, s, "Access", &core.ID)
	branch := createGroup(t, s, "Branch", nil)
	r1 := insertDevice(t, s, "r1", &core.ID, nil, nil)
	a1 := insertDevice(t, s, "a1", &access.ID, nil, nil)
	b1 := insertDevice(t, s, "b1", &branch.ID, nil, nil)
	loose := insertDevice(t, s, "loose", nil, nil, nil)
	coreOnly := db.Scope{GroupIDs: []int64{core.ID}}

	ids, err := s.DeviceIDsMatching(ctx, coreOnly, db.DeviceFilter{})
	if err != nil || !slices.Equal(ids, []int64{r1, a1}) {
		t.Errorf("ids in Core's scope = %v, %v; want [%d %d]", ids, err, r1, a1)
	}
	ids, err = s.DeviceIDsMatching(ctx, db.Scope{All: true}, db.DeviceFilter{GroupID: &core.ID})
	if err != nil || !slices.Equal(ids, []int64{r1, a1}) {
		t.Errorf("ids of group Core with subgroups = %v, %v", ids, err)
	}

	missing, outside, err := s.DeviceIDsOutside(ctx, coreOnly, []int64{r1, a1, b1, loose, 999})
	if err != nil || !slices.Equal(missing, []int64{999}) || !slices.Equal(outside, []int64{b1, loose}) {
		t.Errorf("DeviceIDsOutside = %v, %v, %v; want [999] [%d %d]", missing, outside, err, b1, loose)
	}
	missing, outside, err = s.DeviceIDsOutside(ctx, db.Scope{All: true}, []int64{r1, loose})
	if err != nil || missing != nil || outside != nil {
		t.Errorf("all groups: %v, %v, %v; want nothing outside", missing, outside, err)
	}
	if _, outside, _ := s.DeviceIDsOutside(ctx, db.Scope{}, []int64{r1}); !slices.Equal(outside, []int64{r1}) {
		t.Errorf("a scope of no group holds %d", r1)
	}

	// The export's walk: pages after an id, in scope, filtered.
	var walked []int64
	after := int64(0)
	for range 10 {
		page, err := s.DevicesAfter(ctx, db.Scope{All: true}, db.DeviceFilter{}, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, d := range page {
			walked = append(walked, d.ID)
		}
		after = page[len(page)-1].ID
	}
	if !slices.Equal(walked, []int64{r1, a1, b1, loose}) {
		t.Errorf("walk = %v", walked)
	}
	page, err := s.DevicesAfter(ctx, coreOnly, db.DeviceFilter{Query: "a1"}, 0, 10)
	if err != nil || len(page) != 1 || page[0].ID != a1 {
		t.Errorf("filtered walk = %v, %v", page, err)
	}

	names, err := s.ExistingDeviceNames(ctx, []string{"R1", "nope", "b1"})
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"b1", "r1"}) {
		t.Errorf("ExistingDeviceNames = %v, %v; want the stored names, case folded", names, err)
	}
}

func TestImportDevicesIsAllOrNothing(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	g := createGroup(t, s, "G", nil)
	tpl, err := s.CreateTemplate(ctx, db.Template{Name: "junos", Platform: "juniper_junos", Commands: "show configuration"})
	if err != nil {
		t.Fatal(err)
	}
	insertDevice(t, s, "existing", nil, nil, nil)
	dev := func(name string) db.Device {
		return db.Device{Name: name, Host: "192.0.2.1", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh",
			GroupID: &g.ID, Encoding: "utf-8", Enabled: true}
	}
	count := func() int {
		t.Helper()
		_, n, err := s.ListDevices(ctx, db.Scope{All: true}, db.DeviceFilter{}, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	wrongTemplate := dev("c")
	wrongTemplate.TemplateID = &tpl.ID
	missingGroup := dev("c")
	missingGroup.GroupID = ptr(int64(999))
	for _, c := range []struct {
		name  string
		list  []db.Device
		index int
		want  error
	}{
		{"name taken", []db.Device{dev("a"), dev("EXISTING")}, 1, db.ErrNameExists},
		{"template of another platform", []db.Device{dev("a"), dev("b"), wrongTemplate}, 2, nil},
		{"missing group", []db.Device{dev("a"), missingGroup}, 1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := s.ImportDevices(ctx, c.list)
			var ie *db.ImportError
			if !errors.As(err, &ie) || ie.Index != c.index {
				t.Fatalf("err = %v, want an ImportError at %d", err, c.index)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
			if n := count(); n != 1 {
				t.Errorf("%d devices after a failed import, want the 1 there was", n)
			}
		})
	}

	var list []db.Device
	for i := range 500 {
		list = append(list, dev(fmt.Sprintf("sw-%03d", i)))
	}
	if err := s.ImportDevices(ctx, list); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 501 {
		t.Errorf("%d devices after importing 500, want 501", n)
	}
	// The search index follows the imported rows.
	if _, n, _ := s.ListDevices(ctx, db.Scope{All: true}, db.DeviceFilter{Query: "sw-42"}, 50, 0); n != 10 {
		t.Errorf("search finds %d imported devices for sw-42, want sw-420 to sw-429", n)
	}
}

func TestInventoryDeviceCounts(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	core := createGroup(t, s, "Core", nil)
	access := createGroup(t, s, "Access", &core.ID)
	branch := createGroup(t, s, "Branch", nil)
	cred1, err := s.CreateCredential(ctx, db.Credential{Name: "one", Username: "u"})
	if err != nil {
		t.Fatal(err)
	}
	cred2, err := s.CreateCredential(ctx, db.Credential{Name: "two", Username: "u"})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := s.CreateTemplate(ctx, db.Template{Name: "t", Platform: "cisco_ios", Commands: "show run"})
	if err != nil {
		t.Fatal(err)
	}
	unused, err := s.CreateTemplate(ctx, db.Template{Name: "u", Platform: "cisco_ios", Commands: "show run"})
	if err != nil {
		t.Fatal(err)
	}
	insertDevice(t, s, "c1", &core.ID, &cred1.ID, &tpl.ID)
	insertDevice(t, s, "c2", &core.ID, &cred1.ID, nil)
	insertDevice(t, s, "a1", &access.ID, &cred2.ID, &tpl.ID)
	insertDevice(t, s, "b1", &branch.ID, &cred1.ID, nil)
	insertDevice(t, s, "loose", nil, &cred2.ID, &tpl.ID)

	counts, err := s.GroupDeviceCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]int{core.ID: 2, access.ID: 1, branch.ID: 1, 0: 1}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("GroupDeviceCounts = %v, want %v", counts, want)
	}
	if n, err := s.DevicesInGroup(ctx, core.ID); err != nil || n != 2 {
		t.Errorf("DevicesInGroup(core) = %d, %v; want 2 (not counting Access)", n, err)
	}

	ids := []int64{cred1.ID, cred2.ID}
	for _, c := range []struct {
		name  string
		scope db.Scope
		want  map[int64]int
	}{
		{"all", db.Scope{All: true}, map[int64]int{cred1.ID: 3, cred2.ID: 2}},
		{"core and below", db.Scope{GroupIDs: []int64{core.ID}}, map[int64]int{cred1.ID: 2, cred2.ID: 1}},
		{"branch", db.Scope{GroupIDs: []int64{branch.ID}}, map[int64]int{cred1.ID: 1}},
		{"none", db.Scope{}, map[int64]int{}},
	} {
		got, err := s.DevicesUsingCredentials(ctx, c.scope, ids)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("DevicesUsingCredentials(%s) = %v, want %v", c.name, got, c.want)
		}
	}
	got, err := s.DevicesUsingTemplates(ctx, db.Scope{GroupIDs: []int64{core.ID}}, []int64{tpl.ID, unused.ID})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(map[int64]int{tpl.ID: 2}) {
		t.Errorf("DevicesUsingTemplates(core) = %v", got)
	}
	if got, err := s.DevicesUsingTemplates(ctx, db.Scope{All: true}, nil); err != nil || len(got) != 0 {
		t.Errorf("no ids: %v %v", got, err)
	}

	if used, err := s.TemplateInUse(ctx, tpl.ID); err != nil || !used {
		t.Errorf("TemplateInUse(used) = %v, %v", used, err)
	}
	if used, err := s.TemplateInUse(ctx, unused.ID); err != nil || used {
		t.Errorf("TemplateInUse(unused) = %v, %v", used, err)
	}
}
