package ldapdir

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// The steps of a Test report, in order.
const (
	StepConnect     = "connect"
	StepServiceBind = "service bind"
	StepUserSearch  = "user search"
	StepGroups      = "groups"
)

// Step is one step of a Test: what was tried and what came of it, in
// words for the administrator.
type Step struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Report is what the settings page's Test button shows: the steps of a
// sign-in up to the first that failed, and the entry found. It never
// holds a password.
type Report struct {
	Steps []Step `json:"steps"`
	Entry *Entry `json:"entry,omitempty"`
}

// OK reports whether every step succeeded.
func (r Report) OK() bool {
	for _, s := range r.Steps {
		if !s.OK {
			return false
		}
	}
	return len(r.Steps) > 0
}

func (r *Report) add(name string, ok bool, format string, args ...any) {
	r.Steps = append(r.Steps, Step{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
}

// Test walks through a sign-in without a password, step by step:
// connect (and TLS), service bind, the search for username and its
// groups. An empty username stops after the bind.
func (d *Directory) Test(ctx context.Context, username string) Report {
	var r Report
	s, err := d.open(ctx)
	if err != nil {
		r.add(StepConnect, false, "%v", err)
		return r
	}
	defer s.close()
	r.add(StepConnect, true, "%s", s.describe())

	if err := s.serviceBind(); err != nil {
		r.add(StepServiceBind, false, "%v", err)
		return r
	}
	if d.s.BindDN == "" {
		r.add(StepServiceBind, true, "bound anonymously")
	} else {
		r.add(StepServiceBind, true, "bound as %s", d.s.BindDN)
	}
	if username == "" {
		return r
	}

	if err := checkUsername(username); err != nil {
		r.add(StepUserSearch, false, "%v", err)
		return r
	}
	filter := userFilter(d.s.UserFilter, username)
	le, err := s.findUser(username)
	switch {
	case errors.Is(err, ErrNoSuchUser):
		r.add(StepUserSearch, false, "no entry under %s matches %s", d.s.BaseDN, filter)
		return r
	case errors.Is(err, ErrAmbiguous):
		r.add(StepUserSearch, false, "the filter finds more than one entry under %s: %s must match one user only", d.s.BaseDN, filter)
		return r
	case err != nil:
		r.add(StepUserSearch, false, "%v", err)
		return r
	}
	e, err := d.entry(le, username)
	if err != nil {
		r.add(StepUserSearch, false, "%v", err)
		return r
	}
	r.add(StepUserSearch, true, "found %s, username %q", e.DN, e.Username)
	r.Entry = &e

	if e.Groups, err = s.groups(le); err != nil {
		r.add(StepGroups, false, "%v", err)
		return r
	}
	if len(e.Groups) == 0 {
		r.add(StepGroups, true, "in no group (group mode %s)", d.s.GroupMode)
		return r
	}
	names := make([]string, len(e.Groups))
	for i, g := range e.Groups {
		names[i] = g.Name
		if names[i] == "" {
			names[i] = g.DN
		}
	}
	r.add(StepGroups, true, "in %d group(s) (group mode %s): %s", len(names), d.s.GroupMode, strings.Join(names, ", "))
	return r
}
