package restore

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"backupd/app/collect/driver"
)

// iosConfigureReplace restores IOS-XE with Cisco's configuration replace
// and rollback confirmed change: the version is copied to flash over
// SCP, "configure replace FILE force time N" makes the running
// configuration exactly the file (IOS computes the additions and
// deletions itself, in passes) and reverts on its own unless "configure
// confirm" comes within N minutes; once a backup shows the version it is
// confirmed and saved with "write memory". Undo is "configure revert
// now", which puts back the configuration IOS archived before the
// replace; where no revert is pending any more, the configuration before
// is copied and replaced in the same way.
type iosConfigureReplace struct{}

// Questions IOS may ask on the way (force should spare the first).
var iosAnswers = []driver.Answer{
	{Match: regexp.MustCompile(`Enter Y if you are sure you want to proceed\. \? \[no\]:\s*$`), Send: "Y\n"},
	{Match: regexp.MustCompile(`Destination filename \[[^\]]*\]\?\s*$`), Send: "\n"},
}

// iosReplaced is how IOS ends a replace that worked.
var iosReplaced = regexp.MustCompile(`(?m)^\s*Rollback Done\s*$`)

// iosNoPending: no rollback confirmed change waits for a confirm.
var iosNoPending = regexp.MustCompile(`No Rollback Confirmed Change pending`)

func (iosConfigureReplace) Apply(ctx context.Context, s Session, p driver.Platform, running, target string) (Applied, error) {
	if err := iosUpload(ctx, s, p, p.Restore.File, target); err != nil {
		return Applied{}, &UntouchedError{Err: err}
	}
	minutes := max(1, int(p.Restore.Timer.Default.Minutes()))
	cmd := fmt.Sprintf("configure replace %s force time %d", p.Restore.File, minutes)
	out, err := s.Dialog(ctx, cmd, iosAnswers, p.Restore.ApplyError)
	switch {
	case err != nil && isLost(ctx, err):
		return Applied{}, err
	case err != nil && (strings.Contains(out, "archive on") || strings.Contains(out, "not a valid config file")):
		// Refused before any change: no archive (so no timer), or a file
		// IOS would not read.
		return Applied{}, &UntouchedError{Err: refused(cmd, out, p.Restore.ApplyError)}
	case err != nil:
		return Applied{}, refused(cmd, out, p.Restore.ApplyError)
	case !iosReplaced.MatchString(out):
		return Applied{}, &RefusedError{Line: cmd, Answer: "the device did not say Rollback Done: " + lastLine(out)}
	}
	return Applied{Passes: iosPasses(out)}, nil
}

func (iosConfigureReplace) Keep(ctx context.Context, s Session, p driver.Platform) error {
	if out, err := s.Send(ctx, "configure confirm", p.Restore.ApplyError); err != nil {
		return lineErr(ctx, "configure confirm", out, err, p)
	}
	for _, cmd := range p.Restore.Save {
		out, err := s.Dialog(ctx, cmd, iosAnswers, p.Restore.ApplyError)
		if err != nil {
			return lineErr(ctx, cmd, out, err, p)
		}
		if !strings.Contains(out, "[OK]") {
			return fmt.Errorf("saving the configuration (%s): the device did not say [OK]: %s", cmd, lastLine(out))
		}
	}
	return nil
}

func (iosConfigureReplace) Undo(ctx context.Context, s Session, p driver.Platform, current, previous string) (Applied, error) {
	out, err := s.Send(ctx, "configure revert now", nil)
	if err != nil && isLost(ctx, err) {
		return Applied{}, err
	}
	if err == nil && !iosNoPending.MatchString(out) {
		return Applied{Passes: 1}, nil
	}
	// Nothing to revert (the timer ran out, or the replace never took):
	// the configuration before is put back by a replace of its own,
	// without a timer.
	file := strings.TrimSuffix(p.Restore.File, ".cfg") + "-before.cfg"
	if err := iosUpload(ctx, s, p, file, previous); err != nil {
		return Applied{}, err
	}
	cmd := fmt.Sprintf("configure replace %s force", file)
	out, err = s.Dialog(ctx, cmd, iosAnswers, p.Restore.ApplyError)
	if err != nil {
		return Applied{}, lineErr(ctx, cmd, out, err, p)
	}
	return Applied{Passes: iosPasses(out)}, nil
}

func (iosConfigureReplace) Same(p driver.Platform, a, b string) bool { return sameNoise(p, a, b) }

// iosUpload copies a configuration to the device's flash, without the
// lines IOS would refuse.
func iosUpload(ctx context.Context, s Session, p driver.Platform, file, text string) error {
	if err := s.Upload(ctx, file, []byte(dropLines(p, text)), 0o644); err != nil {
		return fmt.Errorf("copying the configuration to %s over SCP (the device needs \"ip scp server enable\"): %w", file, err)
	}
	return nil
}

// dropLines removes the platform's Restore.Drop lines from a stored
// configuration.
func dropLines(p driver.Platform, text string) string {
	var res []*regexp.Regexp
	for _, d := range p.Restore.Drop {
		res = append(res, regexp.MustCompile(d)) // checked at registration
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		line := strings.TrimRight(l, "\n")
		drop := false
		for _, re := range res {
			if re.MatchString(line) {
				drop = true
				break
			}
		}
		if !drop {
			b.WriteString(l)
		}
	}
	return b.String()
}

// iosPasses reads "Total number of passes: N".
func iosPasses(out string) int {
	m := regexp.MustCompile(`Total number of passes: (\d+)`).FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n := 0
	_, _ = fmt.Sscan(m[1], &n)
	return n
}
