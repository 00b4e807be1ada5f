package admin

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"backupd/app/insync"
	"backupd/app/netguard"
	"backupd/app/secret"
	"backupd/db"
	"backupd/web/ui/core"
)

// The inventory sources page: the sources of truth the device list
// follows (NetBox, an HTTP JSON inventory, LibreNMS, a pasted Oxidized
// source), their last sync, a dry run and a sync on demand. A sync
// creates, updates and disables devices, so changing a source or running
// it needs devices.create and devices.update, and every device group,
// besides settings.update. The token is write-only: no page shows it,
// and a source's address cannot be moved to another host without typing
// the token again, so that whoever may edit the settings cannot have a
// stored NetBox token sent to a server of theirs.

// pathInventorySources is the inventory sources page.
const pathInventorySources = core.PathInventorySources

// inventorySyncTimeout bounds a dry run or a sync run within the request
// (the server's write timeout is 5 minutes); the fetch has its own
// timeout below it.
const inventorySyncTimeout = 2 * time.Minute

// Bounds of the form's free text.
const (
	maxInventoryURLChars  = 2000
	maxInventoryTextChars = 16 << 10
	maxInventoryToken     = 4096
)

// The kinds the form offers: the stored kind is netbox or http; LibreNMS
// is an http preset and an Oxidized paste becomes an http source.
const (
	formKindNetBox   = "netbox"
	formKindHTTP     = "http"
	formKindLibreNMS = "librenms"
	formKindOxidized = "oxidized"
)

// inventoryRow is one source in the list: never its token.
type inventoryRow struct {
	ID              int64
	Name, Kind      string
	IntervalMinutes int
	Enabled         bool
	HasToken        bool
	// LastSync is when its last sync ended as the interface shows times
	// ("" never), LastSyncISO the same for a <time datetime>.
	LastSync, LastSyncISO string
	// NextSync is when the scheduler syncs it next, NextSyncISO the same
	// for a <time datetime>; NextKey says instead why no time shows
	// (disabled, on demand only, due at the next look).
	NextSync, NextSyncISO, NextKey string
	Status                         string
	KindKey                        string
	StatusKey                      string
	Counts                         []inventoryCount
	LastError                      string
	// LastGoodKey labels, for a failing source, when its last sync that
	// applied ended (LastGood, LastGoodISO as LastSync) or that none did:
	// since when its devices have not followed it. "" for a source not
	// failing.
	LastGoodKey, LastGood, LastGoodISO string
}

// inventoryCount is one figure of a report or a last sync, with its
// name's message key.
type inventoryCount struct {
	Action, Key string
	N           int
}

// inventoryLine is a report line with its action's message key, and its
// reason as messages said one after the other.
type inventoryLine struct {
	insync.Line
	ActionKey string
	Why       []inventoryWhy
}

// inventoryListPage is the data of settings_inventory.html.
type inventoryListPage struct {
	Sources []inventoryRow
	CanEdit bool
	Notice  string
	// MissingPerms says what a viewer lacks to change sources.
	MissingPerms string
}

// inventoryReportPage is the data of settings_inventory_report.html.
type inventoryReportPage struct {
	SourceID int64
	Source   string
	DryRun   bool
	Error    string
	// Refused is why the run did not start (a message key).
	Refused string
	Lines   []inventoryLine
	Counts  []inventoryCount
	Minutes int
}

// canEditInventory reports whether the user may change and run sources,
// and what they lack if not.
func canEditInventory(s *core.Session) (bool, string) {
	var missing []string
	for _, p := range []string{"settings.update", "devices.create", "devices.update"} {
		if !s.Can(p) {
			missing = append(missing, p)
		}
	}
	if !s.Scope().All {
		missing = append(missing, "all device groups")
	}
	return len(missing) == 0, strings.Join(missing, ", ")
}

// editGate refuses a change of sources to a user who may not make one.
func editGate(r *http.Request) error {
	if ok, _ := canEditInventory(core.SessionOf(r)); !ok {
		return core.Forbidden()
	}
	return nil
}

