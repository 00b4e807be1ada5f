package ui

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"backupd/db"
	"backupd/web/agentapi"
)

// The Collectors page: the zones devices live in and the remote
// collectors that back up every zone but the server's own. An
// administrator creates a zone, makes a one-time enrolment token for a
// collector of it (shown once, on the answer to the form), sees each
// collector's version, last heartbeat and the jobs in its hands, and
// revokes one — or an enrolment token not used yet, should it have
// leaked.

const pathCollectors = "/collectors"

// collectorOnline is how recently a collector must have called to count
// as online: its jobs' lease.
const collectorOnline = 90 * time.Second

// collectorTokenTTL is how long an enrolment token made here is valid.
const collectorTokenTTL = 24 * time.Hour

func (u *UI) mountCollectors(mux *http.ServeMux) {
	u.mountPage(mux, "GET "+pathCollectors, "settings.view", u.collectorsPage)
	mux.Handle("POST /collectors/zones", u.page("settings.update", u.createZone))
	mux.Handle("POST /collectors/tokens", u.page("settings.update", u.createCollectorToken))
	mux.Handle("POST /collectors/{id}/revoke", u.page("settings.update", u.revokeCollector))
	mux.Handle("POST /collectors/tokens/{id}/revoke", u.page("settings.update", u.revokeCollectorToken))
}

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

func (u *UI) collectorsPage(w http.ResponseWriter, r *http.Request) error {
	return u.renderCollectors(w, r, http.StatusOK, collectorsPageData{Notice: noticeOf(r, collectorNotices)})
}

func (u *UI) renderCollectors(w http.ResponseWriter, r *http.Request, status int, p collectorsPageData) error {
	ctx := r.Context()
	zones, err := u.deps.Store.ListZones(ctx)
	if err != nil {
		return err
	}
	p.Zones = zones
	for _, z := range zones {
		if z.ID != db.LocalZone {
			p.Remote = append(p.Remote, z)
		}
	}
	cs, err := u.deps.Store.ListCollectors(ctx)
	if err != nil {
		return err
	}
	now := u.now()
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
	tokens, err := u.deps.Store.ListEnrolmentTokens(ctx, &now)
	if err != nil {
		return err
	}
	for _, t := range tokens {
		row := collectorTokenRow{EnrolmentToken: t}
		row.Created, _ = db.ParseTime(t.CreatedAt)
		row.Expires, _ = db.ParseTime(t.ExpiresAt)
		p.Tokens = append(p.Tokens, row)
	}
	return u.render(w, r, status, "collectors.html", keyCollTitle, p)
}

func (u *UI) createZone(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	name := truncate(strings.TrimSpace(r.PostFormValue("name")), 4*maxNameChars)
	fail := func(key string, args ...any) error {
		return u.renderCollectors(w, r, http.StatusUnprocessableEntity, collectorsPageData{ZoneName: name, Error: key, Args: args})
	}
	if name == "" || nameLength(name) > maxNameChars {
		return fail(keyCollErrZoneName, maxNameChars)
	}
	z, err := u.deps.Store.CreateZone(r.Context(), name)
	if errors.Is(err, db.ErrNameExists) {
		return fail(keyCollErrZoneExists, name)
	}
	if err != nil {
		return err
	}
	u.auditAdmin(r, "zone.create", "zone", z.ID, map[string]any{"name": z.Name})
	redirectDone(w, r, pathCollectors, "zone")
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

func (u *UI) createCollectorToken(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PostFormValue("zone_id"), 10, 64)
	if err != nil || id <= 0 || id == db.LocalZone {
		return u.renderCollectors(w, r, http.StatusUnprocessableEntity, collectorsPageData{Error: keyCollErrTokenZone})
	}
	z, err := u.deps.Store.GetZone(r.Context(), id)
	if errors.Is(err, db.ErrNotFound) {
		return u.renderCollectors(w, r, http.StatusUnprocessableEntity, collectorsPageData{Error: keyCollErrTokenZone})
	}
	if err != nil {
		return err
	}
	token, tokenID, err := agentapi.NewEnrolmentToken(r.Context(), u.deps.Store, z.ID, collectorTokenTTL)
	if err != nil {
		return err
	}
	// As the command line records it: the zone and the token's ID, never
	// the token.
	u.auditAdmin(r, "collector_token.create", "zone", z.ID, map[string]any{"zone": z.Name,
		"ttl_seconds": int64(collectorTokenTTL / time.Second), "token_id": tokenID})
	return u.render(w, r, http.StatusOK, "collectors_token.html", keyCollTitleToken, collectorTokenPage{
		ID: tokenID, Zone: z.Name, Token: token, ExpiresAt: u.now().Add(collectorTokenTTL), Origin: origin(r),
	})
}

func (u *UI) revokeCollector(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	c, err := u.deps.Store.GetCollector(r.Context(), id)
	if err != nil {
		return err
	}
	if c.RevokedAt == nil {
		if err := u.deps.Store.RevokeCollector(r.Context(), id, db.DefaultMaxInterruptions); err != nil {
			return err
		}
		u.auditAdmin(r, "collector.revoke", "collector", id, map[string]any{"name": c.Name, "zone": c.ZoneName})
	}
	redirectDone(w, r, pathCollectors, "revoked")
	return nil
}

// revokeCollectorToken makes an enrolment token that has not been used
// enrol nothing from now on. One that has enrolled its collector is
// refused: revoke the collector.
func (u *UI) revokeCollectorToken(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	before, err := u.deps.Store.GetEnrolmentToken(r.Context(), id)
	if err != nil {
		return err
	}
	t, err := u.deps.Store.RevokeEnrolmentToken(r.Context(), id)
	if errors.Is(err, db.ErrTokenUsed) {
		return u.renderCollectors(w, r, http.StatusConflict, collectorsPageData{Error: keyCollErrTokenUsed, Args: []any{id}})
	}
	if err != nil {
		return err
	}
	if before.RevokedAt == nil {
		u.auditAdmin(r, "collector_token.revoke", "collector_token", id, map[string]any{"zone": t.ZoneName})
	}
	redirectDone(w, r, pathCollectors, "token_revoked")
	return nil
}
