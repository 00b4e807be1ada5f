package restore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"backupd/app/collect"
	"backupd/app/collect/driver"
)

// routerosResetImport restores MikroTik RouterOS the one way RouterOS
// offers to replace a whole configuration, and it REBOOTS THE ROUTER.
// RouterOS has no candidate, no replace and no confirm timer: an /import
// of an export onto a configured router adds to what is there and stops
// at the first line that already exists, and safe mode forgets its undo
// after 100 changes. MikroTik's manual says to reset the configuration
// first; "/system reset-configuration no-defaults=yes keep-users=yes
// run-after-reset=FILE" clears the router, reboots it and runs FILE at
// boot, so it comes back running exactly the version.
//
// Because the router comes back with whatever the script set up, and a
// script that fails half way leaves it half configured, perhaps out of
// reach: the version is checked first with "/import … verbose=yes
// dry-run" (RouterOS's syntax check) and nothing is reset when the check
// fails or the router cannot make it; keep-users=yes keeps the accounts
// (an export has none, and without them nobody logs in again);
// skip-backup=yes because the export from before is the way back, not a
// binary backup filling the flash on every restore; the file goes to
// flash/ on routers that keep files there (elsewhere, files outside it
// do not survive the reboot). After the reset the method waits (at most
// routerosBootWait) until it can log in again: the session must be a
// Reconnector, or nothing is reset at all. The restore then verifies
// with a backup; Undo is the same reset with the configuration from
// before, a second reboot. Keep has nothing to do: RouterOS keeps every
// change. Operators should expect the router to be down for its boot
// time, twice when a restore goes back.
type routerosResetImport struct{}

// Reconnector is a Session that can log in to the device again after
// the device closed it: RouterOS reboots to replace its configuration.
type Reconnector interface {
	// Reconnect logs in anew; later calls use the new login.
	Reconnect(ctx context.Context) error
}

// Reconnecting makes a Shell a Reconnector: open logs in again (with the
// target the first login used), and the new login takes the old one's
// place.
func Reconnecting(sh Shell, open func(ctx context.Context) (Shell, error)) Shell {
	return &reconnecting{cur: sh, open: open}
}

type reconnecting struct {
	cur  Shell
	open func(ctx context.Context) (Shell, error)
}

var (
	_ Shell       = (*reconnecting)(nil)
	_ Reconnector = (*reconnecting)(nil)
)

func (r *reconnecting) Reconnect(ctx context.Context) error {
	sh, err := r.open(ctx)
	if err != nil {
		return err
	}
	_ = r.cur.Close()
	r.cur = sh
	return nil
}

func (r *reconnecting) Run(ctx context.Context, cmd string) (string, error) {
	return r.cur.Run(ctx, cmd)
}
func (r *reconnecting) Send(ctx context.Context, line string, errs *regexp.Regexp) (string, error) {
	return r.cur.Send(ctx, line, errs)
}
func (r *reconnecting) Dialog(ctx context.Context, line string, answers []driver.Answer, errs *regexp.Regexp) (string, error) {
	return r.cur.Dialog(ctx, line, answers, errs)
}
func (r *reconnecting) Expect(ctx context.Context, line string, ready, errs *regexp.Regexp) (string, error) {
	return r.cur.Expect(ctx, line, ready, errs)
}
func (r *reconnecting) SendText(ctx context.Context, text string, end []byte, errs *regexp.Regexp) (string, error) {
	return r.cur.SendText(ctx, text, end, errs)
}
func (r *reconnecting) Prompt() string { return r.cur.Prompt() }
func (r *reconnecting) Upload(ctx context.Context, path string, data []byte, mode os.FileMode) error {
	return r.cur.Upload(ctx, path, data, mode)
}
func (r *reconnecting) Close() error { return r.cur.Close() }

// routerosBootWait bounds the wait for a reset router to let backupd log
// in again; routerosFirstTry is the pause before the first attempt, so
// that a login does not reach the router before it went down.
const (
	routerosBootWait = 5 * time.Minute
	routerosFirstTry = time.Second
	routerosMaxDelay = 10 * time.Second
	// routerosMaxRefusals is how many refused logins in a row end the
	// wait.
	routerosMaxRefusals = 3
)

// routerosAnswers: reset-configuration asks before it clears anything.
var routerosAnswers = []driver.Answer{{Match: regexp.MustCompile(`Dangerous! Reset anyway\? \[y/N\]:\s*$`), Send: "y\n"}}

// routerosLoaded is how RouterOS ends a script (or its check) that ran.
const routerosLoaded = "Script file loaded and executed successfully"

// routerosFlashProbe counts the flash/ folder of routers that keep
// their files there.
const routerosFlashProbe = `:put [:len [/file find name="flash"]]`

func (routerosResetImport) Apply(ctx context.Context, s Session, p driver.Platform, running, target string) (Applied, error) {
	return routerosReplace(ctx, s, p, target, true)
}

func (routerosResetImport) Keep(context.Context, Session, driver.Platform) error { return nil }

