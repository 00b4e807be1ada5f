package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"backupd/db"
)

// siblingNames lists the children of parent (nil: the roots) in tree order.
func siblingNames(t *testing.T, s *db.Store, parent *int64) string {
	t.Helper()
	all, err := s.AllGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, g := range all {
		if (parent == nil && g.ParentID == nil) || (parent != nil && g.ParentID != nil && *g.ParentID == *parent) {
			out += g.Name + " "
		}
	}
	return out
}

func TestReorderGroupAmongSiblings(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	a := createGroup(t, s, "A", nil)
	b := createGroup(t, s, "B", nil)
	c := createGroup(t, s, "C", nil)
	x := createGroup(t, s, "X", &b.ID)
	y := createGroup(t, s, "Y", &b.ID)

	steps := []struct {
		id     int64
		step   int
		moved  bool
		roots  string
		childs string
	}{
		{c.ID, -1, true, "A C B ", "X Y "},
		{c.ID, -1, true, "C A B ", "X Y "},
		{c.ID, -1, false, "C A B ", "X Y "}, // already first
		{b.ID, 1, false, "C A B ", "X Y "},  // already last
		{a.ID, 1, true, "C B A ", "X Y "},
		{y.ID, -1, true, "C B A ", "Y X "}, // children move among themselves only
		{x.ID, 1, false, "C B A ", "Y X "},
	}
	for i, st := range steps {
		moved, err := s.ReorderGroup(ctx, st.id, st.step)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if moved != st.moved {
			t.Errorf("step %d: moved %v, want %v", i, moved, st.moved)
		}
		if got := siblingNames(t, s, nil); got != st.roots {
			t.Errorf("step %d: roots %q, want %q", i, got, st.roots)
		}
		if got := siblingNames(t, s, &b.ID); got != st.childs {
			t.Errorf("step %d: children of B %q, want %q", i, got, st.childs)
		}
	}
	checkTree(t, s)

	// Equal sort_order values (older data) are renumbered, so a move
	// always changes the order.
	if _, err := s.Exec(ctx, `UPDATE device_groups SET sort_order = 0 WHERE parent_id IS NULL`); err != nil {
		t.Fatal(err)
	}
	if got := siblingNames(t, s, nil); got != "A B C " {
		t.Fatalf("ties order by name: %q", got)
	}
	if moved, err := s.ReorderGroup(ctx, c.ID, -1); err != nil || !moved {
		t.Fatalf("move C up among ties: %v %v", moved, err)
	}
	if got := siblingNames(t, s, nil); got != "A C B " {
		t.Errorf("after moving C up among ties: %q, want \"A C B \"", got)
	}

	if _, err := s.ReorderGroup(ctx, 9999, -1); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("unknown group: %v, want ErrNotFound", err)
	}
	if _, err := s.ReorderGroup(ctx, a.ID, 2); err == nil {
		t.Error("a step of 2 was accepted")
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
