package restore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"backupd/app/collect/driver"
	"backupd/app/restore/frrplan"
)

// frrVtysh restores an FRR router through vtysh: the lines that differ
// are removed and added in configuration mode, again until the running
// configuration equals the version (frrplan.Converge, at most
// frrplan.MaxPasses rounds), and "write memory" saves it once verified.
// FRR has no undo timer: Undo is the same walk back to the configuration
// the router ran before.
type frrVtysh struct{}

func (frrVtysh) Apply(ctx context.Context, s Session, p driver.Platform, running, target string) (Applied, error) {
	return frrConverge(ctx, s, p, running, target)
}

func (frrVtysh) Undo(ctx context.Context, s Session, p driver.Platform, current, previous string) (Applied, error) {
	// A session left in a configuration mode by a refused line goes back
	// to the top first.
	if _, err := s.Send(ctx, "end", nil); err != nil && isLost(ctx, err) {
		return Applied{}, err
	}
	return frrConverge(ctx, s, p, current, previous)
}

func (frrVtysh) Keep(ctx context.Context, s Session, p driver.Platform) error {
	for _, cmd := range p.Restore.Save {
		out, err := s.Send(ctx, cmd, nil)
		if err != nil {
			return fmt.Errorf("saving the configuration (%s): %w", cmd, err)
		}
		// vtysh ends a save that worked with "[OK]"; without it the
		// running configuration is right but a restart would lose it.
		if !strings.Contains(out, "[OK]") {
			return fmt.Errorf("saving the configuration (%s): the router did not say [OK]: %s", cmd, lastLine(out))
		}
	}
	return nil
}

func (frrVtysh) Same(p driver.Platform, a, b string) bool { return frrplan.Equal(a, b) }

// frrConverge applies plans towards target until the router runs it.
func frrConverge(ctx context.Context, s Session, p driver.Platform, running, target string) (Applied, error) {
	apply := func(ctx context.Context, cmds frrplan.Commands) error {
		for _, line := range cmds.Lines() {
			out, err := s.Send(ctx, frrplan.Keystrokes(line), p.Restore.ApplyError)
			if err == nil {
				continue
			}
			if isLost(ctx, err) {
				return err
			}
			return refused(line, out, p.Restore.ApplyError)
		}
		return nil
	}
	read := func(ctx context.Context) (string, error) {
		out, err := s.Run(ctx, strings.Split(p.DefaultCommands, "\n")[0])
		if err != nil {
			return "", fmt.Errorf("reading the running configuration back: %w", err)
		}
		return p.StripOutput(out), nil
	}
	a := Applied{Skipped: len(frrplan.Skipped(running, target))}
	passes, err := frrplan.Converge(ctx, apply, read, target, frrplan.MaxPasses)
	a.Passes = passes
	return a, err
}

// isLost reports whether err means the session is gone (or the run was
// stopped), rather than the device refusing a line.
func isLost(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, driver.ErrClosed) || errors.Is(err, context.DeadlineExceeded)
}

func lastLine(out string) string {
	out = strings.TrimSpace(out)
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	if len(out) > 200 {
		out = out[:200] + "…"
	}
	return out
}
