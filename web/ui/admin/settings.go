package admin

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"backupd/db"
	"backupd/web/ui/core"
)

// Retention bounds. The CLI asks only for 0 or more; the upper bounds
// keep the numbers meaningful (a million versions, a hundred years).
const (
	maxKeepLast = 1_000_000
	maxKeepDays = 36_500
	// retentionApplyTimeout bounds "Apply retention now" within the
	// request (the server's write timeout is 5 minutes). Retention works
	// in batches, so a run cut short keeps what it did; the daily run
	// does the rest.
	retentionApplyTimeout = 2 * time.Minute
)

// settingsPage is the data of settings.html.
type settingsPage struct {
	KeepLast string
	KeepDays string
	Errors   core.FormErrors
	// Saved reports whether a policy was ever saved (else the defaults
	// apply), SavedAt when.
	Saved           bool
	SavedAt         time.Time
	DefaultKeepLast int
	DefaultKeepDays int
	MaxKeepLast     int
	MaxKeepDays     int
	Notice          string
	NoticeArgs      []any
	NoticeWarning   bool
	Facts           settingsFacts
	Nodes           []settingsNode
	Syslog          settingsSyslog
	Git             settingsGit
	Outbound        settingsOutbound
	Secrets         settingsSecrets
	Restore         settingsRestore
	// gitTyped, outboundTyped and restoreTyped keep their section as the
	// refused form had it.
	gitTyped      bool
	outboundTyped bool
	restoreTyped  bool
}

// settingsFacts are read-only facts about the server for the operator.
type settingsFacts struct {
	Version       string
	Timezone      string
	DataFile      string
	Devices       int
	Backups       int
	Snapshots     int
	SnapshotBytes string
	StoredBytes   string
	// Deltas of Snapshots are stored against a newer version; Ratio is
	// how many times larger the text is than what is stored.
	Deltas int
	Ratio  string
}

func (u *handlers) settings(w http.ResponseWriter, r *http.Request) error {
	policy, err := u.Store.RetentionPolicy(r.Context())
	if err != nil {
		return err
	}
	p := settingsPage{KeepLast: strconv.Itoa(policy.KeepLast), KeepDays: strconv.Itoa(policy.KeepDays)}
	u.settingsNotice(r.URL.Query(), &p)
	return u.renderSettings(w, r, http.StatusOK, p)
}

// settingsNotice reads the notice a redirect back to the page asks for.
func (u *handlers) settingsNotice(q url.Values, p *settingsPage) {
	deleted, _ := strconv.Atoi(q.Get("deleted"))
	purged, _ := strconv.Atoi(q.Get("purged"))
	switch q.Get("done") {
	case "saved":
		p.Notice = keySettingsNoticeSaved
	case "applied":
		p.Notice, p.NoticeArgs = keySettingsNoticeApplied, []any{deleted, purged}
	case "partial":
		p.Notice, p.NoticeArgs = keySettingsNoticePartial, []any{deleted, purged, int(retentionApplyTimeout / time.Minute)}
		p.NoticeWarning = true
	case "syslog_applied":
		p.Notice = keySyslogNoticeApplied
	case "syslog_saved":
		p.Notice = keySyslogNoticeSaved
	case "git_saved":
		p.Notice = keyGitNoticeSaved
	case "outbound_saved":
		p.Notice = keyOutboundNoticeSaved
	case "secrets_saved":
		p.Notice = keySecretsNoticeSaved
	case "restore_saved":
		p.Notice = keyRestoreNoticeSaved
	}
}

func (u *handlers) renderSettings(w http.ResponseWriter, r *http.Request, status int, p settingsPage) error {
	return u.renderSettingsTyped(w, r, status, p, false)
}

// renderSettingsTyped shows the settings page; typedSyslog keeps the
// syslog patterns as the refused form had them.
func (u *handlers) renderSettingsTyped(w http.ResponseWriter, r *http.Request, status int, p settingsPage, typedSyslog bool) error {
	ctx := r.Context()
	if err := u.fillSyslog(r, &p.Syslog, typedSyslog); err != nil {
		return err
	}
	if err := u.fillGit(r, &p.Git, p.gitTyped); err != nil {
		return err
	}
	if err := u.fillOutbound(r, &p.Outbound, p.outboundTyped); err != nil {
		return err
	}
	if err := u.fillSecrets(r, &p.Secrets); err != nil {
		return err
	}
	if err := u.fillRestore(r, &p.Restore, p.restoreTyped); err != nil {
		return err
	}
	at, saved, err := u.Store.SettingUpdatedAt(ctx, db.SettingRetention)
	if err != nil {
		return err
	}
	p.Saved, p.SavedAt = saved, at
	p.DefaultKeepLast, p.DefaultKeepDays = db.DefaultRetention.KeepLast, db.DefaultRetention.KeepDays
	p.MaxKeepLast, p.MaxKeepDays = maxKeepLast, maxKeepDays
	st, err := u.Store.Stats(ctx, u.Now())
	if err != nil {
		return err
	}
	p.Facts = settingsFacts{
		Version: u.Version, Timezone: u.DefaultZone(), DataFile: u.Store.Path(),
		Devices: st.DevicesTotal, Backups: st.BackupsTotal, Snapshots: st.Snapshots,
		SnapshotBytes: settingsBytes(st.SnapshotBytes), StoredBytes: settingsBytes(st.SnapshotStoredBytes),
		Deltas: int(st.SnapshotDeltas), Ratio: "—",
	}
	if p.Nodes, err = u.nodeRows(ctx); err != nil {
		return err
	}
	if st.SnapshotStoredBytes > 0 {
		p.Facts.Ratio = strconv.FormatFloat(float64(st.SnapshotBytes)/float64(st.SnapshotStoredBytes), 'f', 1, 64)
	}
	return u.Render(w, r, status, "settings.html", keySettingsTitle, p)
}

// settingsNode is one backupd node serving this store, for the nodes
// table: several on PostgreSQL, one on SQLite.
type settingsNode struct {
	ID          string
	Hostname    string
	Version     string
	StartedAt   time.Time
	HeartbeatAt time.Time
	// State is the message key of what the node does: leads, follows,
	// stopped, or silent (no heartbeat for db.NodeFresh).
	State string
}

// nodeRows reads the nodes for the settings page.
func (u *handlers) nodeRows(ctx context.Context) ([]settingsNode, error) {
	nodes, err := u.Store.ListNodes(ctx)
	if err != nil {
		return nil, err
	}
	now := u.Now()
	out := make([]settingsNode, 0, len(nodes))
	for _, n := range nodes {
		row := settingsNode{ID: n.ID, Hostname: n.Hostname, Version: n.Version, StartedAt: n.StartedAt, HeartbeatAt: n.HeartbeatAt}
		switch {
		case n.StoppedAt != nil:
			row.State = keySettingsNodeStopped
		case !n.Running(now):
			row.State = keySettingsNodeSilent
		case n.Leader:
			row.State = keySettingsNodeLeader
		default:
			row.State = keySettingsNodeFollower
		}
		out = append(out, row)
	}
	return out, nil
}

// settingsBytes writes a size for people: 512 B, 1.5 KiB, 20.3 MiB.
func settingsBytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v := float64(n)
	for _, unit := range []string{"KiB", "MiB", "GiB"} {
		v /= 1024
		if v < 1024 {
			return fmt.Sprintf("%.1f %s", v, unit)
		}
	}
	return fmt.Sprintf("%.1f TiB", v/1024)
}
