package admin

import (
	"net/http"
	"strconv"
	"strings"

	"backupd/app/restore"
	"backupd/web/ui/core"
)

// settingsRestore is the restores section: whether four eyes are
// required (the person who asked for a restore cannot approve it), and
// how long a request waits for approval and an approved restore for its
// device, before each expires.
type settingsRestore struct {
	FourEyes                    bool
	PendingHours, ApprovedHours string
	MinHours, MaxHours          int
	Errors                      core.FormErrors
}

// fillRestore sets the section from the stored settings unless typed.
func (u *handlers) fillRestore(r *http.Request, s *settingsRestore, typed bool) error {
	s.MinHours, s.MaxHours = restore.MinHours, restore.MaxHours
	if typed {
		return nil
	}
	set, err := restore.LoadSettings(r.Context(), u.Store)
	if err != nil {
		return err
	}
	s.FourEyes = set.FourEyes
	s.PendingHours, s.ApprovedHours = strconv.Itoa(set.PendingHours), strconv.Itoa(set.ApprovedHours)
	return nil
}

// saveRestore stores the restore settings; app/restore reads them at
// each request and decision, so they apply at once (a request already
// waiting keeps the expiry it was given).
func (u *handlers) saveRestore(w http.ResponseWriter, r *http.Request) error {
	sec := settingsRestore{
		FourEyes:      core.Checked(r, "four_eyes"),
		PendingHours:  strings.TrimSpace(r.PostFormValue("pending_hours")),
		ApprovedHours: strings.TrimSpace(r.PostFormValue("approved_hours")),
	}
	hours := func(field, raw, key string) int {
		n, err := strconv.Atoi(raw)
		if err != nil || n < restore.MinHours || n > restore.MaxHours {
			sec.Errors.Add(field, key, restore.MinHours, restore.MaxHours)
		}
		return n
	}
	set := restore.Settings{
		FourEyes:      sec.FourEyes,
		PendingHours:  hours("pending_hours", sec.PendingHours, keyRestorePendingHours),
		ApprovedHours: hours("approved_hours", sec.ApprovedHours, keyRestoreApprovedHours),
	}
	if !sec.Errors.Empty() {
		return u.renderSettings(w, r, http.StatusUnprocessableEntity, settingsPage{Restore: sec, restoreTyped: true})
	}
	if err := restore.SaveSettings(r.Context(), u.Store, set); err != nil {
		return err
	}
	u.AuditAs(r, "settings.update", "settings", restore.SettingKey, map[string]any{
		"four_eyes": set.FourEyes, "pending_hours": set.PendingHours, "approved_hours": set.ApprovedHours})
	http.Redirect(w, r, "/settings?done=restore_saved#restore", http.StatusSeeOther)
	return nil
}