func (u *handlers) inventorySources(w http.ResponseWriter, r *http.Request) error {
	srcs, err := u.Store.InventorySources(r.Context())
	if err != nil {
		return err
	}
	p := inventoryListPage{Sources: []inventoryRow{}}
	p.CanEdit, p.MissingPerms = canEditInventory(core.SessionOf(r))
	p.Notice = core.DoneNotice(r, map[string]string{"added": keyInsyncNoticeAdded, "saved": keyInsyncNoticeSaved, "deleted": keyInsyncNoticeDeleted})
	for _, s := range srcs {
		row := inventoryRow{ID: s.ID, Name: s.Name, Kind: s.Kind, IntervalMinutes: s.IntervalMinutes, Enabled: s.Enabled,
			HasToken: len(s.Token) > 0, Status: s.LastStatus, LastError: s.LastError}
		if row.Status == "" {
			row.Status = "never"
		}
		row.LastSync, row.LastSyncISO = u.StoredTimeText(s.LastSyncAt), core.StoredISO(s.LastSyncAt)
		row.NextSync, row.NextSyncISO, row.NextKey = u.nextSync(s)
		if s.LastStatus == db.InventorySyncFailed {
			row.LastGood, row.LastGoodISO = u.StoredTimeText(s.LastGoodSyncAt), core.StoredISO(s.LastGoodSyncAt)
			row.LastGoodKey = keyInsyncLastGood
			if row.LastGood == "" {
				row.LastGoodKey = keyInsyncLastGoodNever
			}
		}
		var counts map[string]int
		_ = json.Unmarshal(s.LastCounts, &counts)
		for k, n := range counts {
			if n == 0 {
				delete(counts, k)
			}
		}
		row.Counts = sortedCounts(counts)
		if s.Kind == db.InventoryHTTP {
			if cfg, err := insync.ParseConfig(s.Config); err == nil && cfg.HTTP != nil && cfg.HTTP.Preset == "librenms" {
				row.Kind = formKindLibreNMS
			}
		}
		row.KindKey, row.StatusKey = insyncKindKeys[row.Kind], insyncStatusKeys[row.Status]
		p.Sources = append(p.Sources, row)
	}
	return u.Render(w, r, http.StatusOK, "settings_inventory.html", keyInsyncTitle, p)
}

// nextSync is when the scheduler syncs s next, as the interface shows
// times and for a <time datetime>, or the message key of why no time
// shows: a disabled source is not synced, one with no interval only on
// demand, and one never synced or overdue at the scheduler's next look.
// A last sync that does not read shows no time and no key.
func (u *handlers) nextSync(s db.InventorySource) (text, iso, key string) {
	switch {
	case !s.Enabled:
		return "", "", keyInsyncNextDisabled
	case !insync.Scheduled(s):
		return "", "", keyInsyncNextOnDemand
	}
	at, err := insync.NextSync(s)
	switch {
	case err != nil:
		return "", "", ""
	case !at.After(u.Now()):
		return "", "", keyInsyncNextDue
	}
	return u.TimeText(at), at.UTC().Format(time.RFC3339), ""
}

func sortedCounts(c map[string]int) []inventoryCount {
	out := []inventoryCount{}
	for _, k := range slices.Sorted(maps.Keys(c)) {
		key := insyncActionKeys[k]
		if key == "" {
			continue // a figure this page does not know
		}
		out = append(out, inventoryCount{Action: k, Key: key, N: c[k]})
	}
	return out
}

func (u *handlers) newInventorySource(w http.ResponseWriter, r *http.Request) error {
	if err := editGate(r); err != nil {
		return err
	}
	f := inventoryForm{Kind: askedKind(r, formKindNetBox), Enabled: true, Interval: strconv.Itoa(db.DefaultInventoryInterval),
		NBStatus: "active", HTTPPagination: insync.PageNone, LoginMethod: "ssh"}
	return u.Render(w, r, http.StatusOK, "settings_inventory_form.html", keyInsyncAddTitle, f)
}

func (u *handlers) editInventorySource(w http.ResponseWriter, r *http.Request) error {
	src, err := u.gatedSource(r)
	if err != nil {
		return err
	}
	f := formOfSource(src)
	f.Kind = askedKind(r, f.Kind)
	return u.Render(w, r, http.StatusOK, "settings_inventory_form.html", keyInsyncEditTitle, f)
}

