package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"backupd/db"
	"backupd/internal/dbtest"
)

// openStore opens a migrated, empty store: SQLite in a fresh temporary
// data directory, or a fresh PostgreSQL database (see internal/dbtest).
func openStore(t *testing.T) *db.Store {
	t.Helper()
	return dbtest.Open(t)
}

func createGroup(t *testing.T, s *db.Store, name string, parent *int64) db.Group {
	t.Helper()
	g, err := s.CreateGroup(context.Background(), name, parent)
	if err != nil {
		t.Fatalf("CreateGroup(%q): %v", name, err)
	}
	return g
}

func ptr[T any](v T) *T { return &v }

// sameGroup compares groups by value, parent id included.
func sameGroup(a, b db.Group) bool {
	pa, pb := int64(0), int64(0)
	if a.ParentID != nil {
		pa = *a.ParentID
	}
	if b.ParentID != nil {
		pb = *b.ParentID
	}
	a.ParentID, b.ParentID = nil, nil
	return a == b && pa == pb
}

// insertDevice adds a device row with raw SQL (devices have no store code
// yet) and returns its id.
func insertDevice(t *testing.T, s *db.Store, name string, groupID, credentialID, templateID *int64) int64 {
	t.Helper()
	id, err := s.InsertID(context.Background(),
		`INSERT INTO devices (name, host, port, platform, login_method, group_id, credential_id, template_id, created_at, updated_at)
		 VALUES (?, '127.0.0.1', 22, 'cisco_ios', 'ssh', ?, ?, ?, ?, ?)`,
		name, groupID, credentialID, templateID, db.Now(), db.Now())
	if err != nil {
		t.Fatalf("insert device %q: %v", name, err)
	}
	return id
}

// checkTree verifies the materialised-path invariant on every group: a
// root's path is "/id/" at depth 0, a child's path is its parent's path
// plus "id/" at its parent's depth plus one.
func checkTree(t *testing.T, s *db.Store) map[int64]db.Group {
	t.Helper()
	all, err := s.AllGroups(context.Background())
	if err != nil {
		t.Fatalf("AllGroups: %v", err)
	}
	byID := map[int64]db.Group{}
	for _, g := range all {
		byID[g.ID] = g
	}
	for _, g := range all {
		wantPath, wantDepth := "/"+strconv.FormatInt(g.ID, 10)+"/", 0
		if g.ParentID != nil {
			p, ok := byID[*g.ParentID]
			if !ok {
				t.Fatalf("group %d has parent %d that does not exist", g.ID, *g.ParentID)
			}
			wantPath, wantDepth = p.Path+strconv.FormatInt(g.ID, 10)+"/", p.Depth+1
		}
		if g.Path != wantPath || g.Depth != wantDepth {
			t.Errorf("group %d (%s): path %q depth %d, want path %q depth %d", g.ID, g.Name, g.Path, g.Depth, wantPath, wantDepth)
		}
	}
	return byID
}

func TestCreateGroupTreePaths(t *testing.T) {
	s := openStore(t)
	root := createGroup(t, s, "root", nil)
	child := createGroup(t, s, "child", &root.ID)
	grand := createGroup(t, s, "grandchild", &child.ID)

	want := []struct {
		g     db.Group
		path  string
		depth int
	}{
		{root, fmt.Sprintf("/%d/", root.ID), 0},
		{child, fmt.Sprintf("/%d/%d/", root.ID, child.ID), 1},
		{grand, fmt.Sprintf("/%d/%d/%d/", root.ID, child.ID, grand.ID), 2},
	}
	for _, w := range want {
		if w.g.Path != w.path || w.g.Depth != w.depth {
			t.Errorf("%s: path %q depth %d, want %q %d", w.g.Name, w.g.Path, w.g.Depth, w.path, w.depth)
		}
		got, err := s.GetGroup(context.Background(), w.g.ID)
		if err != nil {
			t.Fatalf("GetGroup(%d): %v", w.g.ID, err)
		}
		if !sameGroup(got, w.g) {
			t.Errorf("GetGroup(%d) = %+v, CreateGroup returned %+v", w.g.ID, got, w.g)
		}
	}
	if grand.ParentID == nil || *grand.ParentID != child.ID {
		t.Errorf("grandchild parent = %v, want %d", grand.ParentID, child.ID)
	}
	if root.ParentID != nil {
		t.Errorf("root parent = %v, want nil", *root.ParentID)
	}
	checkTree(t, s)
}

