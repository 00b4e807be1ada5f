package backup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"backupd/app/syslog"
	"backupd/db"
	"backupd/db/queue"
)

// SyslogOptions configure StartSyslog.
type SyslogOptions struct {
	// Addr is host:port for UDP and TCP, e.g. "0.0.0.0:5514".
	Addr string
	// Debounce is the quiet time after a device's last configuration
	// change message before its backup is queued (default
	// syslog.DefaultDebounce, 60 s).
	Debounce time.Duration
	Logger   *slog.Logger
}

// Sender lookup timing: the in-memory copy of the devices' names and
// hosts is read again after senderTTL, or after senderMissTTL when a
// sender is not in it (a device added a moment ago is found within
// seconds, and a flood of unknown senders reads the devices at most once
// per senderMissTTL).
const (
	senderTTL     = 30 * time.Second
	senderMissTTL = 5 * time.Second
	senderLoadMax = 5 * time.Second
)

// Reasons a device's configuration-change message queued no backup (the
// reason label of backupd_syslog_skipped_total).
const (
	SyslogSkipDisabled = "disabled" // the device is disabled: not backed up
	SyslogSkipDeleted  = "deleted"  // the device was deleted meanwhile
	SyslogSkipError    = "error"    // the queue could not be written
)

// SyslogSkipReasons lists the reasons, for declaring metrics.
var SyslogSkipReasons = []string{SyslogSkipDisabled, SyslogSkipDeleted, SyslogSkipError}

// SyslogExistingStates are the states of the job a triggered device
// already had, when its trigger created none (the state label of
// backupd_syslog_existing_job_total): queued (the job now runs at once,
// as the syslog's) or running.
var SyslogExistingStates = []string{queue.JobQueued, queue.JobRunning}

// SyslogTrigger is the running syslog listener of `serve`: configuration
// change messages from known devices queue a backup with trigger
// "syslog" on the engine.
type SyslogTrigger struct {
	store   *db.Store
	engine  *Engine
	log     *slog.Logger
	l       *syslog.Listener
	senders *senderIndex

	debounce time.Duration

	queued                   atomic.Uint64
	existingQueued           atomic.Uint64
	existingRunning          atomic.Uint64
	disabled, deleted, erred atomic.Uint64
}

// SyslogStats are the listener's counters and what became of its
// triggers.
type SyslogStats struct {
	syslog.Stats
	Queued uint64 // backup jobs the triggers created
	// Existing counts the triggers whose device had a job already (no
	// new one), by SyslogExistingStates.
	Existing map[string]uint64
	Skipped  map[string]uint64 // by SyslogSkipReasons
}

// StartSyslog listens for device logs on o.Addr with the user patterns
// stored in the settings, until Close.
func StartSyslog(ctx context.Context, store *db.Store, engine *Engine, o SyslogOptions) (*SyslogTrigger, error) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	t := &SyslogTrigger{store: store, engine: engine, log: log, senders: newSenderIndex(store, log), debounce: o.Debounce}
	if t.debounce <= 0 {
		t.debounce = syslog.DefaultDebounce
	}
	stored, err := store.SyslogPatterns(ctx)
	if err != nil {
		return nil, err
	}
	patterns, err := CompileSyslogPatterns(stored)
	if err != nil {
		// Saved patterns were valid when saved; should one not be now,
		// the built-in ones still work.
		log.Warn("syslog: the saved patterns are not used", "err", err)
		patterns = nil
	}
	t.l, err = syslog.Listen(syslog.Config{
		Addr:     o.Addr,
		Resolve:  t.senders.resolve,
		Trigger:  t.trigger,
		Patterns: patterns,
		Debounce: o.Debounce,
		Logger:   log,
	})
	if err != nil {
		return nil, fmt.Errorf("--syslog-listen %s: %w", o.Addr, err)
	}
	return t, nil
}

// Addr is where the listener receives, UDP and TCP on the same port.
func (t *SyslogTrigger) Addr() string { return t.l.UDPAddr().String() }

// Debounce is the quiet time after a device's last change message before
// its backup is queued.
func (t *SyslogTrigger) Debounce() time.Duration { return t.debounce }

// Close stops the listener; devices still in their quiet time are not
// backed up by it (the schedule still is).
func (t *SyslogTrigger) Close() error { return t.l.Close() }

