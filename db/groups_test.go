package db_test

import (
	"context"
	"errors"
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
