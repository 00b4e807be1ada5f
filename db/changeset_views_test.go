package db_test

import (
	"context"
	"testing"

	"backupd/db"
)

// A change set is in a scope when every one of its devices is: a user
// of one group finds neither a set with a device of another group nor
// one with a device in no group; a set that does not exist is in none.
func TestChangeSetInScope(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	site := createGroup(t, s, "site", nil)
	other := createGroup(t, s, "other", nil)
	child := createGroup(t, s, "rack", &site.ID)
	inSite := insertDevice(t, s, "in-site", &child.ID, nil, nil)
	inOther := insertDevice(t, s, "in-other", &other.ID, nil, nil)
	loose := insertDevice(t, s, "loose", nil, nil, nil)
	siteOnly := newChangeSet(t, s, inSite)
	mixed := newChangeSet(t, s, inSite, inOther)
	withLoose := newChangeSet(t, s, inSite, loose)
	siteScope := db.Scope{GroupIDs: []int64{site.ID}}
	for _, tc := range []struct {
		name  string
		scope db.Scope
		id    int64
		want  bool
	}{
		{"a set of the group's devices", siteScope, siteOnly.ID, true},
		{"a set with another group's device", siteScope, mixed.ID, false},
		{"a set with a device in no group", siteScope, withLoose.ID, false},
		{"both groups", db.Scope{GroupIDs: []int64{site.ID, other.ID}}, mixed.ID, true},
		{"every group", db.Scope{All: true}, withLoose.ID, true},
		{"no group", db.Scope{}, siteOnly.ID, false},
		{"no such set", db.Scope{All: true}, 999999, false},
	} {
		got, err := s.ChangeSetInScope(ctx, tc.scope, tc.id)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
