package restore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"backupd/app/collect/driver"
)

// eosSession restores Arista EOS with a configuration session, the way
// Arista's manual and NAPALM replace a configuration: "configure session
// NAME" opens a copy of running-config nobody else's change touches,
// "rollback clean-config" empties it (so the version replaces the
// configuration instead of adding to it), the version's lines are typed
// in, and "commit timer hh:mm:ss" makes the version run with the switch's
// own undo: unless "configure session NAME commit" comes in time, EOS
// rolls back. Once a backup shows the version that second
// commit comes, and "write memory" saves it. A line refused before the
// commit ends the session with "abort": nothing changed. "show
// session-config diffs" is not asked for: the restore's preview shows the
// change already, and the diff's "+", "-" and " " in front of every line
// would keep the transcript's masking from recognising the secrets in
// them.
//
// Undo after the commit, in the login that made the session: "configure
// session NAME abort", which EOS answers by putting the configuration
// before the commit back at once. A new login (the first was lost) does
// not know the session's name, which lives only with that login, so it
// leaves the way back to the switch: the commit timer was never
// confirmed, and the new login watches the running configuration until
// it is the one before (at most the timer and a minute). It does not
// commit the old configuration from a second session instead: what EOS
// does with a commit while another session's timer runs is not
// documented, and the timer is the switch's own promise.
type eosSession struct{}

// eosNames are the sessions of restores under way, by the login that
// opened them: Keep and Undo need the name.
var eosNames sync.Map // Session → string

// eosSeq makes session names unique within the process.
var eosSeq atomic.Int64

// eosPoll is how often a login that waits for the commit timer reads
// the running configuration.
const eosPoll = 2 * time.Second

// eosHeredoc are the EOS commands followed by lines of text up to "EOF",
// which a line-by-line session cannot type (NAPALM's list).
var eosHeredoc = []string{"banner login", "banner motd", "comment", "protocol https certificate"}

func (eosSession) Apply(ctx context.Context, s Session, p driver.Platform, running, target string) (Applied, error) {
	lines := eosLines(p, target)
	for _, l := range lines {
		t := strings.TrimSpace(l)
		for _, h := range eosHeredoc {
			if t == h || strings.HasPrefix(t, h+" ") {
				return Applied{}, &UntouchedError{Err: fmt.Errorf("the version has a %q block of text ending in EOF, which this method cannot type yet", h)}
			}
		}
	}
	name := fmt.Sprintf("backupd-%s-%d", strconv.FormatInt(time.Now().UnixNano(), 36), eosSeq.Add(1))
	open := "configure session " + name
	if out, err := s.Send(ctx, open, p.Restore.ApplyError); err != nil {
		return Applied{}, &UntouchedError{Err: lineErr(ctx, open, out, err, p)}
	}
	// Until the commit only the session changed; a lost login leaves it
	// uncommitted (EOS drops it after a day).
	for _, line := range append([]string{"rollback clean-config"}, lines...) {
		if out, err := s.Send(ctx, line, p.Restore.ApplyError); err != nil {
			return Applied{}, eosAbort(ctx, s, name, lineErr(ctx, line, out, err, p))
		}
	}
	commit := "commit timer " + eosTimer(p.Restore.Timer.Default)
	out, err := s.Send(ctx, commit, p.Restore.ApplyError)
	switch {
	case err != nil && isLost(ctx, err):
		// Perhaps committed, perhaps not: Undo, in a new login, waits for
		// the timer.
		return Applied{}, err
	case err != nil:
		return Applied{}, eosAbort(ctx, s, name, refused(commit, out, p.Restore.ApplyError))
	}
	eosNames.Store(s, name)
	return Applied{Passes: 1}, nil
}

func (eosSession) Keep(ctx context.Context, s Session, p driver.Platform) error {
	v, ok := eosNames.LoadAndDelete(s)
	if !ok {
		return errors.New("this login opened no configuration session to confirm")
	}
	confirm := "configure session " + v.(string) + " commit"
	if out, err := s.Send(ctx, confirm, p.Restore.ApplyError); err != nil {
		return lineErr(ctx, confirm, out, err, p)
	}
	for _, cmd := range p.Restore.Save {
		if out, err := s.Send(ctx, cmd, p.Restore.ApplyError); err != nil {
			return lineErr(ctx, cmd, out, err, p)
		}
	}
	return nil
}

func (eosSession) Undo(ctx context.Context, s Session, p driver.Platform, current, previous string) (Applied, error) {
	if v, ok := eosNames.LoadAndDelete(s); ok {
		abort := "configure session " + v.(string) + " abort"
		out, err := s.Send(ctx, abort, p.Restore.ApplyError)
		switch {
		case err == nil:
			return Applied{Passes: 1}, nil
		case isLost(ctx, err):
			return Applied{}, err
		}
		// Refused: the session is gone already (its timer ran out); the
		// running configuration says whether the switch is back.
		_ = out
	}
	return eosAwaitRollback(ctx, s, p, previous)
}

func (eosSession) Same(p driver.Platform, a, b string) bool { return sameNoise(p, a, b) }

// eosLines are the lines of a stored configuration a session takes: the
// platform's Drop lines (the header comments EOS writes about the command
// and the device, the final "end", which would leave the session) and
// blank lines left out, indentation kept.
func eosLines(p driver.Platform, text string) []string {
	var out []string
	for _, l := range strings.Split(dropLines(p, text), "\n") {
		if l = strings.TrimRight(l, " \t\r"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// eosTimer writes a duration as commit timer takes it, hh:mm:ss.
func eosTimer(d time.Duration) string {
	if d < time.Second {
		d = 5 * time.Minute
	}
	s := int(d / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s%3600/60, s%60)
}

// eosAbort throws away a session that was not committed and reports err
// as a failure that changed nothing.
func eosAbort(ctx context.Context, s Session, name string, err error) error {
	if !isLost(ctx, err) {
		cmd := "abort"
		if !strings.Contains(s.Prompt(), "(config") {
			cmd = "configure session " + name + " abort"
		}
		_, _ = s.Send(ctx, cmd, nil)
	}
	return &UntouchedError{Err: err}
}

// eosAwaitRollback waits for EOS's commit timer to put previous back,
// reading the running configuration every eosPoll.
func eosAwaitRollback(ctx context.Context, s Session, p driver.Platform, previous string) (Applied, error) {
	limit := p.Restore.Timer.Default + time.Minute
	deadline := time.Now().Add(limit)
	show := strings.Split(p.DefaultCommands, "\n")[0]
	for range int(limit/eosPoll) + 2 {
		out, err := s.Run(ctx, show)
		if err != nil {
			return Applied{}, fmt.Errorf("reading the running configuration while waiting for the commit timer: %w", err)
		}
		if sameNoise(p, out, previous) {
			return Applied{Passes: 1}, nil
		}
		wait := min(eosPoll, time.Until(deadline))
		if wait <= 0 {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return Applied{}, ctx.Err()
		case <-t.C:
		}
	}
	return Applied{}, fmt.Errorf("the switch did not go back to the configuration before within %s, the commit timer and a minute", limit)
}