func TestMoveSubtreeRewritesEveryDescendant(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	// Group 1 is the subtree to move; groups 10 and up exist so that a path
	// such as "/1/" and "/10/" or "/11/" share a textual head.
	a := createGroup(t, s, "A", nil) // id 1
	if a.ID != 1 {
		t.Fatalf("first group id = %d, want 1 (the test relies on it)", a.ID)
	}
	c := createGroup(t, s, "C", &a.ID)
	d := createGroup(t, s, "D", &c.ID)
	e := createGroup(t, s, "E", &c.ID)
	f := createGroup(t, s, "F", &d.ID)
	b := createGroup(t, s, "B", nil)
	sibling := createGroup(t, s, "A-sibling", &a.ID) // stays under A
	var filler db.Group
	for i := 0; filler.ID < 12; i++ {
		if i > 20 {
			t.Fatal("could not reach group id 12")
		}
		filler = createGroup(t, s, fmt.Sprintf("filler-%d", i), nil)
	}
	// /10/ and /11/... and /12/: look like "/1" at the head.
	g10, err := s.GetGroup(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	under10 := createGroup(t, s, "under-10", &g10.ID)
	under11 := createGroup(t, s, "under-11", ptr[int64](11))
	before := checkTree(t, s)

	// Move C (with D, E, F) from under A to under B.
	moved, err := s.UpdateGroup(ctx, c.ID, nil, &b.ID)
	if err != nil {
		t.Fatalf("move C under B: %v", err)
	}
	if moved.ParentID == nil || *moved.ParentID != b.ID {
		t.Fatalf("moved C parent = %v, want %d", moved.ParentID, b.ID)
	}
	after := checkTree(t, s)
	wantPaths := map[int64]struct {
		path  string
		depth int
	}{
		c.ID: {fmt.Sprintf("/%d/%d/", b.ID, c.ID), 1},
		d.ID: {fmt.Sprintf("/%d/%d/%d/", b.ID, c.ID, d.ID), 2},
		e.ID: {fmt.Sprintf("/%d/%d/%d/", b.ID, c.ID, e.ID), 2},
		f.ID: {fmt.Sprintf("/%d/%d/%d/%d/", b.ID, c.ID, d.ID, f.ID), 3},
	}
	for id, w := range wantPaths {
		if g := after[id]; g.Path != w.path || g.Depth != w.depth {
			t.Errorf("group %d (%s) after move: path %q depth %d, want %q %d", id, g.Name, g.Path, g.Depth, w.path, w.depth)
		}
	}
	for _, id := range []int64{a.ID, b.ID, sibling.ID, g10.ID, under10.ID, under11.ID, filler.ID} {
		if !sameGroup(before[id], after[id]) {
			t.Errorf("group %d outside the moved subtree changed: %+v → %+v", id, before[id], after[id])
		}
	}

	// Move the whole of A (id 1) under F: deep, and "/1/" must not catch
	// "/10/", "/11/" or "/12/".
	if _, err := s.UpdateGroup(ctx, a.ID, nil, &f.ID); err != nil {
		t.Fatalf("move A under F: %v", err)
	}
	after2 := checkTree(t, s)
	if got, want := after2[sibling.ID].Path, fmt.Sprintf("/%d/%d/%d/%d/%d/%d/", b.ID, c.ID, d.ID, f.ID, a.ID, sibling.ID); got != want {
		t.Errorf("A-sibling after moving A under F: path %q, want %q", got, want)
	}
	if got := after2[sibling.ID].Depth; got != 5 {
		t.Errorf("A-sibling depth = %d, want 5", got)
	}
	for _, id := range []int64{g10.ID, under10.ID, under11.ID, filler.ID} {
		if !sameGroup(before[id], after2[id]) {
			t.Errorf("group %d changed when group 1 moved: %+v → %+v", id, before[id], after2[id])
		}
	}

	// And back to the root level.
	if _, err := s.UpdateGroup(ctx, c.ID, nil, nil); err != nil {
		t.Fatalf("move C to the root: %v", err)
	}
	after3 := checkTree(t, s)
	if got := after3[f.ID]; got.Path != fmt.Sprintf("/%d/%d/%d/", c.ID, d.ID, f.ID) || got.Depth != 2 {
		t.Errorf("F after moving C to root: %q depth %d", got.Path, got.Depth)
	}
	if got := after3[sibling.ID]; got.Depth != 4 || got.Path != fmt.Sprintf("/%d/%d/%d/%d/%d/", c.ID, d.ID, f.ID, a.ID, sibling.ID) {
		t.Errorf("A-sibling after moving C to root: %q depth %d", got.Path, got.Depth)
	}
}

func TestMoveUnderItselfOrDescendantIsInvalid(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	root := createGroup(t, s, "root", nil)
	child := createGroup(t, s, "child", &root.ID)
	grand := createGroup(t, s, "grandchild", &child.ID)
	other := createGroup(t, s, "other", nil)
	before := checkTree(t, s)

	cases := []struct {
		name   string
		id     int64
		parent *int64
	}{
		{"root under itself", root.ID, &root.ID},
		{"root under its child", root.ID, &child.ID},
		{"root under its grandchild", root.ID, &grand.ID},
		{"child under itself", child.ID, &child.ID},
		{"child under its child", child.ID, &grand.ID},
		{"under a missing group", child.ID, ptr[int64](9999)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.UpdateGroup(ctx, c.id, ptr("renamed in vain"), c.parent)
			if !errors.Is(err, db.ErrInvalidParent) {
				t.Fatalf("err = %v, want ErrInvalidParent", err)
			}
		})
	}
	after := checkTree(t, s)
	for id, g := range before {
		if !sameGroup(after[id], g) {
			t.Errorf("refused move changed group %d: %+v → %+v", id, g, after[id])
		}
	}
	// A legal move still works after the refusals.
	if _, err := s.UpdateGroup(ctx, grand.ID, nil, &other.ID); err != nil {
		t.Fatalf("legal move: %v", err)
	}
}