// gatedSource is the source the request's path names, for a user who
// may change sources.
func (u *handlers) gatedSource(r *http.Request) (db.InventorySource, error) {
	if err := editGate(r); err != nil {
		return db.InventorySource{}, err
	}
	id, err := core.PathID(r)
	if err != nil {
		return db.InventorySource{}, err
	}
	return u.Store.InventorySource(r.Context(), id)
}

func (u *handlers) createInventorySource(w http.ResponseWriter, r *http.Request) error {
	if err := editGate(r); err != nil {
		return err
	}
	f := typedForm(r)
	f.ClearToken = false
	err := func() error {
		set, err := u.settle(f, strings.TrimSpace(r.PostFormValue("token")), nil)
		if err != nil {
			return err
		}
		src := db.InventorySource{Name: f.Name, Kind: set.kind, Config: set.config, Enabled: f.Enabled, IntervalMinutes: set.minutes}
		if set.token != "" {
			src.Token = u.Sealer.Seal(set.token, secret.PurposeInventoryToken)
		}
		_, err = u.Store.CreateInventorySource(r.Context(), src, u.AuditOf(r, "inventory_source.create", map[string]any{
			"name": src.Name, "kind": src.Kind, "enabled": src.Enabled, "interval_minutes": src.IntervalMinutes, "token_set": set.token != ""}))
		return err
	}()
	if err != nil {
		return u.renderRefused(w, r, f, err)
	}
	core.RedirectDone(w, r, pathInventorySources, "added")
	return nil
}

func (u *handlers) updateInventorySource(w http.ResponseWriter, r *http.Request) error {
	stored, err := u.gatedSource(r)
	if err != nil {
		return err
	}
	f := typedForm(r)
	f.ID, f.HasToken = stored.ID, len(stored.Token) > 0
	token := strings.TrimSpace(r.PostFormValue("token"))
	var changed []string
	_, err = u.Store.UpdateInventorySource(r.Context(), stored.ID, func(s *db.InventorySource) error {
		changed = changed[:0]
		set, err := u.settle(f, token, s)
		if err != nil {
			return err
		}
		if set.token != "" || f.ClearToken {
			changed = append(changed, "token")
		}
		if string(set.config) != string(s.Config) || set.kind != s.Kind {
			changed = append(changed, "settings")
		}
		if f.Name != s.Name {
			changed = append(changed, "name")
		}
		if set.minutes != s.IntervalMinutes {
			changed = append(changed, "interval")
		}
		if f.Enabled != s.Enabled {
			changed = append(changed, "enabled")
		}
		s.Name, s.Kind, s.Config, s.IntervalMinutes, s.Enabled = f.Name, set.kind, set.config, set.minutes, f.Enabled
		switch {
		case set.token != "":
			s.Token = u.Sealer.Seal(set.token, secret.PurposeInventoryToken)
		case f.ClearToken:
			s.Token = nil
		}
		return nil
	}, u.AuditOf(r, "inventory_source.update", map[string]any{"name": f.Name, "changed": &changed}))
	if err != nil {
		return u.renderRefused(w, r, f, err)
	}
	core.RedirectDone(w, r, pathInventorySources, "saved")
	return nil
}

func (u *handlers) deleteInventorySource(w http.ResponseWriter, r *http.Request) error {
	src, err := u.gatedSource(r)
	if err != nil {
		return err
	}
	owned, err := u.Store.SyncedDevices(r.Context(), src.ID)
	if err != nil {
		return err
	}
	if err := u.Store.DeleteInventorySource(r.Context(), src.ID, u.AuditOf(r, "inventory_source.delete",
		map[string]any{"name": src.Name, "kind": src.Kind, "devices_released": len(owned)})); err != nil {
		return err
	}
	core.RedirectDone(w, r, pathInventorySources, "deleted")
	return nil
}

func (u *handlers) dryRunInventorySource(w http.ResponseWriter, r *http.Request) error {
	return u.runInventorySource(w, r, true)
}

