package platforms

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"backupd/db"
	"backupd/db/queue"
	"backupd/web/agentapi"
	"backupd/web/ui/core"
)

// The Collectors page: the zones devices live in and the remote
// collectors that back up every zone but the server's own. An
// administrator creates a zone, makes a one-time enrolment token for a
// collector of it (shown once, on the answer to the form), sees each
// collector's version, last heartbeat and the jobs in its hands, and
// revokes one — or an enrolment token not used yet, should it have
// leaked.

// collectorOnline is how recently a collector must have called to count
// as online: its jobs' lease.
const collectorOnline = 90 * time.Second

// collectorTokenTTL is how long an enrolment token made here is valid.
const collectorTokenTTL = 24 * time.Hour

// collectorsPageData is the data of collectors.html.
type collectorsPageData struct {
	Zones      []db.Zone
	Remote     []db.Zone // the zones a collector can serve
	Collectors []collectorRow
	// Tokens are the enrolment tokens that can still enrol a collector.
	Tokens   []collectorTokenRow
	Notice   string
	ZoneName string // the create-zone form, kept when refused
	Error    string
	Args     []any
}

// collectorRow is a listed collector; State is a message key.
type collectorRow struct {
	db.Collector
	Enrolled, Seen time.Time
	State          string
	OK             bool
}

// collectorTokenRow is a listed enrolment token: never the token, only
// its ID, zone and times.
type collectorTokenRow struct {
	db.EnrolmentToken
	Created, Expires time.Time
}

var collectorNotices = map[string]string{
	"zone":          keyCollZoneCreated,
	"revoked":       keyCollRevoked,
	"token_revoked": keyCollTokenRevoked,
}

func (u *handlers) collectorsPage(w http.ResponseWriter, r *http.Request) error {
	return u.renderCollectors(w, r, http.StatusOK, collectorsPageData{Notice: core.DoneNotice(r, collectorNotices)})
}

func (u *handlers) renderCollectors(w http.ResponseWriter, r *http.Request, status int, p collectorsPageData) error {
	ctx := r.Context()
	zones, err := u.Store.ListZones(ctx)
	if err != nil {
		return err
	}
	p.Zones = zones
	for _, z := range zones {
		if z.ID != db.LocalZone {
			p.Remote = append(p.Remote, z)
		}
	}
	cs, err := u.Store.ListCollectors(ctx)
	if err != nil {
		return err
	}
	now := u.Now()
	for _, c := range cs {
		row := collectorRow{Collector: c, State: keyCollStateOffline}
		row.Enrolled, _ = db.ParseTime(c.EnrolledAt)
		if c.LastSeenAt != nil {
			row.Seen, _ = db.ParseTime(*c.LastSeenAt)
		}
		switch {
		case c.RevokedAt != nil:
			row.State = keyCollStateRevoked
		case !row.Seen.IsZero() && now.Sub(row.Seen) <= collectorOnline:
			row.State, row.OK = keyCollStateOnline, true
		}
		p.Collectors = append(p.Collectors, row)
	}
	tokens, err := u.Store.ListEnrolmentTokens(ctx, &now)
	if err != nil {
		return err
	}
	for _, t := range tokens {
		row := collectorTokenRow{EnrolmentToken: t}
		row.Created, _ = db.ParseTime(t.CreatedAt)
		row.Expires, _ = db.ParseTime(t.ExpiresAt)
		p.Tokens = append(p.Tokens, row)
	}
	return u.Render(w, r, status, "collectors.html", keyCollTitle, p)
}

func (u *handlers) createZone(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	name := core.Truncate(strings.TrimSpace(r.PostFormValue("name")), 4*core.MaxNameChars)
	fail := func(key string, args ...any) error {
		return u.renderCollectors(w, r, http.StatusUnprocessableEntity, collectorsPageData{ZoneName: name, Error: key, Args: args})
	}
	if name == "" || core.NameLength(name) > core.MaxNameChars {
		return fail(keyCollErrZoneName, core.MaxNameChars)
	}
	z, err := u.Store.CreateZone(r.Context(), name)
	if errors.Is(err, db.ErrNameExists) {
		return fail(keyCollErrZoneExists, name)
	}
	if err != nil {
		return err
	}
	u.Audit(r, "zone.create", "zone", z.ID, map[string]any{"name": z.Name})
	core.RedirectDone(w, r, core.PathCollectors, "zone")
	return nil
}

// collectorTokenPage is the data of collectors_token.html: the one answer
// that shows an enrolment token.
type collectorTokenPage struct {
	ID        int64
	Zone      string
	Token     string
	ExpiresAt time.Time
	Origin    string
}

func (u *handlers) createCollectorToken(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PostFormValue("zone_id"), 10, 64)
	if err != nil || id <= 0 || id == db.LocalZone {
		return u.renderCollectors(w, r, http.StatusUnprocessableEntity, collectorsPageData{Error: keyCollErrTokenZone})
	}
	z, err := u.Store.GetZone(r.Context(), id)
	if errors.Is(err, db.ErrNotFound) {
		return u.renderCollectors(w, r, http.StatusUnprocessableEntity, collectorsPageData{Error: keyCollErrTokenZone})
	}
	if err != nil {
		return err
	}
	token, tokenID, err := agentapi.NewEnrolmentToken(r.Context(), u.Store, z.ID, collectorTokenTTL)
	if err != nil {
		return err
	}
	// As the command line records it: the zone and the token's ID, never
	// the token.
	u.Audit(r, "collector_token.create", "zone", z.ID, map[string]any{"zone": z.Name,
		"ttl_seconds": int64(collectorTokenTTL / time.Second), "token_id": tokenID})
	return u.Render(w, r, http.StatusOK, "collectors_token.html", keyCollTitleToken, collectorTokenPage{
		ID: tokenID, Zone: z.Name, Token: token, ExpiresAt: u.Now().Add(collectorTokenTTL), Origin: core.Origin(r),
	})
}

func (u *handlers) revokeCollector(w http.ResponseWriter, r *http.Request) error {
	id, err := core.PathID(r)
	if err != nil {
		return err
	}
	c, err := u.Store.GetCollector(r.Context(), id)
	if err != nil {
		return err
	}
	if c.RevokedAt == nil {
		if err := u.Store.RevokeCollector(r.Context(), id, queue.DefaultMaxInterruptions); err != nil {
			return err
		}
		u.Audit(r, "collector.revoke", "collector", id, map[string]any{"name": c.Name, "zone": c.ZoneName})
	}
	core.RedirectDone(w, r, core.PathCollectors, "revoked")
	return nil
}

// revokeCollectorToken makes an enrolment token that has not been used
// enrol nothing from now on. One that has enrolled its collector is
// refused: revoke the collector.
func (u *handlers) revokeCollectorToken(w http.ResponseWriter, r *http.Request) error {
	id, err := core.PathID(r)
	if err != nil {
		return err
	}
	before, err := u.Store.GetEnrolmentToken(r.Context(), id)
	if err != nil {
		return err
	}
	t, err := u.Store.RevokeEnrolmentToken(r.Context(), id)
	if errors.Is(err, db.ErrTokenUsed) {
		return u.renderCollectors(w, r, http.StatusConflict, collectorsPageData{Error: keyCollErrTokenUsed, Args: []any{id}})
	}
	if err != nil {
		return err
	}
	if before.RevokedAt == nil {
		u.Audit(r, "collector_token.revoke", "collector_token", id, map[string]any{"zone": t.ZoneName})
	}
	core.RedirectDone(w, r, core.PathCollectors, "token_revoked")
	return nil
}
