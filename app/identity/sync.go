package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"backupd/app/identity/ldapdir"
	"backupd/app/metrics"
	"backupd/app/secret"
	"backupd/db"
)

// DefaultSyncInterval is how often directory users are read again when
// the settings do not say.
const DefaultSyncInterval = 15 * time.Minute

// maxDisableShare guards against a configuration mistake: a sync that
// would disable more than this share of the active directory users (and
// more than maxDisableFloor of them) changes nothing and fails instead.
// A base DN typed wrong finds nobody; it must not sign everyone out.
const (
	maxDisableShare = 0.5
	maxDisableFloor = 2
)

// SyncReport says what one directory sync did.
type SyncReport struct {
	// Checked users were looked up in the directory.
	Checked int
	// Changed users got other roles or scope.
	Changed int
	// Disabled users lost their sessions and keys.
	Disabled int
}

// ErrTooManyGone is a sync that would have disabled too many users.
var ErrTooManyGone = errors.New("the directory no longer has most of its users")

// Syncer reads the LDAP directory's users again: roles and scope follow
// their groups, and a user the directory no longer has (deleted, disabled
// by the AD preset's filter, or out of every mapped group) is disabled,
// its sessions ended and API keys revoked, with an audit entry. A
// directory that does not answer changes nothing.
type Syncer struct {
	Store  *db.Store
	Sealer *secret.Sealer
	Log    *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Sync runs once. With LDAP sign-in turned off, every active LDAP user is
// disabled: nobody vouches for them any more.
func (s *Syncer) Sync(ctx context.Context) (rep SyncReport, err error) {
	defer func() { metrics.DirectorySync(err == nil, rep.Disabled) }()
	set, err := s.Store.LDAPConfig(ctx)
	if err != nil {
		return rep, err
	}
	users, err := s.Store.DirectoryUsers(ctx, db.UserLDAP)
	if err != nil {
		return rep, err
	}
	var active []db.User
	for _, u := range users {
		if u.Active {
			active = append(active, u)
		}
	}
	if !set.Enabled {
		for _, u := range active {
			if err := s.disable(ctx, u, "ldap_turned_off", &rep); err != nil {
				return rep, err
			}
		}
		return rep, nil
	}
	dir, err := OpenLDAP(set, s.Sealer)
	if err != nil {
		return rep, err
	}
	// First ask about everyone, then change: a directory that stops
	// answering half-way changes nothing.
	type verdict struct {
		user  db.User
		entry ldapdir.Entry
		gone  bool
	}
	verdicts := make([]verdict, 0, len(active))
	gone := 0
	for _, u := range active {
		e, err := dir.Lookup(ctx, u.Username)
		switch {
		case errors.Is(err, ldapdir.ErrNoSuchUser):
			verdicts = append(verdicts, verdict{user: u, gone: true})
			gone++
		case err != nil:
			return rep, fmt.Errorf("look up %s in the directory: %w", u.Username, err)
		default:
			a := Resolve(set.Mappings, e.GroupKeys())
			if len(a.RoleIDs) == 0 {
				gone++
			}
			verdicts = append(verdicts, verdict{user: u, entry: e, gone: len(a.RoleIDs) == 0})
		}
		rep.Checked++
	}
	if gone > maxDisableFloor && float64(gone) > maxDisableShare*float64(len(active)) {
		return rep, fmt.Errorf("%w: %d of %d would be disabled; nothing was changed — check the base DN and user filter",
			ErrTooManyGone, gone, len(active))
	}
	for _, v := range verdicts {
		if v.gone {
			reason := "not_in_directory"
			if v.entry.DN != "" {
				reason = "no_mapped_group"
			}
			if err := s.disable(ctx, v.user, reason, &rep); err != nil {
				return rep, err
			}
			continue
		}
		u, a, ch, err := Provision(ctx, s.Store, Identity{Source: db.UserLDAP, ExternalID: v.entry.DN,
			Username: v.user.Username, Groups: v.entry.GroupKeys()}, set.Mappings)
		if err != nil {
			return rep, fmt.Errorf("bring %s in step: %w", v.user.Username, err)
		}
		if ch.Changed {
			rep.Changed++
			s.audit(ctx, "user.directory_sync", u, map[string]any{"source": db.UserLDAP, "roles": u.Roles,
				"all_groups": u.AllGroups, "group_ids": u.GroupIDs, "groups": a.Matched})
		}
	}
	return rep, nil
}

// disable takes a user's access away and says so in the audit log.
func (s *Syncer) disable(ctx context.Context, u db.User, reason string, rep *SyncReport) error {
	r, err := s.Store.DisableDirectoryUser(ctx, u.ID)
	if err != nil {
		return err
	}
	rep.Disabled++
	s.audit(ctx, "user.directory_disabled", u, map[string]any{"source": u.Source, "reason": reason,
		"sessions_ended": r.Sessions, "keys_revoked": r.Keys})
	s.Log.Info("directory user disabled", "user", u.Username, "reason", reason, "sessions_ended", r.Sessions, "keys_revoked", r.Keys)
	return nil
}

func (s *Syncer) audit(ctx context.Context, action string, u db.User, details map[string]any) {
	uid := u.ID
	if err := s.Store.RecordAudit(ctx, db.AuditEntry{
		UserID: &uid, Username: u.Username, Interface: AuditInterface, Action: action,
		TargetType: "user", TargetID: fmt.Sprint(u.ID), Details: details,
	}); err != nil {
		s.Log.Warn("writing the audit log failed", "action", action, "err", err)
	}
}

// AuditInterface names the directory sync in the audit log: it acts on
// its own, neither through the web, the API nor the CLI.
const AuditInterface = "system"

// Run syncs every SyncInterval (DefaultSyncInterval when unset) until ctx
// ends, reading the interval afresh each time.
func (s *Syncer) Run(ctx context.Context) {
	for {
		wait := DefaultSyncInterval
		if set, err := s.Store.LDAPConfig(ctx); err == nil && set.SyncInterval > 0 {
			wait = time.Duration(set.SyncInterval)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		rep, err := s.Sync(ctx)
		if err != nil && ctx.Err() == nil {
			s.Log.Warn("directory sync failed; nothing was changed by the failed step, it runs again at its next turn", "err", err)
		} else if rep.Changed+rep.Disabled > 0 {
			s.Log.Info("directory sync", "checked", rep.Checked, "changed", rep.Changed, "disabled", rep.Disabled)
		}
	}
}

// OpenLDAP is the directory the settings describe, with the service
// account's password opened.
func OpenLDAP(set db.LDAPSettings, sealer *secret.Sealer) (*ldapdir.Directory, error) {
	pw := ""
	if len(set.BindPassword) > 0 {
		var err error
		if pw, err = sealer.Open(set.BindPassword, db.LDAPBindPurpose); err != nil {
			return nil, fmt.Errorf("open the service account's password: %w", err)
		}
	}
	return ldapdir.New(set, pw)
}
