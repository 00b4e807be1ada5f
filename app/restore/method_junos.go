package restore

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"backupd/app/collect/driver"
)

// junosCommitConfirmed restores Junos the way Juniper's guides put a
// whole configuration back: in "configure exclusive" (nobody else's
// candidate is committed with ours, and "commit confirmed" is refused in
// private mode), "load override terminal" replaces the candidate with the
// version, "commit check" validates it, and "commit confirmed N" makes it
// active with the device's own undo timer: unless confirmed within N
// minutes, Junos rolls back on its own. Once a backup shows the version,
// "commit" confirms it (Junos saves every commit). Undo loads the
// configuration before the same way and commits it, which also ends a
// pending confirm.
type junosCommitConfirmed struct{}

// junosReady is Junos's invitation to type the configuration.
var junosReady = regexp.MustCompile(`\[Type \^D at a new line to end input\]`)

// junosCommitted is how Junos ends a commit that worked.
var junosCommitted = regexp.MustCompile(`(?m)^\s*commit complete\s*$`)

func (junosCommitConfirmed) Apply(ctx context.Context, s Session, p driver.Platform, running, target string) (Applied, error) {
	// Until "commit confirmed", only the candidate changed: a failure
	// leaves the device as it was (the candidate is thrown away on exit).
	if err := junosLoad(ctx, s, p, target); err != nil {
		return Applied{}, untouched(ctx, s, p, err)
	}
	if err := junosSend(ctx, s, p, "commit check", regexp.MustCompile(`configuration check succeeds`)); err != nil {
		return Applied{}, untouched(ctx, s, p, err)
	}
	minutes := max(1, int(p.Restore.Timer.Default.Minutes()))
	if err := junosSend(ctx, s, p, fmt.Sprintf("commit confirmed %d", minutes), junosCommitted); err != nil {
		return Applied{}, err
	}
	return Applied{Passes: 1}, nil
}

func (junosCommitConfirmed) Keep(ctx context.Context, s Session, p driver.Platform) error {
	if err := junosSend(ctx, s, p, "commit", junosCommitted); err != nil {
		return err
	}
	return junosLeave(ctx, s, p)
}

func (junosCommitConfirmed) Undo(ctx context.Context, s Session, p driver.Platform, current, previous string) (Applied, error) {
	if err := junosLoad(ctx, s, p, previous); err != nil {
		return Applied{}, err
	}
	if err := junosSend(ctx, s, p, "commit", junosCommitted); err != nil {
		return Applied{}, err
	}
	return Applied{Passes: 1}, junosLeave(ctx, s, p)
}

func (junosCommitConfirmed) Same(p driver.Platform, a, b string) bool { return sameNoise(p, a, b) }

// junosLoad enters configure exclusive (unless in configuration mode
// already) and replaces the candidate with text.
func junosLoad(ctx context.Context, s Session, p driver.Platform, text string) error {
	if !strings.HasSuffix(strings.TrimSpace(s.Prompt()), "#") {
		for _, cmd := range p.Restore.ConfigEnter {
			if _, err := s.Send(ctx, cmd, p.Restore.ApplyError); err != nil {
				return lineErr(ctx, cmd, "", err, p)
			}
		}
	}
	const load = "load override terminal"
	if _, err := s.Expect(ctx, load, junosReady, p.Restore.ApplyError); err != nil {
		return lineErr(ctx, load, "", err, p)
	}
	out, err := s.SendText(ctx, junosText(text), []byte{0x04}, p.Restore.ApplyError)
	if err != nil {
		if isLost(ctx, err) {
			return err
		}
		return refused("the configuration (load override)", out, p.Restore.ApplyError)
	}
	return nil
}

// junosText is a stored configuration as load takes it: the lines of
// "show configuration" (its "## Last commit" comments are comments to
// Junos too), ending in a newline so that ^D comes on a line of its own.
func junosText(text string) string {
	return strings.TrimRight(text, "\n") + "\n"
}

// junosSend sends cmd and wants its answer to hold ok.
func junosSend(ctx context.Context, s Session, p driver.Platform, cmd string, ok *regexp.Regexp) error {
	out, err := s.Send(ctx, cmd, p.Restore.ApplyError)
	if err != nil {
		return lineErr(ctx, cmd, out, err, p)
	}
	if !ok.MatchString(out) {
		return &RefusedError{Line: cmd, Answer: "the device did not answer " + strings.Trim(ok.String(), "(?m)^\\s*$") + ": " + lastLine(out)}
	}
	return nil
}

// junosLeave leaves configuration mode; nothing is left uncommitted.
func junosLeave(ctx context.Context, s Session, p driver.Platform) error {
	for _, cmd := range p.Restore.ConfigExit {
		if _, err := s.Dialog(ctx, cmd, []driver.Answer{{Match: regexp.MustCompile(`\[yes,no\]`), Send: "yes\n"}}, nil); err != nil && isLost(ctx, err) {
			return err
		}
	}
	return nil
}

// untouched ends an apply that failed before anything was committed:
// the candidate is thrown away and configuration mode left.
func untouched(ctx context.Context, s Session, p driver.Platform, err error) error {
	if isLost(ctx, err) {
		return &UntouchedError{Err: err}
	}
	_, _ = s.Send(ctx, "rollback 0", nil)
	_ = junosLeave(ctx, s, p)
	return &UntouchedError{Err: err}
}

// lineErr is a failed line: the session lost, or the device's refusal.
func lineErr(ctx context.Context, line, out string, err error, p driver.Platform) error {
	if isLost(ctx, err) {
		return err
	}
	if out == "" {
		out = err.Error()
	}
	return refused(line, out, p.Restore.ApplyError)
}