func TestCreateGroupUnderMissingParentIsInvalid(t *testing.T) {
	s := openStore(t)
	if _, err := s.CreateGroup(context.Background(), "orphan", ptr[int64](42)); !errors.Is(err, db.ErrInvalidParent) {
		t.Fatalf("err = %v, want ErrInvalidParent", err)
	}
	all, err := s.AllGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 0 {
		t.Fatalf("a refused create left %d groups behind", len(all))
	}
}

func TestUpdateMissingGroupIsNotFound(t *testing.T) {
	s := openStore(t)
	if _, err := s.UpdateGroup(context.Background(), 77, ptr("x"), nil); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if err := s.DeleteGroup(context.Background(), 77); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("delete: err = %v, want ErrNotFound", err)
	}
}

func TestDeleteGroupRules(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	root := createGroup(t, s, "root", nil)
	child := createGroup(t, s, "child", &root.ID)
	used := createGroup(t, s, "used", nil)
	insertDevice(t, s, "sw1", &used.ID, nil, nil)

	if err := s.DeleteGroup(ctx, root.ID); !errors.Is(err, db.ErrHasChildren) {
		t.Fatalf("delete group with a child: err = %v, want ErrHasChildren", err)
	}
	if err := s.DeleteGroup(ctx, used.ID); !errors.Is(err, db.ErrInUse) {
		t.Fatalf("delete group with a device: err = %v, want ErrInUse", err)
	}
	for _, id := range []int64{root.ID, used.ID} {
		if _, err := s.GetGroup(ctx, id); err != nil {
			t.Fatalf("refused delete removed group %d: %v", id, err)
		}
	}
	if err := s.DeleteGroup(ctx, child.ID); err != nil {
		t.Fatalf("delete leaf: %v", err)
	}
	if _, err := s.GetGroup(ctx, child.ID); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("deleted group still found: %v", err)
	}
	if err := s.DeleteGroup(ctx, root.ID); err != nil {
		t.Fatalf("delete root once its child is gone: %v", err)
	}
}

