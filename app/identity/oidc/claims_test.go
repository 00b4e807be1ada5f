package oidc

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestGroupsClaimShapes(t *testing.T) {
	many := make([]string, MaxGroups+1)
	for i := range many {
		many[i] = "g"
	}
	manyJSON, _ := json.Marshal(many)
	for _, c := range []struct {
		raw  string
		want []string
		bad  bool
	}{
		{raw: ``, want: nil},
		{raw: `null`, want: nil},
		{raw: `"netops"`, want: []string{"netops"}},
		{raw: `["netops", " auditors ", ""]`, want: []string{"netops", "auditors"}},
		{raw: `[]`, want: []string{}},
		{raw: `[1, 2]`, bad: true},
		{raw: `{"a": 1}`, bad: true},
		{raw: `42`, bad: true},
		{raw: string(manyJSON), bad: true},
		{raw: `["` + strings.Repeat("x", MaxGroupBytes+1) + `"]`, bad: true},
	} {
		claims := map[string]json.RawMessage{}
		if c.raw != "" {
			claims["groups"] = json.RawMessage(c.raw)
		}
		got, err := groupsOf(claims, "groups")
		if c.bad {
			if !errors.Is(err, ErrClaims) {
				t.Errorf("groups %.40s: %v %v, want ErrClaims", c.raw, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("groups %.40s = %q, %v; want %q", c.raw, got, err, c.want)
		}
	}
}

func TestUsernameClaim(t *testing.T) {
	for raw, want := range map[string]string{
		`"alice"`: "alice", `" alice "`: "alice", `"al ice"`: "", `""`: "", `42`: "", `null`: "", `"a\u0007"`: "",
		`"` + strings.Repeat("a", MaxUsernameBytes+1) + `"`: "",
	} {
		got, err := usernameOf(map[string]json.RawMessage{"preferred_username": json.RawMessage(raw)}, "preferred_username")
		if got != want || (want == "") != errors.Is(err, ErrClaims) {
			t.Errorf("username %.40s = %q, %v; want %q", raw, got, err, want)
		}
	}
	if _, err := usernameOf(map[string]json.RawMessage{}, "preferred_username"); !errors.Is(err, ErrClaims) {
		t.Errorf("no username claim: %v, want ErrClaims", err)
	}
}
