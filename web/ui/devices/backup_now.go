package devices

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"backupd/db"
	"backupd/db/queue"
	"backupd/web/ui/core"
)

// devicesBackup queues a backup now of the devices named by "id"
// (repeatable; disabled devices too, as asked) or of every enabled device
// of the group "group_id" and its subgroups, in one call, then goes back
// to "next" (a page of this site; the active jobs by default) with the
// count. Every device must be in the user's scope, or nothing is queued.
func (u *handlers) devicesBackup(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	if u.Engine == nil {
		return &core.PageError{Status: http.StatusServiceUnavailable, Message: keyDevicesErrNoEngine}
	}
	if err := r.ParseForm(); err != nil {
		return err
	}
	next := core.LocalPath(r.PostFormValue("next"), devicesJobsActive)
	var ids []int64
	details := map[string]any{"trigger": queue.TriggerManual}
	target, targetID := "device", ""
	if raw := r.PostFormValue("group_id"); raw != "" {
		gid, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || gid < 1 {
			return &core.PageError{Status: http.StatusUnprocessableEntity, Message: keyDevicesErrBackupNone}
		}
		if _, err := u.Store.GetGroup(ctx, gid); err != nil {
			return err
		}
		if ok, err := u.Store.GroupInScope(ctx, s.Scope(), gid); err != nil {
			return err
		} else if !ok {
			return core.Forbidden()
		}
		enabled := true
		if ids, err = u.Store.DeviceIDsMatching(ctx, s.Scope(), db.DeviceFilter{GroupID: &gid, Enabled: &enabled}); err != nil {
			return err
		}
		target, targetID = "group", core.IDString(gid)
		details["group_id"] = gid
	} else {
		var err error
		if ids, err = devicesFormIDs(r.PostForm["id"]); err != nil {
			return err
		}
		missing, outside, err := u.Store.DeviceIDsOutside(ctx, s.Scope(), ids)
		switch {
		case err != nil:
			return err
		case len(missing) > 0:
			return db.ErrNotFound
		case len(outside) > 0:
			return core.Forbidden()
		}
		if len(ids) == 1 {
			targetID = core.IDString(ids[0])
		} else {
			details["device_ids"] = ids
		}
	}
	var since int64
	if len(ids) > 0 {
		jobIDs, err := u.Engine.Enqueue(ctx, ids, queue.TriggerManual)
		if err != nil {
			return err
		}
		// The jobs page's progress bar follows this batch from its first
		// job on.
		for _, id := range jobIDs {
			if id != 0 && (since == 0 || id < since) {
				since = id
			}
		}
		details["count"] = len(ids)
		u.AuditAs(r, "backup.run", target, targetID, details)
	}
	next = devicesWithQuery(next, "queued", strconv.Itoa(len(ids)))
	if since > 0 && strings.HasPrefix(next, core.PathJobs) {
		next = devicesWithQuery(next, "since", strconv.FormatInt(since, 10))
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// devicesFormIDs reads the selected device ids: at least one, at most
// devicesMaxSelection, duplicates dropped.
func devicesFormIDs(raw []string) ([]int64, error) {
	if len(raw) == 0 {
		return nil, &core.PageError{Status: http.StatusUnprocessableEntity, Message: keyDevicesErrBackupNone}
	}
	if len(raw) > devicesMaxSelection {
		return nil, &core.PageError{Status: http.StatusRequestEntityTooLarge, Message: keyDevicesErrBackupTooMany, Args: []any{devicesMaxSelection}}
	}
	ids := make([]int64, 0, len(raw))
	for _, v := range raw {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 1 {
			return nil, db.ErrNotFound
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// devicesWithQuery sets one query parameter on a local path.
func devicesWithQuery(path, key, value string) string {
	p, err := url.Parse(path)
	if err != nil {
		return path
	}
	q := p.Query()
	q.Set(key, value)
	p.RawQuery = q.Encode()
	return p.String()
}
