package devices

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/db"
	"backupd/web/ui/core"
)

// The session log of a failed attempt: what backupd sent and the device
// answered, passwords masked (app/backup.SessionLog), linked from the
// device's history and the jobs page.

// deviceLogPage is the data of device_log.html.
type deviceLogPage struct {
	Device db.Device
	Backup detailHistoryRow
	// Segments are the log's runs; none when no log was kept.
	Segments   []backup.LogSegment
	Truncated  bool
	HistoryURL string
	// Secrets says whether the log's secrets are masked.
	Secrets core.Secrets
}

// detailLogPath is the session log page of an attempt.
func detailLogPath(deviceID int64, backupID string) string {
	return detailPath(db.Device{ID: deviceID}) + "/versions/" + url.PathEscape(backupID) + "/log"
}

func (u *handlers) deviceLog(w http.ResponseWriter, r *http.Request) error {
	d, b, err := u.detailVersionOf(r)
	if err != nil {
		return err
	}
	sec, err := u.SecretsFor(r, "device", d.ID, map[string]any{"page": "session log", "backup": b.ID})
	if err != nil {
		return err
	}
	p := deviceLogPage{Device: d, Backup: u.detailRow(d, b), HistoryURL: detailPath(d) + "#history", Secrets: sec}
	raw, truncated, err := u.Store.BackupLog(r.Context(), b.ID)
	switch {
	case errors.Is(err, db.ErrNotFound):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal([]byte(raw), &p.Segments); err != nil {
			return err
		}
		p.Truncated = truncated
		for i, sg := range p.Segments {
			// The kind names a CSS class: only the known ones.
			if sg.Kind != collect.SegmentSent && sg.Kind != collect.SegmentNote {
				p.Segments[i].Kind = collect.SegmentReceived
			}
			// What the device printed may be configuration.
			p.Segments[i].Text = sec.Mask(d.ID, d.Platform, sg.Text)
		}
	}
	return u.Render(w, r, http.StatusOK, "device_log.html", keyDetailLogTitle, p)
}
