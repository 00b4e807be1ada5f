package admin

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"backupd/app/backup"
	"backupd/db"
	"backupd/web/ui/core"
)

// The retention section: the policy saved, and applied now.

// retentionRunning holds the stores a retention run started from this
// page is working on, so that impatient clicks do not start a second.
var retentionRunning sync.Map

// saveRetention stores the retention policy, as `backupd backup prune
// --keep-last --keep-days` does; the daily run and "Apply now" use it.
func (u *handlers) saveRetention(w http.ResponseWriter, r *http.Request) error {
	p := settingsPage{
		KeepLast: strings.TrimSpace(r.PostFormValue("keep_last")),
		KeepDays: strings.TrimSpace(r.PostFormValue("keep_days")),
	}
	keepLast, ok := settingsNumber(p.KeepLast, maxKeepLast)
	if !ok {
		p.Errors.Add("keep_last", keySettingsKeepLastRange, maxKeepLast)
	}
	keepDays, ok := settingsNumber(p.KeepDays, maxKeepDays)
	if !ok {
		p.Errors.Add("keep_days", keySettingsKeepDaysRange, maxKeepDays)
	}
	if !p.Errors.Empty() {
		return u.renderSettings(w, r, http.StatusUnprocessableEntity, p)
	}
	policy := db.Retention{KeepLast: keepLast, KeepDays: keepDays}
	if err := u.Store.PutSetting(r.Context(), db.SettingRetention, policy); err != nil {
		return err
	}
	u.AuditAs(r, "settings.update", "settings", db.SettingRetention, map[string]any{"keep_last": policy.KeepLast, "keep_days": policy.KeepDays})
	http.Redirect(w, r, "/settings?done=saved", http.StatusSeeOther)
	return nil
}

// settingsNumber reads a whole number in [0, hi].
func settingsNumber(s string, hi int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && n <= hi
}

// applyRetention runs the stored retention policy now, in the request,
// for at most retentionApplyTimeout. Leaving the page does not stop it;
// the timeout does, between batches.
func (u *handlers) applyRetention(w http.ResponseWriter, r *http.Request) error {
	store := u.Store
	if _, busy := retentionRunning.LoadOrStore(store, true); busy {
		return &core.PageError{Status: http.StatusConflict, Message: keySettingsRetentionBusy}
	}
	defer retentionRunning.Delete(store)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), retentionApplyTimeout)
	defer cancel()
	res, err := backup.RunRetention(ctx, store, u.Log.With("component", "retention"))
	complete := err == nil
	if err != nil && ctx.Err() == nil {
		return err
	}
	u.AuditAs(r, "backup.prune", "backup", "", map[string]any{
		"backups_deleted": res.BackupsDeleted, "snapshots_purged": res.SnapshotsPurged, "complete": complete,
	})
	done := "applied"
	if !complete {
		done = "partial"
	}
	q := url.Values{"done": {done}, "deleted": {strconv.Itoa(res.BackupsDeleted)}, "purged": {strconv.Itoa(res.SnapshotsPurged)}}
	http.Redirect(w, r, "/settings?"+q.Encode(), http.StatusSeeOther)
	return nil
}