// Stats returns the counters now.
func (t *SyslogTrigger) Stats() SyslogStats {
	return SyslogStats{
		Stats:  t.l.Stats(),
		Queued: t.queued.Load(),
		Existing: map[string]uint64{
			queue.JobQueued: t.existingQueued.Load(), queue.JobRunning: t.existingRunning.Load(),
		},
		Skipped: map[string]uint64{
			SyslogSkipDisabled: t.disabled.Load(), SyslogSkipDeleted: t.deleted.Load(), SyslogSkipError: t.erred.Load(),
		},
	}
}

// ReloadPatterns applies the user patterns stored now to the running
// listener.
func (t *SyslogTrigger) ReloadPatterns(ctx context.Context) error {
	stored, err := t.store.SyslogPatterns(ctx)
	if err != nil {
		return err
	}
	patterns, err := CompileSyslogPatterns(stored)
	if err != nil {
		return err
	}
	return t.l.SetPatterns(patterns)
}

// trigger queues the backup of a device that logged a change, unless it
// is disabled.
func (t *SyslogTrigger) trigger(ctx context.Context, id int64) {
	d, err := t.store.GetDevice(ctx, id)
	switch {
	case errors.Is(err, db.ErrNotFound):
		t.deleted.Add(1)
		return
	case err != nil:
		t.erred.Add(1)
		t.log.Error("syslog: reading the device failed", "device_id", id, "err", err)
		return
	case !d.Enabled:
		t.disabled.Add(1)
		t.log.Info("syslog: a disabled device logged a configuration change; not backed up", "device", d.Name, "device_id", id)
		return
	}
	out, err := t.engine.EnqueueFound(ctx, []int64{id}, queue.TriggerSyslog)
	if err == nil && (len(out) != 1 || out[0].JobID == 0) {
		// Deleted between the read above and the queueing.
		t.deleted.Add(1)
		return
	}
	if err != nil {
		t.erred.Add(1)
		t.log.Error("syslog: queueing the backup failed", "device", d.Name, "device_id", id, "err", err)
		return
	}
	attrs := []any{"device", d.Name, "device_id", id, "job_id", out[0].JobID}
	switch out[0].Found {
	case "":
		t.queued.Add(1)
		t.log.Info("syslog: the device logged a configuration change; backup queued", attrs...)
	case queue.JobQueued:
		t.existingQueued.Add(1)
		t.log.Info("syslog: the device logged a configuration change; its backup was already queued and now runs at once (no new job)", attrs...)
	default:
		t.existingRunning.Add(1)
		t.log.Info("syslog: the device logged a configuration change; a backup of it is already running (no new job)", attrs...)
	}
}

// senderIndex maps a sender to a device from an in-memory copy of every
// device's name and host, read again now and then (never per message).
type senderIndex struct {
	store *db.Store
	log   *slog.Logger
	snap  atomic.Pointer[senderSnapshot]
	mu    sync.Mutex // one reader of the devices at a time
}

type senderSnapshot struct {
	at time.Time
	// byHost: device host (an address in canonical form, else lower
	// case) → devices; several devices may share an address (a device
	// with several management names, the demo's loopback fleet).
	byHost map[string][]int64
	byName map[string]int64 // lower-case device name → device
}

func newSenderIndex(store *db.Store, log *slog.Logger) *senderIndex {
	return &senderIndex{store: store, log: log}
}

// resolve finds the device that sent a message: the one device whose
// host is the sender's address; else (no device, or several, at that
// address) the device whose name or host is the message's HOSTNAME,
// case-insensitively.
func (x *senderIndex) resolve(addr netip.Addr, hostname string) (int64, bool) {
	s := x.current(senderTTL)
	if id, ok := s.lookup(addr, hostname); ok {
		return id, true
	}
	if s2 := x.current(senderMissTTL); s2 != s {
		return s2.lookup(addr, hostname)
	}
	return 0, false
}

func (s *senderSnapshot) lookup(addr netip.Addr, hostname string) (int64, bool) {
	if s == nil {
		return 0, false
	}
	if ids := s.byHost[addr.Unmap().String()]; len(ids) == 1 {
		return ids[0], true
	}
	h := strings.ToLower(strings.TrimSpace(hostname))
	if h == "" || h == "-" {
		return 0, false
	}
	if id, ok := s.byName[h]; ok {
		return id, true
	}
	if ids := s.byHost[hostKey(h)]; len(ids) == 1 {
		return ids[0], true
	}
	return 0, false
}

