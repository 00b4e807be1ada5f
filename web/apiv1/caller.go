package apiv1

import (
	"context"
	"fmt"
	"sort"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web"
)

// caller is who made the request and from where.
type caller struct {
	*auth.Principal
	remote string
}

func callerFrom(ctx context.Context) caller {
	c, _ := ctx.Value(principalKey).(caller)
	return c
}

// scope is the caller's device-group scope for the store.
func scopeOf(ctx context.Context) db.Scope {
	c := callerFrom(ctx)
	if c.Principal == nil {
		return db.Scope{}
	}
	return db.Scope{All: c.AllGroups, GroupIDs: c.GroupIDs}
}

// audit records a change made through the API. A failure to record is
// logged, never shown to the caller: the change itself has happened.
func (a *API) audit(ctx context.Context, action, targetType string, targetID any, details map[string]any) {
	c := callerFrom(ctx)
	e := db.AuditEntry{
		Interface: "api", Action: action, TargetType: targetType, TargetID: fmt.Sprint(targetID),
		RequestID: web.RequestID(ctx), RemoteAddr: c.remote, Details: details,
	}
	if c.Principal != nil {
		uid, kid := c.UserID, c.KeyID
		e.UserID, e.KeyID, e.Username = &uid, &kid, c.Username
	}
	if err := a.deps.Store.RecordAudit(ctx, e); err != nil {
		a.deps.Log.Error("audit record failed", "request_id", e.RequestID, "action", action, "err", err)
	}
}

// sentFields names the top-level keys of the request body, sorted: what an
// update touched, without any value (values may be secrets).
func sentFields(ctx context.Context) []string {
	keys := []string{}
	for k := range sentKeys(ctx) {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
