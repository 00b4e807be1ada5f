package insync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"backupd/app/secret"
	"backupd/db"
)

// Fetcher is a source of records: NetBox or HTTPJSON.
type Fetcher interface {
	Fetch(ctx context.Context, opts Options) ([]Record, error)
}

var (
	_ Fetcher = NetBox{}
	_ Fetcher = HTTPJSON{}
)

// ParseConfig reads a source's Config.
func ParseConfig(raw json.RawMessage) (SourceConfig, error) {
	var cfg SourceConfig
	if len(raw) == 0 {
		raw = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("the source's settings are not what backupd reads: %v", err)
	}
	if m := cfg.Defaults.LoginMethod; m != "" && m != "ssh" && m != "telnet" {
		return cfg, fmt.Errorf("defaults: login method %s: ssh or telnet", quote(m))
	}
	for m, port := range cfg.Defaults.Port {
		if m != "ssh" && m != "telnet" || port < 1 || port > 65535 {
			return cfg, fmt.Errorf("defaults: port %s %d: a port 1 to 65535 for ssh or telnet", quote(m), port)
		}
	}
	return cfg, nil
}

// Fetcher builds the source's fetcher from its kind, its settings and
// its token (unsealed).
func (cfg SourceConfig) Fetcher(kind, token string) (Fetcher, error) {
	switch kind {
	case db.InventoryNetBox:
		n := cfg.NetBox
		if n == nil || cfg.HTTP != nil {
			return nil, errors.New(`a NetBox source's settings hold "netbox" and no "http"`)
		}
		nb := NetBox{URL: n.URL, Token: token, Site: n.Site, Role: n.Role, Tag: n.Tag, Status: n.Status, Query: n.Query,
			HostFrom: n.HostFrom, PlatformFrom: n.PlatformFrom, GroupFrom: n.GroupFrom, CredentialFrom: n.CredentialFrom,
			TemplateFrom: n.TemplateFrom, CAFile: n.CAFile, PageSize: n.PageSize}
		return nb, nb.Validate()
	case db.InventoryHTTP:
		h := cfg.HTTP
		if h == nil || cfg.NetBox != nil {
			return nil, errors.New(`an HTTP JSON source's settings hold "http" and no "netbox"`)
		}
		if h.Preset == "librenms" {
			if token == "" {
				return nil, errors.New("token: LibreNMS needs an API token")
			}
			lib := LibreNMS(h.URL, token)
			lib.CAFile = h.CAFile
			return lib, lib.Validate()
		} else if h.Preset != "" {
			return nil, fmt.Errorf("preset %s: librenms or none", quote(h.Preset))
		}
		hj := HTTPJSON{URL: h.URL, HostsLocation: h.HostsLocation, Map: h.Map, VarsMap: h.VarsMap, CAFile: h.CAFile,
			Pagination: Pagination{Kind: h.Pagination.Kind, NextPath: h.Pagination.NextPath, PageParam: h.Pagination.PageParam,
				Start: h.Pagination.Start}}
		hj.Headers = map[string]string{}
		for k, v := range h.Headers {
			hj.Headers[k] = v
		}
		switch {
		case h.TokenHeader != "" && token != "":
			hj.Headers[h.TokenHeader] = h.TokenPrefix + token
		case token != "":
			return nil, errors.New("token: the source has a token but no token header to send it in")
		}
		return hj, hj.Validate()
	}
	return nil, fmt.Errorf("kind %s: netbox or http", quote(kind))
}

