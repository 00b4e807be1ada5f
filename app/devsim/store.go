package devsim

import (
	mrand "math/rand/v2"
	"net"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// The configuration store. Until anything writes it, a device's running
// configuration is its generated model as it renders; the first write
// (a commit, a configure replace, SetRunningConfig) makes it a text of
// its own, which every later show prints. The lines a device writes
// itself at every show (the Junos "## Last commit" stamp, the IOS build
// banner, size and timestamps) are not part of that text: they stay
// rendered fresh, so a backup of a written device looks like one of an
// untouched device.

// CommitKind says how a version of the running configuration came about.
type CommitKind string

const (
	// CommitInitial is the configuration the device started with.
	CommitInitial CommitKind = "initial"
	// CommitManual is a change made by hand: SetRunningConfig, Mutate,
	// RotateSecret.
	CommitManual CommitKind = "manual"
	// CommitCommit is a Junos commit (also one that confirms a pending
	// commit confirmed).
	CommitCommit CommitKind = "commit"
	// CommitConfirmed is a Junos commit confirmed: it rolls back unless
	// confirmed in time.
	CommitConfirmed CommitKind = "commit confirmed"
	// CommitReplace is an IOS-XE configure replace.
	CommitReplace CommitKind = "replace"
	// CommitMerge is an IOS-XE copy of a file to running-config.
	CommitMerge CommitKind = "merge"
	// CommitRevert is an IOS-XE configure revert now.
	CommitRevert CommitKind = "revert"
	// CommitRollback is the device going back on its own because a
	// confirm did not come in time.
	CommitRollback CommitKind = "rollback"
	// CommitImport is a RouterOS /import of a script onto the running
	// configuration.
	CommitImport CommitKind = "import"
	// CommitReset is a RouterOS reset-configuration: the configuration
	// the router came back with (its run-after-reset script, or none).
	CommitReset CommitKind = "reset"
)

// Commit is one version of the running configuration, as the device's
// history holds it.
type Commit struct {
	Seq  int // 1 for the initial configuration, then one more per version
	Kind CommitKind
	At   time.Time
	User string
	Text string // the configuration, without the lines rendered at every show
}

// maxHistory is how many versions a device keeps: Junos keeps the last 50
// commits (rollback 0 to 49).
const maxHistory = 50

// configStore is the writable side of a device. Guarded by Device.mu.
type configStore struct {
	written bool
	text    string // running configuration once written
	// startup is the saved configuration of platforms that have one
	// (startupCommand), once it differs from the running configuration.
	startup *string
	history []Commit
	seq     int
	files   map[string][]byte
	// confirm is the pending confirmed change, nil when none.
	confirm   *confirmTimer
	rollbacks int
	// archives counts IOS-XE configuration archive files.
	archives int

	// Junos: the shared candidate (nil: a copy of the active
	// configuration) and the session holding configure exclusive.
	shared    *jnode
	exclusive *session

	// EOS: the configuration sessions by name, and the counter of the
	// names EOS makes up.
	eos    map[string]*eosSess
	eosSeq int
	// RouterOS: a reset without keep-users=yes left only the default
	// account (admin, no password).
	defaultUsers bool
	// downUntil is when a rebooting device answers again.
	downUntil time.Time
}

// confirmTimer is a change that must be confirmed within its deadline or
// the device puts restore back.
type confirmTimer struct {
	restore string
	// toSaved goes back to the saved configuration as it is when the
	// time runs out (VyOS reboots into it) instead of restore.
	toSaved    bool
	minutes    int
	user       string
	configured time.Time
	deadline   time.Time
	archive    string // IOS-XE: the archive file of restore
	stop       chan struct{}
}

// headerRules say which leading lines of a configuration text the device
// writes itself at every show; they are dropped from text that is
// stored, whatever the sender put there. IOS keeps one volatile line in
// the configuration itself (ntp clock-period): once written, it stays as
// written.
var headerRules = map[string]*regexp.Regexp{
	"cisco_ios":     regexp.MustCompile(`^(Building configuration\.\.\.|Current configuration : \d+ bytes|!.*|\s*)$`),
	"cisco_xe":      regexp.MustCompile(`^(Building configuration\.\.\.|Current configuration : \d+ bytes|!.*|\s*)$`),
	"juniper_junos": regexp.MustCompile(`^(#.*|/\*.*\*/|\s*)$`),
	// EOS names the command, the device and its boot image in comments.
	"arista_eos": regexp.MustCompile(`^(! Command: .*|! device: .*|! boot system .*|!|\s*)$`),
	// RouterOS: the date, software id, model and serial comments.
	"mikrotik_routeros": regexp.MustCompile(`^(#.*|\s*)$`),
}

// ruleHeader are the platforms in headerRules whose configuration has no
// "version" line: the header is every leading line of the rule.
var ruleHeader = map[string]bool{"arista_eos": true, "mikrotik_routeros": true}

// startupCommand names the command that prints the saved configuration,
// on platforms that keep one apart from the running configuration (""
// when no configuration command of the personality shows it).
var startupCommand = map[string]string{
	"cisco_ios":  "show startup-config",
	"cisco_xe":   "show startup-config",
	"arista_eos": "show startup-config",
	"vyos":       "",
	// NX-OS saves with "copy running-config startup-config" and shows
	// the saved one with "show startup-config" (NX-OS Fundamentals
	// Configuration Guide, "Working with Configuration Files"); the
	// header shown is the running configuration's, for want of a
	// capture of the other.
	"cisco_nxos": "show startup-config",
}

// splitHeader cuts a rendered configuration into the lines the device
// renders at every show and the configuration itself, which starts with
// its "version" line on the platforms in headerRules, or after the
// leading lines of the rule on those in ruleHeader. Elsewhere the whole
// text is configuration.
func splitHeader(platform string, d doc) (header, body doc) {
	rule := headerRules[platform]
	if rule == nil {
		return nil, d
	}
	if ruleHeader[platform] {
		for i, l := range d {
			if l.vol == nil && l.size == "" && !rule.MatchString(l.text) {
				return d[:i:i], d[i:]
			}
		}
		return d, nil
	}
	for i, l := range d {
		if l.vol == nil && l.size == "" && strings.HasPrefix(l.text, "version ") {
			return d[:i:i], d[i:]
		}
	}
	return nil, d
}

// normalizeConfig turns text into the form the store keeps: "\n" line
// endings, no lines the device renders itself in front, one final
// newline.
func normalizeConfig(platform, text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if rule := headerRules[platform]; rule != nil {
		for len(lines) > 0 && rule.MatchString(lines[0]) {
			lines = lines[1:]
		}
	}
	if len(lines) == 0 || len(lines) == 1 && lines[0] == "" {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// configKey is the docs key the running configuration is shown under.
func (d *Device) configKey() string {
	if _, ok := d.docs[""]; ok || len(d.p.ConfigCommands) == 0 {
		return ""
	}
	return d.p.ConfigCommands[0]
}

// renderedBodyLocked is the running configuration of a device nothing
// has written yet: what its model renders, without the header.
func (d *Device) renderedBodyLocked() string {
	_, body := splitHeader(d.p.Platform, d.docs[d.configKey()])
	return body.render(d.volatileLocked())
}

func (d *Device) volatileLocked() volatile {
	return volatile{Show: d.shows, Now: d.lastNow, ChangedAt: d.changedAt, R: mrand.New(mrand.NewPCG(d.model.seed, uint64(d.shows)))}
}

// runningLocked is the running configuration without its header.
func (d *Device) runningLocked() string {
	if d.cfg.written {
		return d.cfg.text
	}
	return d.renderedBodyLocked()
}

// startupLocked is the saved configuration (the running one on
// platforms without startupCommand).
func (d *Device) startupLocked() string {
	if d.cfg.startup != nil {
		return *d.cfg.startup
	}
	return d.runningLocked()
}

// ensureHistoryLocked records the initial configuration before the first
// change.
func (d *Device) ensureHistoryLocked() {
	if len(d.cfg.history) > 0 {
		return
	}
	d.cfg.seq = 1
	d.cfg.history = []Commit{{Seq: 1, Kind: CommitInitial, At: d.changedAt, User: d.opts.Username, Text: d.runningLocked()}}
}

// setRunningLocked makes text the running configuration and records it
// as a new version.
func (d *Device) setRunningLocked(text string, kind CommitKind, user string) {
	d.ensureHistoryLocked()
	if _, ok := startupCommand[d.p.Platform]; ok && d.cfg.startup == nil {
		saved := d.runningLocked()
		d.cfg.startup = &saved
	}
	d.cfg.written = true
	d.cfg.text = text
	d.changedAt = d.tick()
	d.appendHistoryLocked(kind, user, text)
	d.rebuildDocsLocked()
}

func (d *Device) appendHistoryLocked(kind CommitKind, user, text string) {
	d.cfg.seq++
	d.cfg.history = append(d.cfg.history, Commit{Seq: d.cfg.seq, Kind: kind, At: d.changedAt, User: user, Text: text})
	if len(d.cfg.history) > maxHistory {
		d.cfg.history = slices.Delete(d.cfg.history, 0, len(d.cfg.history)-maxHistory)
	}
}

// remodelLocked renders the model again after it changed (Mutate,
// RotateSecret): the model is the running configuration again, and a
// device with a history records the change.
func (d *Device) remodelLocked() {
	d.docs = renderers[d.p.Platform](d.model, d.units)
	d.header, _ = splitHeader(d.p.Platform, d.docs[d.configKey()])
	d.cfg.written = false
	d.changedAt = d.tick()
	if len(d.cfg.history) > 0 {
		d.appendHistoryLocked(CommitManual, d.opts.Username, d.renderedBodyLocked())
	}
	d.rebuildDocsLocked()
}

// saveLocked copies the running configuration to the saved one (write
// memory).
func (d *Device) saveLocked() {
	if _, ok := startupCommand[d.p.Platform]; !ok {
		return
	}
	saved := d.runningLocked()
	d.cfg.startup = &saved
	d.rebuildDocsLocked()
}

// rebuildDocsLocked points the configuration commands at the stored
// texts, behind a freshly rendered header.
func (d *Device) rebuildDocsLocked() {
	if d.cfg.written {
		d.docs[d.configKey()] = withHeader(d.header, d.cfg.text)
	}
	if cmd := startupCommand[d.p.Platform]; cmd != "" && d.cfg.startup != nil {
		d.docs[cmd] = withHeader(d.header, *d.cfg.startup)
	}
}

func withHeader(header doc, text string) doc {
	out := append(doc(nil), header...)
	if text == "" {
		return out
	}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		out = append(out, docLine{text: l})
	}
	return out
}

// RunningConfig returns the running configuration the device holds,
// without the lines it renders at every show (see Show for those).
func (d *Device) RunningConfig() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.runningLocked()
}

// StartupConfig returns the saved configuration of a device that keeps
// one ("show startup-config"), the running one elsewhere.
func (d *Device) StartupConfig() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.startupLocked()
}

