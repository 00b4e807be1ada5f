package backup

import (
	"context"
	"errors"
	"strings"
	"time"

	"backupd/app/collect"
	"backupd/app/collect/driver"
	"backupd/app/netguard"
	"backupd/app/secret"
	"backupd/db"
)

// A platform test runs a definition that is not saved yet
// (platforms.TestPlatform) against a real device, so that whoever writes
// one sees what the device answers before any backup depends on it: a
// real session (collect.Collect, as a backup runs it) with the
// definition's prompts, commands and cleanup, its captured text and a
// transcript, passwords masked. Nothing is stored and the driver registry
// is left alone.

// Bounds of a test: it must answer while someone waits for it, and each
// test holds a connection and its output.
const (
	PlatformTestTimeout   = 90 * time.Second
	PlatformTestShown     = 256 << 10 // bytes of captured text returned
	platformTestMaxOutput = 4 << 20
	platformTestLog       = 128 << 10 // bytes of transcript kept
	maxPlatformTests      = 2
)

// platformTestSlots bounds the tests running at once in this process.
var platformTestSlots = make(chan struct{}, maxPlatformTests)

// PlatformTestTarget is where a test logs in: a stored device of Scope, with
// its address, transport and credential, or else a typed address with a
// login that is used once and never stored.
type PlatformTestTarget struct {
	DeviceID int64
	Scope    db.Scope

	Host string
	// Port 0 is the method's default; one outside 1 to 65535 is refused
	// (ErrPlatformTestPort).
	Port int
	// Method is "ssh" or "telnet"; anything else is ssh.
	Method                             string
	Username, Password, EnablePassword string
}

// PlatformTestResult is how a test went. Method and Host are where it went (a
// stored device's own).
type PlatformTestResult struct {
	OK bool
	// Error says why the session failed; it never holds a password.
	Error string
	// Text is the captured configuration, cleaned up as a backup would
	// be, passwords masked: at most PlatformTestShown bytes (TextCut when more
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
	ErrPlatformTestNoTarget   = errors.New("choose a device or type an address to test against")
	ErrPlatformTestNoDevice   = errors.New("no such device in the caller's device groups")
	ErrPlatformTestRemoteZone = errors.New("the device is in a collector's zone: only its collector reaches it")
	ErrPlatformTestHost       = errors.New("the host is not an address or a host name")
	ErrPlatformTestPort       = errors.New("the port must be 1 to 65535")
	ErrPlatformTestBusy       = errors.New("as many tests as may run at once are running")
)

// PlatformTestLoginError refuses a test against a stored device whose login
// cannot be made (no credential, an address not confirmed, …).
type PlatformTestLoginError struct{ Err error }

func (e *PlatformTestLoginError) Error() string { return e.Err.Error() }
func (e *PlatformTestLoginError) Unwrap() error { return e.Err }

// PlatformTestTransportError refuses a test over a transport the platform does
// not offer.
type PlatformTestTransportError struct{ Method string }

func (e *PlatformTestTransportError) Error() string {
	return "the platform does not offer " + e.Method
}

// RunPlatformTest runs platform p (from platforms.TestPlatform) against t and says how it
// went. A session that fails is a result, not an error; the error is a
// refusal above, or the store's failure. A stored device is used only
// when it is in t.Scope and served from here (the local zone); a typed
// address is held to the outbound allow list like every connection.
func RunPlatformTest(ctx context.Context, store *db.Store, sealer *secret.Sealer, p driver.Platform, t PlatformTestTarget) (PlatformTestResult, error) {
	if t.Method != "telnet" {
		t.Method = "ssh"
	}
	var target collect.Target
	switch {
	case t.DeviceID > 0:
		d, err := store.GetDevice(ctx, t.DeviceID)
		if errors.Is(err, db.ErrNotFound) {
			return PlatformTestResult{}, ErrPlatformTestNoDevice
		} else if err != nil {
			return PlatformTestResult{}, err
		}
		if ok, err := store.DeviceInScope(ctx, t.Scope, d); err != nil {
			return PlatformTestResult{}, err
		} else if !ok {
			return PlatformTestResult{}, ErrPlatformTestNoDevice
		}
		if d.ZoneID != db.LocalZone {
			return PlatformTestResult{}, ErrPlatformTestRemoteZone
		}
		if target, err = DeviceTarget(ctx, store, sealer, d.ID); err != nil {
			return PlatformTestResult{}, &PlatformTestLoginError{err}
		}
		target.Commands = nil // the definition's commands, not the device's template
	case t.Host != "":
		if !driver.ValidHost(t.Host) {
			return PlatformTestResult{}, ErrPlatformTestHost
		}
		port := driver.LoginMethods[t.Method]
		if t.Port != 0 {
			if t.Port < 0 || t.Port > 65535 {
				return PlatformTestResult{}, ErrPlatformTestPort
			}
			port = t.Port
		}
		target = collect.Target{Host: t.Host, Port: port, Method: t.Method, Username: t.Username,
			Password: t.Password, EnablePassword: t.EnablePassword}
		outbound, err := netguard.Load(ctx, store)
		if err != nil {
			return PlatformTestResult{}, err
		}
		target.Control = outbound.Control
	default:
		return PlatformTestResult{}, ErrPlatformTestNoTarget
	}
	return runTest(ctx, p, target)
}

