package frrplan

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// script is a device that answers reads from a list and records what
// is applied, for Converge's own rules; the real FRR tests show it
// against FRR.
type script struct {
	reads             []string
	applied           []Commands
	applyErr, readErr error
}

func (s *script) apply(_ context.Context, cmds Commands) error {
	s.applied = append(s.applied, cmds)
	return s.applyErr
}

func (s *script) read(context.Context) (string, error) {
	if s.readErr != nil {
		return "", s.readErr
	}
	if len(s.reads) == 0 {
		return "", errors.New("read past the script")
	}
	r := s.reads[0]
	s.reads = s.reads[1:]
	return r, nil
}

func TestConverge(t *testing.T) {
	changed := strings.Replace(base, "customer-a", "customer-b", 1)
	other := strings.Replace(base, "set local-preference 200", "set local-preference 300", 1)
	boom := errors.New("boom")
	cases := []struct {
		name        string
		s           script
		max         int
		wantPasses  int
		wantApplied int
		check       func(t *testing.T, err error)
	}{
		{"already there: no pass", script{reads: []string{base}}, 3, 0, 0, nil},
		{"one pass", script{reads: []string{changed, base}}, 3, 1, 1, nil},
		{"two passes, the second plan another", script{reads: []string{changed, other, base}}, 3, 2, 2, nil},
		{"passes spent", script{reads: []string{changed, other, changed, other}}, 3, 3, 3, func(t *testing.T, err error) {
			var nc *NotConvergedError
			if !errors.As(err, &nc) || nc.Stuck || nc.Passes != 3 || len(nc.Remaining) == 0 {
				t.Errorf("err = %#v", err)
			}
			if strings.Contains(err.Error(), "customer") || strings.Contains(err.Error(), "local-preference") {
				t.Errorf("the error shows the configuration: %v", err)
			}
		}},
		{"the same plan twice: stuck", script{reads: []string{changed, changed}}, 3, 1, 1, func(t *testing.T, err error) {
			var nc *NotConvergedError
			if !errors.As(err, &nc) || !nc.Stuck || nc.Passes != 1 {
				t.Errorf("err = %#v", err)
			}
		}},
		{"nothing to type yet not equal: stuck",
			script{reads: []string{base + "interface eth0\nexit\n"}}, 3, 0, 0, func(t *testing.T, err error) {
				var nc *NotConvergedError
				if !errors.As(err, &nc) || !nc.Stuck || len(nc.Remaining) != 1 {
					t.Errorf("err = %#v", err)
				}
			}},
		{"apply fails", script{reads: []string{changed}, applyErr: boom}, 3, 1, 1, func(t *testing.T, err error) {
			if !errors.Is(err, boom) {
				t.Errorf("err = %v", err)
			}
		}},
		{"read fails", script{readErr: boom}, 3, 0, 0, func(t *testing.T, err error) {
			if !errors.Is(err, boom) {
				t.Errorf("err = %v", err)
			}
		}},
		{"the device's defaults differ", script{reads: []string{strings.Replace(base, "traditional", "datacenter", 1)}}, 3, 0, 0,
			func(t *testing.T, err error) {
				if !errors.Is(err, ErrUnsupported) {
					t.Errorf("err = %v", err)
				}
			}},
		{"no passes allowed", script{}, 0, 0, 0, func(t *testing.T, err error) {
			if err == nil {
				t.Error("no error")
			}
		}},
		{"too many passes asked", script{}, 11, 0, 0, func(t *testing.T, err error) {
			if err == nil {
				t.Error("no error")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			passes, err := Converge(context.Background(), c.s.apply, c.s.read, base, c.max)
			if passes != c.wantPasses || len(c.s.applied) != c.wantApplied {
				t.Errorf("passes = %d with %d applied, want %d and %d", passes, len(c.s.applied), c.wantPasses, c.wantApplied)
			}
			if c.check == nil {
				if err != nil {
					t.Errorf("err = %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			c.check(t, err)
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &script{reads: []string{changed}}
	if _, err := Converge(ctx, s.apply, s.read, base, 3); !errors.Is(err, context.Canceled) || len(s.applied) != 0 {
		t.Errorf("cancelled: err = %v, %d applied", err, len(s.applied))
	}
	if _, err := Converge(context.Background(), nil, s.read, base, 3); err == nil {
		t.Error("no apply: no error")
	}
}