// SetRunningConfig replaces the running configuration, as an operator
// editing the device by hand would; the lines the device renders itself
// (header, timestamps) are dropped from text and rendered fresh. The
// change is recorded in the history (CommitManual); a pending confirm
// timer keeps running.
func (d *Device) SetRunningConfig(text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.setRunningLocked(normalizeConfig(d.p.Platform, text), CommitManual, d.opts.Username)
}

// Commits returns the versions of the running configuration the device
// remembers, oldest first: the initial one, then every commit, replace,
// revert and automatic rollback (the last maxHistory).
func (d *Device) Commits() []Commit {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ensureHistoryLocked()
	return slices.Clone(d.cfg.history)
}

// Rollbacks counts the times a confirm timer ran out and the device went
// back to its previous configuration on its own.
func (d *Device) Rollbacks() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg.rollbacks
}

// ConfirmPending reports whether a change waits for its confirmation,
// and until when.
func (d *Device) ConfirmPending() (deadline time.Time, pending bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.cfg.confirm; c != nil {
		return c.deadline, true
	}
	return time.Time{}, false
}

// maxFileSize bounds one stored file; configurations stay far below.
const maxFileSize = 16 << 20

// normFilePath names a file the way the device's file system does:
// "flash:/x", "flash:x" and "bootflash:x" are one file (IOS-XE routers
// alias flash: to bootflash:), Unix paths are cleaned.
func normFilePath(p string) string {
	p = strings.TrimSpace(p)
	if i := strings.Index(p, ":"); i > 0 && !strings.Contains(p[:i], "/") {
		fs, rest := strings.ToLower(p[:i]), strings.TrimLeft(p[i+1:], "/")
		if fs == "bootflash" {
			fs = "flash"
		}
		return fs + ":" + rest
	}
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return p
}