func (u *handlers) syncInventorySource(w http.ResponseWriter, r *http.Request) error {
	return u.runInventorySource(w, r, false)
}

// runInventorySource runs a dry run or a sync within the request,
// bounded by inventorySyncTimeout, and shows its report. The devices it
// changes are audited by the store, each naming the source; the run
// itself is audited here.
func (u *handlers) runInventorySource(w http.ResponseWriter, r *http.Request, dryRun bool) error {
	if err := editGate(r); err != nil {
		return err
	}
	id, err := core.PathID(r)
	if err != nil {
		return err
	}
	src, err := u.Store.InventorySource(r.Context(), id)
	if err != nil {
		return err
	}
	if !dryRun && !src.Enabled {
		// As the command line: a disabled source is not synced, only
		// looked at with a dry run.
		p := inventoryReportPage{SourceID: id, Source: src.Name, Refused: keyInsyncErrDisabled, Minutes: int(inventorySyncTimeout / time.Minute)}
		return u.Render(w, r, http.StatusUnprocessableEntity, "settings_inventory_report.html", keyInsyncReportTitle, p)
	}
	outbound, err := netguard.Load(r.Context(), u.Store)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), inventorySyncTimeout)
	defer cancel()
	syncer := insync.Syncer{Store: u.Store, Sealer: u.Sealer, Options: insync.Options{Outbound: outbound, UserAgent: "backupd/" + u.Version}}
	by := u.AuditOf(r, "", nil)
	rep, err := syncer.Sync(ctx, id, dryRun, *by)
	if err != nil && rep.Error == "" {
		if ctx.Err() != nil {
			rep.Error = "the sync took longer than " + inventorySyncTimeout.String() + " and was stopped: nothing was changed"
		} else {
			return err
		}
	}
	action := "inventory_source.sync"
	if dryRun {
		action = "inventory_source.dry_run"
	}
	counts := rep.Counts()
	details := map[string]any{"name": src.Name, "counts": counts}
	if rep.Error != "" {
		details["error"] = rep.Error
	}
	u.Audit(r, action, "inventory_source", id, details)
	p := inventoryReportPage{SourceID: id, Source: src.Name, DryRun: dryRun, Error: rep.Error,
		Counts: sortedCounts(counts), Minutes: int(inventorySyncTimeout / time.Minute)}
	for _, l := range rep.Lines {
		p.Lines = append(p.Lines, inventoryLine{Line: l, ActionKey: insyncActionKeys[string(l.Action)], Why: whyMessages(l.Reason)})
	}
	return u.Render(w, r, http.StatusOK, "settings_inventory_report.html", keyInsyncReportTitle, p)
}

// insyncKindKeys name a source's kind as the form offers it.
var insyncKindKeys = map[string]string{
	formKindNetBox: keyInsyncKindNetBox, formKindHTTP: keyInsyncKindHTTP, formKindLibreNMS: keyInsyncKindLibreNMS,
	formKindOxidized: keyInsyncKindOxidized,
}

// insyncStatusKeys name how a source's last sync went ("never": it did
// not run yet).
var insyncStatusKeys = map[string]string{
	db.InventorySyncOK: keyInsyncStatusOK, db.InventorySyncFailed: keyInsyncStatusFailed, "never": keyInsyncStatusNever,
}

// insyncActionKeys name a report line's action, and the figures the store
// keeps of a source's last sync.
var insyncActionKeys = map[string]string{
	string(insync.ActCreate): keyInsyncActCreate, string(insync.ActUpdate): keyInsyncActUpdate,
	string(insync.ActClaim): keyInsyncActClaim, string(insync.ActDisable): keyInsyncActDisable,
	string(insync.ActEnable): keyInsyncActEnable, string(insync.ActLeave): keyInsyncActLeave, string(insync.ActSkip): keyInsyncActSkip,
	"created": keyInsyncFigCreated, "updated": keyInsyncFigUpdated, "claimed": keyInsyncFigClaimed,
	"disabled": keyInsyncFigDisabled, "enabled": keyInsyncFigEnabled, "skipped": keyInsyncFigSkipped,
	"unchanged": keyInsyncFigUnchanged, "unmapped": keyInsyncFigUnmapped,
}
