// Package restore puts a stored configuration back on its device: the
// request, its preview and approval (Service), the leader's loop that
// takes previews, queues approved restores and ends expired ones
// (Dispatcher), and the run itself (Runner), a job of its own kind on the
// device, so that a backup and a restore never touch it at once.
//
// A run backs the device up, checks that it still holds what the preview
// showed, applies the version with the platform's method, backs up again
// and compares: a match is kept (confirmed, saved), anything else is put
// back with the same method and verified. Every step is recorded; a
// process that stops in the middle leaves the restore "interrupted" and
// it never runs again on its own.
package restore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"backupd/app/backup"
	"backupd/app/collect/driver"
)

// Session is the device's command line a method drives: collect.Shell.
type Session interface {
	// Run runs a read command and returns its output.
	Run(ctx context.Context, cmd string) (string, error)
	// Send types one line and waits for the prompt; a line of the
	// answer matching errs is the device refusing it.
	Send(ctx context.Context, line string, errs *regexp.Regexp) (string, error)
	// Dialog is Send for a line the device answers with questions.
	Dialog(ctx context.Context, line string, answers []driver.Answer, errs *regexp.Regexp) (string, error)
	// Expect sends a line and returns once a line of output matches
	// ready (the device waits for a block of text).
	Expect(ctx context.Context, line string, ready, errs *regexp.Regexp) (string, error)
	// SendText types a block of text, then end, up to the prompt.
	SendText(ctx context.Context, text string, end []byte, errs *regexp.Regexp) (string, error)
	// Prompt is the prompt after the last call; the mode shows in it.
	Prompt() string
	// Upload writes a file on the device over SCP.
	Upload(ctx context.Context, path string, data []byte, mode os.FileMode) error
}

// A Method puts a whole configuration on a device of one family and takes
// it back again.
type Method interface {
	// Apply makes the device run target; running is what it runs now.
	// It returns what the operator should know (passes, lines the method
	// leaves alone), never configuration text.
	Apply(ctx context.Context, s Session, p driver.Platform, running, target string) (Applied, error)
	// Keep makes an applied and verified change stay: confirms it where
	// the device would undo it, saves it.
	Keep(ctx context.Context, s Session, p driver.Platform) error
	// Undo puts previous back after Apply, whether Apply ended or not.
	Undo(ctx context.Context, s Session, p driver.Platform, current, previous string) (Applied, error)
	// Same reports whether the device's configuration a matches b for
	// this method: what it cannot or need not change is left out.
	Same(p driver.Platform, a, b string) bool
}

// Applied is what a method did, for the restore's outcome.
type Applied struct {
	// Passes is how many rounds of changes it took.
	Passes int `json:"passes,omitempty"`
	// Skipped counts the lines the method leaves as they are (FRR's
	// hostname, which vtysh cannot change for good).
	Skipped int `json:"skipped,omitempty"`
	// Sent counts the lines a merge typed that the device took.
	Sent int `json:"sent,omitempty"`
}

// methods are the implemented methods by driver.RestoreMethod ID.
var methods = map[string]Method{
	"frr_vtysh":              frrVtysh{},
	"junos_commit_confirmed": junosCommitConfirmed{},
	"ios_configure_replace":  iosConfigureReplace{},
	"vyos_commit_confirm":    vyosCommitConfirm{},
	"eos_session":            eosSession{},
	"routeros_reset_import":  routerosResetImport{},
	"merge_lines":            mergeLines{},
}

// MethodOf returns the method a platform restores with.
func MethodOf(p driver.Platform) (Method, bool) {
	if !p.CanRestore() {
		return nil, false
	}
	m, ok := methods[p.Restore.Method]
	return m, ok
}

// RefusedError is a line the device refused while a method applied it:
// Answer is the first line of the device's answer (its error, never
// configuration text) and Line the refused line, secrets masked by the
// caller before it is shown.
type RefusedError struct {
	Line, Answer string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the device refused a line: %s", e.Answer)
}

// refused turns a device's answer to line into a RefusedError.
func refused(line, answer string, errs *regexp.Regexp) error {
	first := ""
	for _, l := range strings.Split(answer, "\n") {
		if l = strings.TrimSpace(l); l != "" && (errs == nil || errs.MatchString(l)) {
			first = l
			break
		}
	}
	if len(first) > 200 {
		first = first[:200] + "…"
	}
	return &RefusedError{Line: line, Answer: first}
}

// UntouchedError is a failure after which the device runs what it ran
// before: nothing was committed or applied (a Junos load or commit check
// refused). The restore fails without a rollback.
type UntouchedError struct{ Err error }

func (e *UntouchedError) Error() string { return e.Err.Error() }
func (e *UntouchedError) Unwrap() error { return e.Err }

// asRefused reports whether err is a device's refusal of a line.
func asRefused(err error) (*RefusedError, bool) {
	var r *RefusedError
	ok := errors.As(err, &r)
	return r, ok
}

// sameNoise compares two backups of a device of platform p, noise
// ignored (the platform's own rules: a Junos "## Last commit" stamp).
func sameNoise(p driver.Platform, a, b string) bool {
	f, err := backup.NewNoiseFilter(p.ID, nil)
	if err != nil {
		return a == b
	}
	return !backup.Changed(a, b, f)
}