// Syncer runs syncs of inventory sources.
type Syncer struct {
	Store  *db.Store
	Sealer *secret.Sealer
	// Options are the fetch's limits and outbound policy.
	Options Options
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Sync syncs source sourceID with the default fetch options.
func Sync(ctx context.Context, store *db.Store, sealer *secret.Sealer, sourceID int64, dryRun bool, by db.AuditEntry) (Report, error) {
	return Syncer{Store: store, Sealer: sealer}.Sync(ctx, sourceID, dryRun, by)
}

// Sync fetches the source, plans and, unless dryRun, applies the plan in
// one transaction, audited as by. A dry run and a real run are the same
// path up to the apply: a dry run's report is what the real run does,
// unless the store moves in between. A fetch that fails changes no
// device: a real run records the failure on the source and returns the
// error, its sentence also the report's Error.
func (s Syncer) Sync(ctx context.Context, sourceID int64, dryRun bool, by db.AuditEntry) (Report, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	src, err := s.Store.InventorySource(ctx, sourceID)
	if err != nil {
		return Report{DryRun: dryRun}, err
	}
	rep := Report{Source: src.Name, DryRun: dryRun}
	fail := func(err error) (Report, error) {
		rep.Error = err.Error()
		if !dryRun {
			if rerr := s.Store.RecordInventorySyncFailure(ctx, sourceID, now(), rep.Error); rerr != nil {
				return rep, errors.Join(err, rerr)
			}
		}
		return rep, err
	}
	cfg, err := ParseConfig(src.Config)
	if err != nil {
		return fail(err)
	}
	var token string
	if len(src.Token) > 0 {
		if token, err = s.Sealer.Open(src.Token, secret.PurposeInventoryToken); err != nil {
			return fail(errors.New("the source's token cannot be opened (was secret.key replaced?): enter the token again"))
		}
	}
	f, err := cfg.Fetcher(src.Kind, token)
	if err != nil {
		return fail(err)
	}
	records, err := f.Fetch(ctx, s.Options)
	if err != nil {
		return fail(err)
	}
	// A plan that no longer fits the store when it is applied (a person
	// made a device with a name the plan creates) rolls back; one more
	// plan from the store as it is then settles it.
	for attempt := 0; ; attempt++ {
		st, err := s.state(ctx, sourceID)
		if err != nil {
			return rep, err
		}
		plan, changes := Plan(src, cfg, records, st)
		plan.DryRun = dryRun
		if dryRun {
			return plan, nil
		}
		res, err := s.Store.ApplyInventorySync(ctx, sourceID, db.InventorySync{Changes: changes, At: now(), By: by, Counts: planCounts(plan)})
		var ce *db.InventoryChangeError
		if errors.As(err, &ce) && attempt == 0 {
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("the sync's changes were refused and nothing was written: %w", err))
		}
		mergeResult(&plan, changes, res)
		return plan, nil
	}
}

// state reads what Plan compares the source with.
func (s Syncer) state(ctx context.Context, sourceID int64) (State, error) {
	var st State
	var err error
	if st.Synced, err = s.Store.SyncedDevices(ctx, sourceID); err != nil {
		return st, err
	}
	if st.View, err = s.Store.InventoryView(ctx); err != nil {
		return st, err
	}
	srcs, err := s.Store.InventorySources(ctx)
	if err != nil {
		return st, err
	}
	st.SourceNames = map[int64]string{}
	for _, o := range srcs {
		st.SourceNames[o.ID] = o.Name
	}
	return st, nil
}

// planCounts are the plan's own figures kept beside the store's.
func planCounts(r Report) map[string]int {
	c := r.Counts()
	return map[string]int{"unchanged": c[string(ActLeave)], "unmapped": c[string(ActSkip)]}
}

// mergeResult brings the store's result into the plan's report: a
// create line gets its new device's id, and the lines of the changes the
// store skipped turn into "leave" lines saying why.
func mergeResult(r *Report, changes []db.InventoryChange, res db.InventorySyncResult) {
	line := func(c db.InventoryChange) *Line {
		for i := range r.Lines {
			if l := &r.Lines[i]; l.Key == c.Key && string(l.Action) == string(c.Kind) {
				return l
			}
		}
		return nil
	}
	// The store never skips a create: its ids are the creates' in order.
	created := res.CreatedIDs
	for _, c := range changes {
		if c.Kind != db.InventoryCreate || len(created) == 0 {
			continue
		}
		if l := line(c); l != nil {
			l.DeviceID = created[0]
		}
		created = created[1:]
	}
	for _, sk := range res.Skipped {
		if l := line(changes[sk.Index]); l != nil {
			l.Action, l.Fields, l.Reason = ActLeave, nil, why(skipWhy[sk.Reason])
		}
	}
}
