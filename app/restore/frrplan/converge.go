package frrplan

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// MaxPasses is the usual bound for Converge. frr-reload.py makes two
// passes: the second puts back what the first one's deletions took
// along (a neighbour unbound from its peer-group loses its settings)
// and the lines FRR shows differently once a default changed. A third
// leaves room for a change that does both.
const MaxPasses = 3

// NotConvergedError is Converge's answer when the device still differs
// from the target after its passes, or when a pass would only repeat
// the one before. Remaining is Diff(running, target) at the end: the
// configuration's own lines, for a report that masks them; Error names
// only counts.
type NotConvergedError struct {
	Passes    int
	Stuck     bool // the last plan was the same as the one applied before it
	Remaining []string
}

func (e *NotConvergedError) Error() string {
	if e.Stuck {
		return fmt.Sprintf("frrplan: %d line(s) still differ after %d pass(es); another pass would send the same commands", len(e.Remaining), e.Passes)
	}
	return fmt.Sprintf("frrplan: %d line(s) still differ after %d pass(es)", len(e.Remaining), e.Passes)
}

// Converge brings a device to target: it reads the running
// configuration, stops if it is Equal to target, else applies Plan's
// commands and reads again, at most maxPasses times (1 to 10;
// MaxPasses is the usual). passes is how many plans it applied: 0 when
// the device already had the target. A line deleted with its
// neighbour, or a setting FRR shows differently once another changed,
// needs the second pass.
//
// apply sends the commands (Commands.Lines) and returns an error if
// the device refused one; read returns show running-config. Their
// errors end Converge, wrapped. It ends with a *NotConvergedError when
// the passes are spent, or when the next pass would send exactly what
// the last one did (nothing changed that the plan can see).
func Converge(ctx context.Context, apply func(ctx context.Context, cmds Commands) error,
	read func(ctx context.Context) (string, error), target string, maxPasses int) (passes int, err error) {
	if maxPasses < 1 || maxPasses > 10 {
		return 0, fmt.Errorf("frrplan: converge in 1 to 10 passes, not %d", maxPasses)
	}
	if apply == nil || read == nil {
		return 0, errors.New("frrplan: converge needs an apply and a read function")
	}
	var last Commands
	for {
		if err := ctx.Err(); err != nil {
			return passes, err
		}
		running, err := read(ctx)
		if err != nil {
			return passes, fmt.Errorf("frrplan: read the running configuration after %d pass(es): %w", passes, err)
		}
		if Equal(running, target) {
			return passes, nil
		}
		cmds, err := Plan(running, target)
		if err != nil {
			return passes, err
		}
		stuck := len(cmds) == 0 || (last != nil && sameCommands(cmds, last))
		if stuck || passes == maxPasses {
			return passes, &NotConvergedError{Passes: passes, Stuck: stuck, Remaining: Diff(running, target)}
		}
		if err := ctx.Err(); err != nil {
			return passes, err
		}
		passes++
		if err := apply(ctx, cmds); err != nil {
			return passes, fmt.Errorf("frrplan: apply pass %d: %w", passes, err)
		}
		last = cmds
	}
}

func sameCommands(a, b Commands) bool {
	return slices.EqualFunc(a, b, func(x, y Command) bool {
		return x.Text == y.Text && x.Delete == y.Delete && x.Enters == y.Enters && slices.Equal(x.Context, y.Context)
	})
}
