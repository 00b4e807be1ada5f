package platforms

import (
	"context"
	"errors"
	"strings"
	"time"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/collect/driver"
	"backupd/app/netguard"
	"backupd/app/secret"
	"backupd/db"
)

// A test runs a definition that is not saved yet against a real device,
// so that whoever writes one sees what the device answers before any
// backup depends on it: a real session (collect.Collect, as a backup
// runs it) with the definition's prompts, commands and cleanup, its
// captured text and a transcript, passwords masked. Nothing is stored
// and the driver registry is left alone.

// Bounds of a test: it must answer while someone waits for it, and each
// test holds a connection and its output.
const (
	TestTimeout   = 90 * time.Second
	TestShown     = 256 << 10 // bytes of captured text returned
	testMaxOutput = 4 << 20
	testLog       = 128 << 10 // bytes of transcript kept
	maxTests      = 2
)

// testSlots bounds the tests running at once in this process.
var testSlots = make(chan struct{}, maxTests)

// testID is the ID a definition runs under when its own is missing or
// wrong: a test needs a valid ID, never a particular one.
const testID = "custom_test"

// TestPlatform is the platform a test of def runs: def's own, or, when
// only the ID is missing or wrong, the same under a placeholder ID, with
// the ID's problem returned in warnings. Any other problem of def is the
// error (Errors): a session cannot run on it.
func TestPlatform(def Definition) (p driver.Platform, warnings Errors, err error) {
	if strings.TrimSpace(def.ID) == "" {
		def.ID = testID
	}
	p, err = def.Platform()
	if err == nil {
		return p, nil, nil
	}
	var errs Errors
	if errors.As(err, &errs) && len(errs) == 1 && errs[0].Field == "id" && errs[0].Problem != TooLarge {
		def.ID = testID
		if p, err = def.Platform(); err == nil {
			return p, errs, nil
		}
	}
	return p, nil, err
}

// TestTarget is where a test logs in: a stored device of Scope, with
// its address, transport and credential, or else a typed address with a
// login that is used once and never stored.
type TestTarget struct {
	DeviceID int64
	Scope    db.Scope

	Host string
	// Port 0 is the method's default; one outside 1 to 65535 is refused
	// (ErrTestPort).
	Port int
	// Method is "ssh" or "telnet"; anything else is ssh.
	Method                             string
	Username, Password, EnablePassword string
}

// TestResult is how a test went. Method and Host are where it went (a
// stored device's own).
type TestResult struct {
	OK bool
	// Error says why the session failed; it never holds a password.
	Error string
	// Text is the captured configuration, cleaned up as a backup would
	// be, passwords masked: at most TestShown bytes (TextCut when more
	// came).
	Text    string
	TextCut bool
	// Segments are the transcript, passwords masked; Truncated when it
	// was longer than kept.
	Segments     []collect.Segment
	Truncated    bool
	Elapsed      time.Duration
	Method, Host string
}

// Refusals of a test, before any session runs.
var (
	ErrTestNoTarget   = errors.New("choose a device or type an address to test against")
	ErrTestNoDevice   = errors.New("no such device in the caller's device groups")
	ErrTestRemoteZone = errors.New("the device is in a collector's zone: only its collector reaches it")
	ErrTestHost       = errors.New("the host is not an address or a host name")
	ErrTestPort       = errors.New("the port must be 1 to 65535")
	ErrTestBusy       = errors.New("as many tests as may run at once are running")
)

// TestLoginError refuses a test against a stored device whose login
// cannot be made (no credential, an address not confirmed, …).
type TestLoginError struct{ Err error }

func (e *TestLoginError) Error() string { return e.Err.Error() }
func (e *TestLoginError) Unwrap() error { return e.Err }

// TestTransportError refuses a test over a transport the platform does
// not offer.
type TestTransportError struct{ Method string }

func (e *TestTransportError) Error() string {
	return "the platform does not offer " + e.Method
}

// RunTest runs platform p (from TestPlatform) against t and says how it
// went. A session that fails is a result, not an error; the error is a
// refusal above, or the store's failure. A stored device is used only
// when it is in t.Scope and served from here (the local zone); a typed
// address is held to the outbound allow list like every connection.
func RunTest(ctx context.Context, store *db.Store, sealer *secret.Sealer, p driver.Platform, t TestTarget) (TestResult, error) {
	if t.Method != "telnet" {
		t.Method = "ssh"
	}
	var target collect.Target
	switch {
	case t.DeviceID > 0:
		d, err := store.GetDevice(ctx, t.DeviceID)
		if errors.Is(err, db.ErrNotFound) {
			return TestResult{}, ErrTestNoDevice
		} else if err != nil {
			return TestResult{}, err
		}
		if ok, err := store.DeviceInScope(ctx, t.Scope, d); err != nil {
			return TestResult{}, err
		} else if !ok {
			return TestResult{}, ErrTestNoDevice
		}
		if d.ZoneID != db.LocalZone {
			return TestResult{}, ErrTestRemoteZone
		}
		if target, err = backup.DeviceTarget(ctx, store, sealer, d.ID); err != nil {
			return TestResult{}, &TestLoginError{err}
		}
		target.Commands = nil // the definition's commands, not the device's template
	case t.Host != "":
		if !driver.ValidHost(t.Host) {
			return TestResult{}, ErrTestHost
		}
		port := driver.LoginMethods[t.Method]
		if t.Port != 0 {
			if t.Port < 0 || t.Port > 65535 {
				return TestResult{}, ErrTestPort
			}
			port = t.Port
		}
		target = collect.Target{Host: t.Host, Port: port, Method: t.Method, Username: t.Username,
			Password: t.Password, EnablePassword: t.EnablePassword}
		outbound, err := netguard.Load(ctx, store)
		if err != nil {
			return TestResult{}, err
		}
		target.Control = outbound.Control
	default:
		return TestResult{}, ErrTestNoTarget
	}
	if !p.OffersTransport(target.Method) {
		return TestResult{}, &TestTransportError{Method: target.Method}
	}
	target.Platform, target.Definition = p.ID, &p
	target.MaxOutput = testMaxOutput
	target.Timeouts = collect.Timeouts{Connect: 10 * time.Second, Login: 30 * time.Second, Command: 60 * time.Second, Job: TestTimeout}
	tr := &collect.Transcript{Max: testLog}
	target.Transcript = tr

	select {
	case testSlots <- struct{}{}:
		defer func() { <-testSlots }()
	default:
		return TestResult{}, ErrTestBusy
	}
	tctx, cancel := context.WithTimeout(ctx, TestTimeout+5*time.Second)
	defer cancel()
	start := time.Now()
	res, cerr := collect.Collect(tctx, target)
	out := TestResult{OK: cerr == nil, Elapsed: time.Since(start), Method: target.Method, Host: target.Host}
	if cerr != nil {
		out.Error = cerr.Error()
	}
	text := tr.MaskSecrets(res.Text)
	if len(text) > TestShown {
		text, out.TextCut = strings.ToValidUTF8(text[:TestShown], ""), true
	}
	out.Text = text
	out.Segments, out.Truncated = tr.Segments()
	return out, nil
}
