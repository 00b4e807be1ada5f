package restore

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"backupd/app/collect/driver"
)

// vyosCommitConfirm restores VyOS from the set commands its backups hold
// ("show configuration commands"): in configuration mode every top-level
// node the device or the version has is deleted and every command of the
// version set again, so the working configuration is exactly the
// version; "commit-confirm N" makes it active with VyOS's own undo (a
// reboot into the saved configuration unless confirmed in N minutes), and
// "confirm" and "save" keep it once a backup shows it. The running
// configuration is saved first, so that the reboot, should the confirm
// never come, brings back what ran before the restore and not an older
// saved one. A refused command before the commit leaves the device
// untouched ("exit discard"); after it, Undo sets the configuration
// before the same way and commits and confirms it.
type vyosCommitConfirm struct{}

// vyosAnswers: commit-confirm asks before it arms the reboot (1.4
// "Proceed ? [Y/n]", 1.3 "Proceed? [confirm]").
var vyosAnswers = []driver.Answer{{Match: regexp.MustCompile(`Proceed ?\? \[(Y/n|confirm)\]\s*$`), Send: "y\n"}}

func (vyosCommitConfirm) Apply(ctx context.Context, s Session, p driver.Platform, running, target string) (Applied, error) {
	if err := vyosSave(ctx, s, p); err != nil {
		return Applied{}, &UntouchedError{Err: err}
	}
	if err := vyosWork(ctx, s, p, running, target); err != nil {
		if isLost(ctx, err) {
			return Applied{}, &UntouchedError{Err: err} // uncommitted: dropped with the session
		}
		_, _ = s.Send(ctx, "exit discard", nil)
		return Applied{}, &UntouchedError{Err: err}
	}
	minutes := max(1, int(p.Restore.Timer.Default.Minutes()))
	cmd := fmt.Sprintf("commit-confirm %d", minutes)
	out, err := s.Dialog(ctx, cmd, vyosAnswers, p.Restore.ApplyError)
	if err != nil {
		return Applied{}, lineErr(ctx, cmd, out, err, p)
	}
	if !strings.Contains(out, "Initialized commit-confirm") {
		return Applied{}, &RefusedError{Line: cmd, Answer: "the device did not arm commit-confirm: " + lastLine(out)}
	}
	return Applied{Passes: 1}, nil
}

func (vyosCommitConfirm) Keep(ctx context.Context, s Session, p driver.Platform) error {
	if out, err := s.Send(ctx, "confirm", p.Restore.ApplyError); err != nil {
		return lineErr(ctx, "confirm", out, err, p)
	}
	return vyosSave(ctx, s, p)
}

func (vyosCommitConfirm) Undo(ctx context.Context, s Session, p driver.Platform, current, previous string) (Applied, error) {
	if err := vyosWork(ctx, s, p, current, previous); err != nil {
		return Applied{}, err
	}
	if out, err := s.Send(ctx, "commit", p.Restore.ApplyError); err != nil {
		return Applied{}, lineErr(ctx, "commit", out, err, p)
	}
	// Stops a reboot armed by the restore; "No confirm pending" when it
	// had none.
	if _, err := s.Send(ctx, "confirm", nil); err != nil && isLost(ctx, err) {
		return Applied{}, err
	}
	return Applied{Passes: 1}, nil
}

func (vyosCommitConfirm) Same(p driver.Platform, a, b string) bool { return sameNoise(p, a, b) }

// vyosSave saves the running configuration, from configuration mode.
func vyosSave(ctx context.Context, s Session, p driver.Platform) error {
	if err := vyosConfigure(ctx, s, p); err != nil {
		return err
	}
	for _, cmd := range p.Restore.Save {
		if out, err := s.Send(ctx, cmd, p.Restore.ApplyError); err != nil {
			return lineErr(ctx, cmd, out, err, p)
		}
	}
	return nil
}

// vyosConfigure enters configuration mode unless the prompt ends in '#'
// already (operational mode is '$').
func vyosConfigure(ctx context.Context, s Session, p driver.Platform) error {
	if strings.HasSuffix(strings.TrimSpace(s.Prompt()), "#") {
		return nil
	}
	for _, cmd := range p.Restore.ConfigEnter {
		if out, err := s.Send(ctx, cmd, p.Restore.ApplyError); err != nil {
			return lineErr(ctx, cmd, out, err, p)
		}
	}
	return nil
}

// vyosWork makes the working configuration target: every top-level node
// of the running one is deleted, every set command of target typed.
func vyosWork(ctx context.Context, s Session, p driver.Platform, running, target string) error {
	if err := vyosConfigure(ctx, s, p); err != nil {
		return err
	}
	for _, node := range vyosTops(running) {
		cmd := "delete " + node
		if out, err := s.Send(ctx, cmd, p.Restore.ApplyError); err != nil {
			return lineErr(ctx, cmd, out, err, p)
		}
	}
	for _, line := range vyosSets(target) {
		if out, err := s.Send(ctx, line, p.Restore.ApplyError); err != nil {
			return lineErr(ctx, line, out, err, p)
		}
	}
	return nil
}

// vyosSets are the set commands of a stored configuration.
func vyosSets(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "set ") {
			out = append(out, l)
		}
	}
	return out
}

// vyosTops are the top-level nodes of a stored configuration, in order.
func vyosTops(text string) []string {
	var out []string
	for _, l := range vyosSets(text) {
		if f := strings.Fields(l); len(f) > 1 && !slices.Contains(out, f[1]) {
			out = append(out, f[1])
		}
	}
	return out
}