// PutFile stores a file on the device, as an upload would: a Junos
// "/var/tmp/restore.conf" for load override, an IOS-XE
// "flash:restore.cfg" for configure replace. Data is copied; files larger
// than 16 MiB are refused (false).
func (d *Device) PutFile(name string, data []byte) bool {
	if len(data) > maxFileSize || normFilePath(name) == "" {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cfg.files[normFilePath(name)] = append([]byte(nil), data...)
	return true
}

// File returns a copy of a stored file.
func (d *Device) File(name string) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	data, ok := d.cfg.files[normFilePath(name)]
	return append([]byte(nil), data...), ok
}

// Files lists the stored files, sorted.
func (d *Device) Files() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	names := make([]string, 0, len(d.cfg.files))
	for n := range d.cfg.files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// armConfirmLocked starts (or restarts) the confirm timer: unless
// confirmed within minutes, the device goes back to restore. A change made
// while another waits keeps the older restore point, so the rollback
// returns to the configuration before the first unconfirmed change.
func (d *Device) armConfirmLocked(restore string, minutes int, user, archive string) *confirmTimer {
	return d.armTimerLocked(restore, time.Duration(minutes)*time.Minute, user, archive)
}

// armTimerLocked is armConfirmLocked for a timer of any length (EOS's
// commit timer counts hh:mm:ss): dur is device time, one minute of which
// lasts Options.Minute.
func (d *Device) armTimerLocked(restore string, dur time.Duration, user, archive string) *confirmTimer {
	now := d.opts.Clock()
	if old := d.cfg.confirm; old != nil {
		close(old.stop)
		restore, archive = old.restore, old.archive
	}
	wait := time.Duration(float64(dur) / float64(time.Minute) * float64(d.opts.Minute))
	c := &confirmTimer{
		restore: restore, minutes: int(dur / time.Minute), user: user, archive: archive,
		configured: now, deadline: now.Add(wait),
		stop: make(chan struct{}),
	}
	d.cfg.confirm = c
	d.goOwned(func() {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
			d.expire(c)
		case <-c.stop:
		case <-d.ctx.Done():
		}
	})
	return c
}