func (routerosResetImport) Undo(ctx context.Context, s Session, p driver.Platform, current, previous string) (Applied, error) {
	return routerosReplace(ctx, s, p, previous, false)
}

func (routerosResetImport) Same(p driver.Platform, a, b string) bool { return sameNoise(p, a, b) }

// routerosReplace resets the router to run text. Before the reset
// nothing has changed, even when the login was lost on the way (the
// probe, the copy and the dry run change no configuration): for Apply
// such a failure is an UntouchedError, which spares the router a reboot
// back to what it runs.
func routerosReplace(ctx context.Context, s Session, p driver.Platform, text string, apply bool) (Applied, error) {
	untouched := func(err error) error {
		if apply {
			return &UntouchedError{Err: err}
		}
		return err
	}
	rc, ok := s.(Reconnector)
	if !ok {
		return Applied{}, untouched(errors.New("this restore cannot log in again after the reboot a RouterOS restore needs, so the router was not reset"))
	}
	file, err := routerosFile(ctx, s, p)
	if err != nil {
		return Applied{}, untouched(err)
	}
	if err := s.Upload(ctx, file, []byte(text), 0o600); err != nil {
		return Applied{}, untouched(fmt.Errorf("copying the configuration to %s over SCP: %w", file, err))
	}
	// The copy holds the configuration, secrets and all: it does not stay
	// on the router once it ran or will not run. Removing it is best
	// effort; it changes nothing a backup verifies.
	remove := func() { _, _ = s.Send(ctx, "/file remove "+file, nil) }
	check := "/import file-name=" + file + " verbose=yes dry-run"
	out, err := s.Send(ctx, check, p.Restore.ApplyError)
	if err != nil {
		remove()
		return Applied{}, untouched(lineErr(ctx, check, out, err, p))
	}
	if !strings.Contains(out, routerosLoaded) {
		remove()
		return Applied{}, untouched(&RefusedError{Line: check, Answer: "the router did not check the script: " + lastLine(out)})
	}
	reset := "/system reset-configuration no-defaults=yes skip-backup=yes keep-users=yes run-after-reset=" + file
	out, err = s.Dialog(ctx, reset, routerosAnswers, p.Restore.ApplyError)
	switch {
	case err == nil:
		remove()
		return Applied{}, untouched(&RefusedError{Line: reset, Answer: "the router did not restart: " + lastLine(out)})
	case ctx.Err() != nil:
		return Applied{}, err
	case !isLost(ctx, err):
		remove()
		return Applied{}, untouched(lineErr(ctx, reset, out, err, p))
	}
	// The router dropped the login: it is rebooting.
	if err := routerosWaitBack(ctx, rc); err != nil {
		return Applied{}, err
	}
	remove()
	return Applied{Passes: 1}, nil
}

// routerosFile is where the script goes: flash/ on routers with that
// folder, the root elsewhere.
func routerosFile(ctx context.Context, s Session, p driver.Platform) (string, error) {
	out, err := s.Send(ctx, routerosFlashProbe, p.Restore.ApplyError)
	if err != nil {
		return "", lineErr(ctx, routerosFlashProbe, out, err, p)
	}
	for _, l := range strings.Split(out, "\n") {
		if n, err := strconv.Atoi(strings.TrimSpace(l)); err == nil {
			if n > 0 {
				return "flash/" + p.Restore.File, nil
			}
			return p.Restore.File, nil
		}
	}
	return "", &RefusedError{Line: routerosFlashProbe, Answer: "the router did not say whether it keeps files in flash/: " + lastLine(out)}
}

// routerosWaitBack logs in again until the rebooted router answers, at
// most routerosBootWait; the pause between attempts grows. A refusal that
// a reboot does not end stops it early: a changed host key (the operator
// must accept the new one), an address backupd may not reach, or the
// account refused three times in a row (it did not survive the reset).
func routerosWaitBack(ctx context.Context, rc Reconnector) error {
	deadline := time.Now().Add(routerosBootWait)
	delay := routerosFirstTry
	var last error
	refusals := 0
	for range 100 {
		t := time.NewTimer(min(delay, max(time.Until(deadline), 0)))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if last = rc.Reconnect(ctx); last == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ce *collect.Error
		if errors.As(last, &ce) {
			switch ce.Reason {
			case collect.ReasonHostKeyChanged, collect.ReasonRefused:
				refusals = routerosMaxRefusals
			case collect.ReasonAuth:
				refusals++
			default:
				refusals = 0
			}
		}
		if refusals >= routerosMaxRefusals {
			return fmt.Errorf("the router was reset, but logging in again failed: %w", lostErr{last})
		}
		if !time.Now().Before(deadline) {
			break
		}
		delay = min(delay*2, routerosMaxDelay)
	}
	return fmt.Errorf("the router was reset, but backupd could not log in again within %s: %w", routerosBootWait, lostErr{last})
}

// lostErr is a login that failed after the router dropped the session:
// it matches driver.ErrClosed (the session is gone) without saying so in
// its text.
type lostErr struct{ error }

func (e lostErr) Is(target error) bool { return target == driver.ErrClosed }
func (e lostErr) Unwrap() error        { return e.error }