// current returns a snapshot no older than maxAge, reading the devices
// when it is older. Should another goroutine be reading them, the older
// snapshot is used meanwhile; should reading fail, the older one stays
// in use for maxAge.
func (x *senderIndex) current(maxAge time.Duration) *senderSnapshot {
	s := x.snap.Load()
	if s != nil && time.Since(s.at) < maxAge {
		return s
	}
	if s != nil && !x.mu.TryLock() {
		return s
	}
	if s == nil {
		x.mu.Lock()
	}
	defer x.mu.Unlock()
	if cur := x.snap.Load(); cur != nil && time.Since(cur.at) < maxAge {
		return cur
	}
	ctx, cancel := context.WithTimeout(context.Background(), senderLoadMax)
	defer cancel()
	devices, err := x.store.SyslogSenders(ctx)
	if err != nil {
		x.log.Error("syslog: reading the devices failed", "err", err)
		next := &senderSnapshot{at: time.Now()}
		if s != nil {
			next.byHost, next.byName = s.byHost, s.byName
		}
		x.snap.Store(next)
		return next
	}
	next := &senderSnapshot{at: time.Now(), byHost: make(map[string][]int64, len(devices)), byName: make(map[string]int64, len(devices))}
	for _, d := range devices {
		k := hostKey(d.Host)
		next.byHost[k] = append(next.byHost[k], d.ID)
		next.byName[strings.ToLower(d.Name)] = d.ID
	}
	x.snap.Store(next)
	return next
}

// hostKey is how a device host is compared: an IP address in its
// canonical form (so "2001:DB8::1" is the sender 2001:db8::1), a name in
// lower case.
func hostKey(host string) string {
	host = strings.TrimSpace(host)
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String()
	}
	return strings.ToLower(host)
}

// Kinds of SyslogPatternError, each a message of its own in the UI.
const (
	SyslogPatternNameRequired = "name_required"
	SyslogPatternNameTooLong  = "name_too_long"
	SyslogPatternNameTaken    = "name_taken"
	SyslogPatternEmpty        = "pattern_empty"
	SyslogPatternTooLong      = "pattern_too_long"
	SyslogPatternInvalid      = "pattern_invalid"
	SyslogPatternMatchesEmpty = "pattern_matches_empty"
	SyslogPatternTooMany      = "too_many"
)

// SyslogPatternError says which user pattern is refused and why. Index
// is the pattern's position from 0 (-1 for too many); Detail is the
// regular expression parser's complaint for SyslogPatternInvalid.
type SyslogPatternError struct {
	Index  int
	Kind   string
	Name   string
	Detail string
}

func (e *SyslogPatternError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("syslog patterns: more than %d", syslog.MaxUserPattern)
	}
	msg := fmt.Sprintf("syslog pattern %d (%q): %s", e.Index+1, e.Name, strings.ReplaceAll(e.Kind, "_", " "))
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// CompileSyslogPatterns checks the user's patterns as the listener will
// use them (syslog.CompilePattern, names unique and not a built-in's, at
// most syslog.MaxUserPattern) and compiles them.
func CompileSyslogPatterns(stored []db.SyslogPattern) ([]syslog.Pattern, error) {
	if len(stored) > syslog.MaxUserPattern {
		return nil, &SyslogPatternError{Index: -1, Kind: SyslogPatternTooMany}
	}
	taken := map[string]bool{}
	for _, b := range syslog.BuiltinPatterns() {
		taken[b.Name] = true
	}
	out := make([]syslog.Pattern, 0, len(stored))
	for i, sp := range stored {
		name := strings.TrimSpace(sp.Name)
		fail := func(kind, detail string) error {
			return &SyslogPatternError{Index: i, Kind: kind, Name: name, Detail: detail}
		}
		switch {
		case name == "":
			return nil, fail(SyslogPatternNameRequired, "")
		case len(name) > syslog.MaxPatternName:
			return nil, fail(SyslogPatternNameTooLong, "")
		case taken[name]:
			return nil, fail(SyslogPatternNameTaken, "")
		case strings.TrimSpace(sp.Pattern) == "":
			return nil, fail(SyslogPatternEmpty, "")
		case len(sp.Pattern) > syslog.MaxPatternExpr:
			return nil, fail(SyslogPatternTooLong, "")
		}
		if _, err := regexp.Compile(sp.Pattern); err != nil {
			detail := err.Error()
			var re *syntax.Error
			if errors.As(err, &re) {
				detail = string(re.Code)
				if re.Expr != "" {
					detail += ": `" + re.Expr + "`"
				}
			}
			return nil, fail(SyslogPatternInvalid, detail)
		}
		p, err := syslog.CompilePattern(name, sp.Pattern)
		if err != nil {
			// What is left: the expression matches an empty message.
			return nil, fail(SyslogPatternMatchesEmpty, "")
		}
		taken[name] = true
		out = append(out, p)
	}
	return out, nil
}
