package core

import (
	"net/http"
	"strconv"

	"backupd/app/restore"
	"backupd/db"
	"backupd/web"
)

// AuditEntry completes e with the interface, request id and address, and
// records it. A failure is logged: what happened has happened.
func (u *UI) AuditEntry(r *http.Request, e db.AuditEntry) {
	e.Interface = "web"
	e.RequestID = web.RequestID(r.Context())
	e.RemoteAddr = ClientIP(r)
	if err := u.Store.RecordAudit(r.Context(), e); err != nil {
		u.Log.Error("audit record failed", "request_id", e.RequestID, "action", e.Action, "err", err)
	}
}

// Audit records a change the signed-in user made to targetType
// targetID. details name what changed, never a secret.
func (u *UI) Audit(r *http.Request, action, targetType string, targetID int64, details map[string]any) {
	u.AuditAs(r, action, targetType, IDString(targetID), details)
}

// AuditAs is Audit for a target named by a string (a platform's ID, a
// setting's name); "" names none.
func (u *UI) AuditAs(r *http.Request, action, targetType, targetID string, details map[string]any) {
	s := SessionOf(r)
	uid := s.UserID
	u.AuditEntry(r, db.AuditEntry{
		UserID: &uid, Username: s.Username, SessionID: s.AuditRef(), Action: action,
		TargetType: targetType, TargetID: targetID, Details: details,
	})
}

// AuditOf is the entry of action by the request's user, filled in as
// Audit fills it, for an app service that records it in the transaction
// of the change (target and device set there).
func (u *UI) AuditOf(r *http.Request, action string, details map[string]any) *db.AuditEntry {
	s := SessionOf(r)
	if s == nil {
		return nil
	}
	uid := s.UserID
	return &db.AuditEntry{
		UserID: &uid, Username: s.Username, SessionID: s.AuditRef(), Action: action, Details: details,
		Interface: "web", RequestID: web.RequestID(r.Context()), RemoteAddr: ClientIP(r),
	}
}

// RestoreActor is the request's user as app/restore records and audits
// it: the one who asks for a restore or a change set, or decides one.
func (u *UI) RestoreActor(r *http.Request) restore.Actor {
	s := SessionOf(r)
	uid := s.UserID
	return restore.Actor{UserID: &uid, Name: s.Username,
		Audit: func(action string, details map[string]any) *db.AuditEntry { return u.AuditOf(r, action, details) }}
}

// IDString is an id as the audit log's target: "" for none (0).
func IDString(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}