// confirmLocked ends a pending confirm: the change stays. It reports
// whether one was pending.
func (d *Device) confirmLocked() bool {
	c := d.cfg.confirm
	if c == nil {
		return false
	}
	close(c.stop)
	d.cfg.confirm = nil
	return true
}

// revertLocked puts the configuration of the pending confirm back now.
func (d *Device) revertLocked(kind CommitKind, user string) bool {
	c := d.cfg.confirm
	if c == nil {
		return false
	}
	close(c.stop)
	d.cfg.confirm = nil
	d.setRunningLocked(c.restore, kind, user)
	d.cfg.shared = nil
	return true
}

// expire runs when a confirm timer ran out: the device goes back to the
// configuration before the change, records it, and tells whoever is
// logged in where the platform does.
func (d *Device) expire(c *confirmTimer) {
	d.mu.Lock()
	if d.closed || d.cfg.confirm != c {
		d.mu.Unlock()
		return
	}
	d.cfg.confirm = nil
	restore := c.restore
	if c.toSaved {
		restore = d.startupLocked()
	}
	d.setRunningLocked(restore, CommitRollback, "root")
	d.cfg.rollbacks++
	d.cfg.shared = nil
	at := d.changedAt
	shells := make([]*session, 0, len(d.shells))
	for s := range d.shells {
		shells = append(shells, s)
	}
	conns := make([]net.Conn, 0, len(d.conns))
	for c := range d.conns {
		conns = append(conns, c)
	}
	d.mu.Unlock()
	d.log.Info("confirm timer ran out; configuration rolled back")
	switch d.p.Platform {
	case "juniper_junos":
		msg := junosRollbackBroadcast(d.opts.Hostname, at)
		for _, s := range shells {
			// A client that reads nothing must not hold up the others.
			d.goOwned(func() { s.plain(msg) })
		}
	case "vyos":
		d.goOwned(func() { d.reboot(shells, conns, vyosRebootBroadcast(d.opts.Hostname, at)) })
	}
}

// rebootGrace bounds how long a reboot waits for its message to reach
// the terminals before it drops every connection.
const rebootGrace = time.Second

// reboot tells the terminals and drops every connection, as a device
// going down does; it accepts new ones again once Options.BootTime has
// passed (at once when none is set).
func (d *Device) reboot(shells []*session, conns []net.Conn, msg string) {
	told := make(chan struct{})
	d.goOwned(func() {
		defer close(told)
		for _, s := range shells {
			s.plain(msg)
		}
	})
	t := time.NewTimer(rebootGrace)
	defer t.Stop()
	select {
	case <-told:
	case <-t.C:
	case <-d.ctx.Done():
	}
	d.mu.Lock()
	d.cfg.downUntil = time.Now().Add(d.opts.BootTime)
	d.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// down reports whether the device is still booting after a reboot: it
// drops new connections at once until Options.BootTime has passed.
func (d *Device) down() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return time.Now().Before(d.cfg.downUntil)
}

// addShell registers an interactive session, for device messages.
func (d *Device) addShell(s *session) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sessions++
	s.id, s.since = d.sessions, d.opts.Clock()
	d.shells[s] = struct{}{}
}

// removeShell forgets a session that ended; a Junos configuration mode
// it left open ends with it (configure exclusive unlocks).
func (d *Device) removeShell(s *session) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.shells, s)
	s.junosLeaveLocked()
}