func TestGroupNamesUniqueIgnoringCase(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	core := createGroup(t, s, "Core", nil)
	edge := createGroup(t, s, "Edge", &core.ID)
	for _, name := range []string{"Core", "core", "CORE", "cOrE"} {
		if _, err := s.CreateGroup(ctx, name, nil); !errors.Is(err, db.ErrNameExists) {
			t.Errorf("CreateGroup(%q): err = %v, want ErrNameExists", name, err)
		}
		if _, err := s.CreateGroup(ctx, name, &edge.ID); !errors.Is(err, db.ErrNameExists) {
			t.Errorf("CreateGroup(%q) under another parent: err = %v, want ErrNameExists", name, err)
		}
	}
	if _, err := s.UpdateGroup(ctx, edge.ID, ptr("CORE"), &core.ID); !errors.Is(err, db.ErrNameExists) {
		t.Errorf("rename Edge to CORE: err = %v, want ErrNameExists", err)
	}
	// Renaming a group to a different case of its own name is allowed.
	g, err := s.UpdateGroup(ctx, core.ID, ptr("CORE"), nil)
	if err != nil {
		t.Fatalf("rename Core to CORE: %v", err)
	}
	if g.Name != "CORE" {
		t.Errorf("name = %q, want CORE", g.Name)
	}
}

