package notify

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"backupd/db"
	"backupd/embed"
)

// Languages of the messages; the first is the default. Their texts are in
// embed/i18n/notify.<lang>.json, one flat object each, fmt verbs for
// arguments (%[2]d to reorder), as the web interface's catalogs are.
var Languages = []string{"en", "zh"}

var catalogs = sync.OnceValues(loadCatalogs)

func loadCatalogs() (map[string]map[string]string, error) {
	c := map[string]map[string]string{}
	for _, lang := range Languages {
		raw, err := fs.ReadFile(embed.I18n, "i18n/notify."+lang+".json")
		if err != nil {
			return nil, err
		}
		m := map[string]string{}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("i18n/notify.%s.json: %w", lang, err)
		}
		c[lang] = m
	}
	return c, nil
}

// tr returns key's text in lang, formatted with args; English when lang
// has none, the key itself when no catalog has it (a test catches that).
func tr(lang, key string, args ...any) string {
	c, err := catalogs()
	s := key
	if err == nil {
		if t, ok := c[lang][key]; ok {
			s = t
		} else if t, ok := c[Languages[0]][key]; ok {
			s = t
		}
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

func pickLanguage(l string) string {
	for _, x := range Languages {
		if x == l {
			return l
		}
	}
	return Languages[0]
}

// what says in a few words what happened. A restore or change set event
// may have a text per state (config.restore_failed: rolled back, or not
// known; config.push_finished: done, stopped, cancelled, expired).
func what(lang string, e Event) string {
	keys := []string{"kind." + e.Kind}
	switch {
	case e.Restore != nil:
		keys = append([]string{"kind." + e.Kind + "." + e.Restore.State}, keys...)
	case e.ChangeSet != nil:
		keys = append([]string{"kind." + e.Kind + "." + e.ChangeSet.State}, keys...)
	}
	if c, err := catalogs(); err == nil {
		for _, key := range keys {
			if _, ok := c[Languages[0]][key]; ok {
				return tr(lang, key)
			}
		}
	}
	return tr(lang, "kind.other", e.Kind)
}

// details are the event's particulars: counts, the failure, the age.
func details(lang string, e Event) []string {
	var out []string
	if e.Backup != nil && (e.Backup.LinesAdded > 0 || e.Backup.LinesRemoved > 0) {
		out = append(out, tr(lang, "detail.lines", e.Backup.LinesAdded, e.Backup.LinesRemoved))
	}
	if f := e.Failure; f != nil {
		if f.Stage != "" || f.Reason != "" {
			out = append(out, tr(lang, "detail.failure", oneLine(f.Stage, 40), oneLine(f.Reason, 300)))
		}
		if f.Consecutive > 1 {
			out = append(out, tr(lang, "detail.consecutive", f.Consecutive))
		}
	}
	if g := e.Git; g != nil {
		out = append(out, tr(lang, "detail.git", oneLine(g.Remote, 200), g.Attempts))
	}
	if src := e.InventorySource; src != nil {
		out = append(out, tr(lang, "detail.inventory_source", oneLine(src.Name, 100), oneLine(src.Kind, 20)))
	}
	if s := e.Stale; s != nil {
		th := threshold(lang, s.ThresholdSeconds)
		if s.LastGoodAt == nil {
			out = append(out, tr(lang, "detail.stale_never", th))
		} else {
			out = append(out, tr(lang, "detail.stale", when(*s.LastGoodAt), th))
		}
	}
	if r := e.Restore; r != nil {
		out = append(out, restoreDetails(lang, *r)...)
	}
	if c := e.ChangeSet; c != nil {
		out = append(out, changeSetDetails(lang, *c)...)
	}
	return out
}

// changeSetDetails are a change set event's particulars: which set, of
// how many devices, who made it and who decided, how its devices fared
// and why it stopped. Never its commands: the link leads to them.
func changeSetDetails(lang string, c ChangeSet) []string {
	out := []string{tr(lang, "detail.change_set", c.ID, oneLine(c.Name, 100), c.Devices),
		tr(lang, "detail.change_set_created", oneLine(c.CreatedBy, 100))}
	note := oneLine(c.DecisionNote, 300)
	switch {
	case c.RejectedBy != "" && note != "":
		out = append(out, tr(lang, "detail.change_set_rejected_note", oneLine(c.RejectedBy, 100), note))
	case c.RejectedBy != "":
		out = append(out, tr(lang, "detail.change_set_rejected", oneLine(c.RejectedBy, 100)))
	case c.ApprovedBy != "" && note != "":
		out = append(out, tr(lang, "detail.change_set_approved_note", oneLine(c.ApprovedBy, 100), note))
	case c.ApprovedBy != "":
		out = append(out, tr(lang, "detail.change_set_approved", oneLine(c.ApprovedBy, 100)))
	}
	if n := c.Counts; n != nil {
		out = append(out, tr(lang, "detail.change_set_counts", n.Succeeded, n.Failed, n.Skipped, n.Interrupted))
		if n.Running > 0 {
			out = append(out, tr(lang, "detail.change_set_running", n.Running))
		}
	}
	if reason := oneLine(c.Reason, 300); reason != "" {
		out = append(out, tr(lang, "detail.change_set_reason", reason))
	}
	return out
}

// restoreDetails are a restore event's particulars: which restore of
// which version, who asked and why, who decided, and why it failed.
func restoreDetails(lang string, r Restore) []string {
	version := oneLine(r.VersionID, 64)
	if r.VersionAt != nil {
		version = when(*r.VersionAt)
	}
	out := []string{tr(lang, "detail.restore", r.ID, version)}
	who := oneLine(r.RequestedBy, 100)
	if note := oneLine(r.Reason, 300); note != "" {
		out = append(out, tr(lang, "detail.restore_requested_note", who, note))
	} else {
		out = append(out, tr(lang, "detail.restore_requested", who))
	}
	if r.DecidedBy != "" {
		who, note := oneLine(r.DecidedBy, 100), oneLine(r.DecisionNote, 300)
		switch {
		case r.State == db.RestoreRejected && note != "":
			out = append(out, tr(lang, "detail.restore_rejected_note", who, note))
		case r.State == db.RestoreRejected:
			out = append(out, tr(lang, "detail.restore_rejected", who))
		case note != "":
			out = append(out, tr(lang, "detail.restore_approved_note", who, note))
		default:
			out = append(out, tr(lang, "detail.restore_approved", who))
		}
	}
	if msg := oneLine(r.Error, 300); msg != "" {
		where := r.Stage
		if where == "" {
			where = r.ErrorReason
		}
		if where = oneLine(where, 40); where != "" {
			out = append(out, tr(lang, "detail.failure", where, msg))
		} else {
			out = append(out, tr(lang, "detail.restore_error", msg))
		}
	}
	return out
}

func threshold(lang string, seconds int64) string {
	if seconds%3600 == 0 {
		return tr(lang, "unit.hours", seconds/3600)
	}
	return tr(lang, "unit.minutes", (seconds+59)/60)
}

func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func triggerName(lang, trigger string) string {
	if c, err := catalogs(); err == nil {
		if _, ok := c[Languages[0]]["trigger."+trigger]; ok {
			return tr(lang, "trigger."+trigger)
		}
	}
	return oneLine(trigger, 40)
}

// deviceLabel is "name (host)", on one line; "backupd" for a system
// event, which has no device.
func deviceLabel(d *Device) string {
	if d == nil {
		return "backupd"
	}
	name := oneLine(d.Name, 100)
	if name == "" {
		name = fmt.Sprintf("#%d", d.ID)
	}
	if h := oneLine(d.Host, 100); h != "" && h != name {
		return name + " (" + h + ")"
	}
	return name
}

// title is the headline of a delivery: the one event, or the digest's
// counts.
func title(lang string, events []Event) string {
	if len(events) == 1 {
		return tr(lang, "subject.single", deviceLabel(events[0].Device), what(lang, events[0]))
	}
	return tr(lang, "digest.title", len(events), countDevices(events))
}

func countDevices(events []Event) int {
	seen := map[int64]bool{}
	for _, e := range events {
		if e.Device != nil {
			seen[e.Device.ID] = true
		}
	}
	return len(seen)
}

// summary is one event on one line: "name (host): what, details".
func summary(lang string, e Event) string {
	s := deviceLabel(e.Device) + ": " + what(lang, e)
	if d := details(lang, e); len(d) > 0 {
		s += " — " + strings.Join(d, "; ")
	}
	return s
}

// ordered returns the events most urgent first (failures, then changes,
// then the rest), each kind by device name, so that a cut digest keeps
// what matters.
func ordered(events []Event) []Event {
	rank := func(kind string) int {
		switch kind {
		case "backup.failed", "device.unreachable", "hostkey.changed", "backup.stale", "git.push_failed", "config.restore_failed",
			"inventory.sync_failed":
			return 0
		case "config.changed", "config.restore_requested", "config.push_requested":
			return 1
		}
		return 2
	}
	out := append([]Event(nil), events...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank(out[i].Kind), rank(out[j].Kind)
		if ri != rj {
			return ri < rj
		}
		return deviceName(out[i]) < deviceName(out[j])
	})
	return out
}

func deviceName(e Event) string {
	if e.Device == nil {
		return ""
	}
	return e.Device.Name
}

// oneLine makes untrusted text (a device name, a failure reason) safe
// for one line of any message: control characters and line breaks become
// spaces, runs of space one, and it is cut to max runes.
func oneLine(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}