// CheckConnection logs in to device d, unsaved (a device form's values),
// with its credential, as a backup would, and runs its template's or its
// platform's commands: the device form's "Test connection". Nothing is
// stored and no host key pinned; pinned, when set, is the key the device
// must present (an edited device whose address did not change). The
// caller checks that its user may send the credential to d's address.
// Errors as RunPlatformTest's.
func CheckConnection(ctx context.Context, store *db.Store, sealer *secret.Sealer, d db.Device, pinned []byte) (PlatformTestResult, error) {
	p, ok := driver.Lookup(d.Platform)
	if !ok {
		return PlatformTestResult{}, ErrPlatformTestNoDevice
	}
	if !driver.ValidHost(d.Host) {
		return PlatformTestResult{}, ErrPlatformTestHost
	}
	if d.Port < 1 || d.Port > 65535 {
		return PlatformTestResult{}, ErrPlatformTestPort
	}
	if d.CredentialID == nil {
		return PlatformTestResult{}, &PlatformTestLoginError{errors.New("the device has no credential; choose one to log in with")}
	}
	target := collect.Target{Host: d.Host, Port: d.Port, Method: d.LoginMethod, Encoding: d.Encoding, PinnedHostKey: pinned}
	outbound, err := netguard.Load(ctx, store)
	if err != nil {
		return PlatformTestResult{}, err
	}
	target.Control = outbound.Control
	if err := openCredential(ctx, store, sealer, *d.CredentialID, &target); err != nil {
		return PlatformTestResult{}, &PlatformTestLoginError{err}
	}
	if d.TemplateID != nil {
		if target.Commands, err = templateCommands(ctx, store, *d.TemplateID); err != nil {
			return PlatformTestResult{}, err
		}
	}
	return runTest(ctx, p, target)
}

// runTest collects from target with platform p, bounded in time, output
// and transcript, one of platformTestSlots at a time.
func runTest(ctx context.Context, p driver.Platform, target collect.Target) (PlatformTestResult, error) {
	if !p.OffersTransport(target.Method) {
		return PlatformTestResult{}, &PlatformTestTransportError{Method: target.Method}
	}
	target.Platform, target.Definition = p.ID, &p
	target.MaxOutput = platformTestMaxOutput
	target.Timeouts = collect.Timeouts{Connect: 10 * time.Second, Login: 30 * time.Second, Command: 60 * time.Second, Job: PlatformTestTimeout}
	tr := &collect.Transcript{Max: platformTestLog}
	target.Transcript = tr

	select {
	case platformTestSlots <- struct{}{}:
		defer func() { <-platformTestSlots }()
	default:
		return PlatformTestResult{}, ErrPlatformTestBusy
	}
	tctx, cancel := context.WithTimeout(ctx, PlatformTestTimeout+5*time.Second)
	defer cancel()
	start := time.Now()
	res, cerr := collect.Collect(tctx, target)
	out := PlatformTestResult{OK: cerr == nil, Elapsed: time.Since(start), Method: target.Method, Host: target.Host}
	if cerr != nil {
		out.Error = cerr.Error()
	}
	text := tr.MaskSecrets(res.Text)
	if len(text) > PlatformTestShown {
		text, out.TextCut = strings.ToValidUTF8(text[:PlatformTestShown], ""), true
	}
	out.Text = text
	out.Segments, out.Truncated = tr.Segments()
	return out, nil
}