func TestSiblingSortOrderIncrements(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var roots []db.Group
	for i := range 3 {
		roots = append(roots, createGroup(t, s, fmt.Sprintf("root-%d", i), nil))
	}
	for i, g := range roots {
		if g.SortOrder != i {
			t.Errorf("root %d sort_order = %d, want %d", i, g.SortOrder, i)
		}
	}
	var kids []db.Group
	for i := range 3 {
		kids = append(kids, createGroup(t, s, fmt.Sprintf("kid-%d", i), &roots[0].ID))
	}
	for i, g := range kids {
		if g.SortOrder != i {
			t.Errorf("child %d sort_order = %d, want %d (siblings count per parent)", i, g.SortOrder, i)
		}
	}
	// A group moved under a parent goes after its new siblings.
	moved, err := s.UpdateGroup(ctx, roots[2].ID, nil, &roots[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if moved.SortOrder != 3 {
		t.Errorf("moved group sort_order = %d, want 3", moved.SortOrder)
	}
	// A new root after a root left keeps increasing from the highest.
	if g := createGroup(t, s, "root-late", nil); g.SortOrder != 2 {
		t.Errorf("new root sort_order = %d, want 2 (max of remaining roots 0,1 plus one)", g.SortOrder)
	}
}

func TestCredentialInUseAndNames(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	c, err := s.CreateCredential(ctx, db.Credential{Name: "Lab", Username: "netops", Password: []byte{1, 2, 3}})
	if err != nil {
		t.Fatalf("CreateCredential: %v", err)
	}
	if _, err := s.CreateCredential(ctx, db.Credential{Name: "LAB", Username: "x"}); !errors.Is(err, db.ErrNameExists) {
		t.Errorf("duplicate credential name in other case: err = %v, want ErrNameExists", err)
	}
	dev := insertDevice(t, s, "r1", nil, &c.ID, nil)
	if err := s.DeleteCredential(ctx, c.ID); !errors.Is(err, db.ErrInUse) {
		t.Fatalf("delete credential in use: err = %v, want ErrInUse", err)
	}
	if _, err := s.GetCredential(ctx, c.ID); err != nil {
		t.Fatalf("refused delete removed the credential: %v", err)
	}
	if _, err := s.Exec(ctx, `DELETE FROM devices WHERE id = ?`, dev); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCredential(ctx, c.ID); err != nil {
		t.Fatalf("delete unused credential: %v", err)
	}
	if err := s.DeleteCredential(ctx, c.ID); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("delete again: err = %v, want ErrNotFound", err)
	}
}

func TestDeleteTemplateClearsDeviceTemplate(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	tpl, err := s.CreateTemplate(ctx, db.Template{Name: "ios", Platform: "cisco_ios", Commands: "show running-config"})
	if err != nil {
		t.Fatalf("CreateTemplate: %v", err)
	}
	keep, err := s.CreateTemplate(ctx, db.Template{Name: "other", Platform: "cisco_ios", Commands: "show version"})
	if err != nil {
		t.Fatal(err)
	}
	d1 := insertDevice(t, s, "sw1", nil, nil, &tpl.ID)
	d2 := insertDevice(t, s, "sw2", nil, nil, &keep.ID)
	if err := s.DeleteTemplate(ctx, tpl.ID); err != nil {
		t.Fatalf("DeleteTemplate: %v", err)
	}
	templateOf := func(id int64) sql.NullInt64 {
		var v sql.NullInt64
		if err := s.Reader().QueryRowContext(ctx, `SELECT template_id FROM devices WHERE id = ?`, id).Scan(&v); err != nil {
			t.Fatalf("read device %d: %v", id, err)
		}
		return v
	}
	if v := templateOf(d1); v.Valid {
		t.Errorf("device of the deleted template still has template_id %d, want NULL", v.Int64)
	}
	if v := templateOf(d2); !v.Valid || v.Int64 != keep.ID {
		t.Errorf("device of another template: template_id %v, want %d", v, keep.ID)
	}
	if err := s.DeleteTemplate(ctx, tpl.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("delete again: err = %v, want ErrNotFound", err)
	}
}

func TestConcurrentWritersDoNotFail(t *testing.T) {
	ctx := context.Background()
	loc := dbtest.Location(t)
	// Two stores on one data directory (or PostgreSQL database) stand for
	// the server and a CLI process writing at the same time.
	var stores []*db.Store
	for range 2 {
		s, err := dbtest.OpenAt(t, loc)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		stores = append(stores, s)
	}
	parent, err := stores[0].CreateGroup(ctx, "parent", nil)
	if err != nil {
		t.Fatal(err)
	}
	const writers, perWriter = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%len(stores)]
			for i := range perWriter {
				if _, err := s.CreateGroup(ctx, fmt.Sprintf("w%d-g%d", w, i), &parent.ID); err != nil {
					errs <- fmt.Errorf("writer %d group %d: %w", w, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all, err := stores[1].AllGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != writers*perWriter+1 {
		t.Fatalf("%d groups, want %d", len(all), writers*perWriter+1)
	}
	// Serialised writers never hand two siblings the same sort_order.
	seen := map[int]int64{}
	for _, g := range all {
		if g.ID == parent.ID {
			continue
		}
		if other, dup := seen[g.SortOrder]; dup {
			t.Errorf("groups %d and %d share sort_order %d", other, g.ID, g.SortOrder)
		}
		seen[g.SortOrder] = g.ID
	}
	checkTree(t, stores[0])
}

func TestConnectionPragmas(t *testing.T) {
	dbtest.SQLiteOnly(t, "the WAL journal, foreign_keys and busy_timeout are SQLite connection settings")
	ctx := context.Background()
	s := openStore(t)
	var mode string
	if err := s.Reader().QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	var fk int
	if err := s.Reader().QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil {
		t.Fatal(err)
	}
	if fk != 1 {
		t.Errorf("reader foreign_keys = %d, want 1", fk)
	}
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		var wfk int
		if err := tx.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&wfk); err != nil {
			return err
		}
		if wfk != 1 {
			t.Errorf("writer foreign_keys = %d, want 1", wfk)
		}
		var wmode string
		if err := tx.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&wmode); err != nil {
			return err
		}
		if wmode != "wal" {
			t.Errorf("writer journal_mode = %q, want wal", wmode)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Foreign keys are enforced on writes: a device in a missing group fails.
	if _, err := s.Exec(ctx,
		`INSERT INTO devices (name, host, port, platform, login_method, group_id, created_at, updated_at)
		 VALUES ('ghost', 'h', 22, 'cisco_ios', 'ssh', 4242, ?, ?)`, db.Now(), db.Now()); err == nil {
		t.Error("inserting a device in a missing group succeeded; foreign keys are not enforced")
	}
	// The read pool never writes.
	if _, err := s.Reader().ExecContext(ctx, `INSERT INTO templates (name, platform, commands, created_at, updated_at) VALUES ('x','y','z','t','t')`); err == nil {
		t.Error("a write through the read-only pool succeeded")
	}
}

func TestInTxRollsBackOnError(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	boom := errors.New("boom")
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO device_groups (name, path, depth, sort_order, created_at) VALUES ('tmp', '/x/', 0, 0, ?)`, db.Now()); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx returned %v, want the function's error", err)
	}
	all, err := s.AllGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 0 {
		t.Fatalf("rolled-back insert is visible: %+v", all)
	}
}

func TestOpenIsIdempotentAndKeepsData(t *testing.T) {
	ctx := context.Background()
	loc := dbtest.Location(t)
	s, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.CreateGroup(ctx, "persisted", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	got, err := s2.GetGroup(ctx, g.ID)
	if err != nil || got.Name != "persisted" {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
}

func TestOpenDataDirWithURISpecialCharacters(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"with space", "hash#1", "percent%41", "query?x=1", "amp&semi;colon:at@"} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, name)
			s, err := db.Open(ctx, dir)
			if err != nil {
				t.Fatalf("db.Open(%q): %v", dir, err)
			}
			if _, err := s.CreateGroup(ctx, "kept", nil); err != nil {
				s.Close()
				t.Fatal(err)
			}
			s.Close()
			if _, err := os.Stat(filepath.Join(dir, db.FileName)); err != nil {
				t.Fatalf("database not inside the data directory: %v", err)
			}
			entries, err := os.ReadDir(parent)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].Name() != name {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Fatalf("files written beside the data directory: %q", names)
			}
			s2, err := db.Open(ctx, dir)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer s2.Close()
			if all, err := s2.AllGroups(ctx); err != nil || len(all) != 1 {
				t.Fatalf("after reopen: %v groups, %v; want the one created", len(all), err)
			}
		})
	}
}

// On PostgreSQL a statement reaches the server as its query site composes
// it, with the ? placeholders numbered and nothing else changed; TestMain
// sees it there (and checks every one the suite sends).
func TestStatementsReachPostgresAsComposed(t *testing.T) {
	s := openStore(t)
	if !s.Postgres() {
		t.Skip("PostgreSQL only")
	}
	ctx := context.Background()
	if _, err := s.JobStates(ctx, []int64{1, 2}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.UserPage(ctx, "Adm", 10, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`SELECT id, state FROM jobs WHERE id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS jsonb)))`,
		`SELECT COUNT(*) FROM users WHERE strpos(lower(username), lower($1)) > 0`,
		`ORDER BY lower(username) COLLATE "C", id LIMIT $2 OFFSET $3`,
	} {
		if !db.SentToPostgres(want) {
			t.Errorf("no statement holding %q reached PostgreSQL", want)
		}
	}
}
