package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"backupd/db/engine"
)

// What a sync of an inventory source writes: the planner (app/) compares
// the source's devices with those the source owns (SyncedDevices) and
// hands the store a list of changes, which ApplyInventorySync applies in
// one transaction. A device the source owns carries the source's id and
// its key there (devices.inventory_source_id, inventory_key); a device
// without one was made by hand or imported, and no change touches it but
// a claim. A sync never deletes a device: one that vanished from the
// source is disabled (disabled_by_sync), its history kept, and enabled
// again when it comes back; one a person disabled stays disabled.
//
// Between the plan and the apply a person may edit a device. Each change
// but a create names the values the plan saw (and the source and key it
// saw the device under); the store compares them with the device as it
// is, under the transaction's lock, and when they differ it skips that
// change and reports it (InventorySkip) rather than write over the
// person's edit or fail the whole sync: the person's edit is the newer
// intent, the other changes are still right, and the next sync plans
// again from what the person left. A change that cannot be applied at
// all (a name another device has, a key the source already gave, a
// credential or template that does not exist) is an error, and the
// whole sync rolls back: the plan no longer fits the store, and the
// caller plans again.

// InventoryChangeKind is what a change does to a device.
type InventoryChangeKind string

// The kinds of change a sync applies.
const (
	// InventoryCreate makes a device the source owns under Key.
	InventoryCreate InventoryChangeKind = "create"
	// InventoryUpdate sets the fields it names on a device of the source.
	InventoryUpdate InventoryChangeKind = "update"
	// InventoryClaim adopts a device made by hand: the source owns it
	// under Key from then on.
	InventoryClaim InventoryChangeKind = "claim"
	// InventoryDisable disables an enabled device of the source that
	// vanished from it, marking it disabled by the sync.
	InventoryDisable InventoryChangeKind = "disable"
	// InventoryEnable enables a device of the source the sync disabled
	// and that came back; never one a person disabled.
	InventoryEnable InventoryChangeKind = "enable"
)

var inventoryChangeKinds = []InventoryChangeKind{InventoryCreate, InventoryUpdate, InventoryClaim, InventoryDisable, InventoryEnable}

// The fields of a device an update may set, as InventoryChange.Fields
// names them.
const (
	InventoryFieldName         = "name"
	InventoryFieldHost         = "host"
	InventoryFieldPort         = "port"
	InventoryFieldPlatform     = "platform"
	InventoryFieldLoginMethod  = "login_method"
	InventoryFieldGroup        = "group"
	InventoryFieldCredentialID = "credential_id"
	InventoryFieldTemplateID   = "template_id"
)

// InventoryFieldNames lists the fields an update may set.
var InventoryFieldNames = []string{InventoryFieldName, InventoryFieldHost, InventoryFieldPort, InventoryFieldPlatform,
	InventoryFieldLoginMethod, InventoryFieldGroup, InventoryFieldCredentialID, InventoryFieldTemplateID}

// Bounds of a sync.
const (
	// MaxInventoryKey bounds a source's key for a device, in bytes.
	MaxInventoryKey = 255
	// MaxInventoryGroupDepth bounds a group path.
	MaxInventoryGroupDepth = 10
)

// InventoryDevice is what a source says of a device: the fields a sync
// sets. GroupPath names the device's group and its ancestors, outermost
// first (empty: no group); the groups are made when missing. The
// credential and template are ids the caller resolved.
type InventoryDevice struct {
	Name         string
	Host         string
	Port         int
	Platform     string
	LoginMethod  string
	GroupPath    []string
	CredentialID *int64
	TemplateID   *int64
}

// InventoryChange is one change of a sync. Key is the source's stable id
// for the device; DeviceID the device (all kinds but create).
//
//   - create: Device is the new device (enabled, in the local zone).
//   - update: Fields names what changes, Device holds the new values and
//     Was the values the plan saw for those fields.
//   - claim: the device must still be made by hand (no source); Was.Name,
//     when set, must still be its name.
//   - disable, enable: the device must still be the source's under Key.
type InventoryChange struct {
	Kind     InventoryChangeKind
	Key      string
	DeviceID int64
	Device   InventoryDevice
	Fields   []string
	Was      InventoryDevice
}

// InventorySkipReason is why a change was not applied.
type InventorySkipReason string

// Why a change is skipped: the device moved between the plan and now.
const (
	// InventorySkipGone: the device no longer exists.
	InventorySkipGone InventorySkipReason = "gone"
	// InventorySkipNotOwned: the device is not the source's under the
	// key (for a claim: another source, or this one, owns it already).
	InventorySkipNotOwned InventorySkipReason = "not_owned"
	// InventorySkipChanged: a field the change sets no longer holds the
	// value the plan saw: a person edited it.
	InventorySkipChanged InventorySkipReason = "changed"
	// InventorySkipAlreadyDisabled: a disable of a device that is
	// disabled already (a person disabled it: it stays theirs).
	InventorySkipAlreadyDisabled InventorySkipReason = "already_disabled"
	// InventorySkipNotDisabledBySync: an enable of a device the sync did
	// not disable (a person did, or it is enabled).
	InventorySkipNotDisabledBySync InventorySkipReason = "not_disabled_by_sync"
)

// InventorySkip is a change not applied: the Index-th of the list.
type InventorySkip struct {
	Index    int
	Kind     InventoryChangeKind
	Key      string
	DeviceID int64
	Reason   InventorySkipReason
}

// InventorySync is one apply: the changes in order, when the sync ran,
// who runs it (the actor of its audit entries: user, interface, request;
// the store sets action, target and details), and the planner's own
// figures (unchanged, unmapped, …) to keep beside the store's in the
// source's last_counts.
type InventorySync struct {
	Changes []InventoryChange
	At      time.Time
	By      AuditEntry
	Counts  map[string]int
}

// InventorySyncResult is what an apply did: how many changes of each
// kind it applied, the ids of the devices it created (in the order of
// their changes), and the changes it skipped.
type InventorySyncResult struct {
	Created, Updated, Claimed, Disabled, Enabled int
	CreatedIDs                                   []int64
	Skipped                                      []InventorySkip
}

// Counts are the result's figures as the source's last_counts keeps
// them, by kind, with "skipped".
func (r InventorySyncResult) Counts() map[string]int {
	return map[string]int{"created": r.Created, "updated": r.Updated, "claimed": r.Claimed,
		"disabled": r.Disabled, "enabled": r.Enabled, "skipped": len(r.Skipped)}
}

// ErrInventoryKeyTaken refuses a create or claim under a key the source
// already gave another device.
var ErrInventoryKeyTaken = errors.New("the source already has a device with this key")

// InventoryChangeError is why ApplyInventorySync applied nothing: the
// Index-th change (of Kind, for Key) failed with Err (ErrNameExists,
// ErrInventoryKeyTaken, *ErrReference, *ErrInvalidField, or the
// database's error).
type InventoryChangeError struct {
	Index int
	Kind  InventoryChangeKind
	Key   string
	Err   error
}

func (e *InventoryChangeError) Error() string {
	return fmt.Sprintf("change %d (%s %q): %v", e.Index, e.Kind, e.Key, e.Err)
}

func (e *InventoryChangeError) Unwrap() error { return e.Err }

// SyncedDevice is a device a source owns, as a planner compares it with
// the source: its key, whether it is enabled (and if not, whether the
// sync disabled it), and the fields a sync sets, its group as a path.
type SyncedDevice struct {
	DeviceID       int64
	Key            string
	Enabled        bool
	DisabledBySync bool
	Device         InventoryDevice
}

// SyncedDevices returns the devices source owns, by key.
func (s *Store) SyncedDevices(ctx context.Context, sourceID int64) ([]SyncedDevice, error) {
	paths, err := groupPaths(ctx, s.reader)
	if err != nil {
		return nil, fmt.Errorf("devices of inventory source %d: %w", sourceID, err)
	}
	out, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (SyncedDevice, error) {
		var d SyncedDevice
		var group sql.NullInt64
		err := r.Scan(&d.DeviceID, &d.Key, &d.Enabled, &d.DisabledBySync, &d.Device.Name, &d.Device.Host, &d.Device.Port,
			&d.Device.Platform, &d.Device.LoginMethod, &group, &d.Device.CredentialID, &d.Device.TemplateID)
		if group.Valid {
			d.Device.GroupPath = paths[group.Int64]
		}
		return d, err
	}, `SELECT id, inventory_key, enabled, disabled_by_sync, name, host, port, platform, login_method, group_id,
		credential_id, template_id FROM devices WHERE inventory_source_id = ? ORDER BY inventory_key`, sourceID)
	if err != nil {
		return nil, fmt.Errorf("devices of inventory source %d: %w", sourceID, err)
	}
	return out, nil
}

// groupPaths is every group's path of names, outermost first, by id.
func groupPaths(ctx context.Context, q engine.Querier) (map[int64][]string, error) {
	groups, err := engine.QueryAll(ctx, q, scanGroup, `SELECT `+groupColumns+` FROM device_groups`)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(groups))
	for _, g := range groups {
		names[g.ID] = g.Name
	}
	out := make(map[int64][]string, len(groups))
	for _, g := range groups {
		var path []string
		for _, part := range strings.Split(strings.Trim(g.Path, "/"), "/") {
			id, err := strconv.ParseInt(part, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("group %d: path %q", g.ID, g.Path)
			}
			path = append(path, names[id])
		}
		out[g.ID] = path
	}
	return out, nil
}

// check refuses a change no store could apply.
func (c *InventoryChange) check() error {
	if !slices.Contains(inventoryChangeKinds, c.Kind) {
		return &ErrInvalidField{"kind", fmt.Sprintf("unknown change %q", c.Kind)}
	}
	if c.Key == "" || len(c.Key) > MaxInventoryKey || !utf8.ValidString(c.Key) {
		return &ErrInvalidField{"key", fmt.Sprintf("1 to %d bytes of UTF-8", MaxInventoryKey)}
	}
	if c.Kind == InventoryCreate {
		return c.Device.check(InventoryFieldNames)
	}
	if c.DeviceID <= 0 {
		return &ErrInvalidField{"device_id", "required"}
	}
	if c.Kind != InventoryUpdate {
		return nil
	}
	if len(c.Fields) == 0 {
		return &ErrInvalidField{"fields", "an update names the fields it sets"}
	}
	for _, f := range c.Fields {
		if !slices.Contains(InventoryFieldNames, f) {
			return &ErrInvalidField{"fields", fmt.Sprintf("unknown field %q", f)}
		}
	}
	return c.Device.check(c.Fields)
}

// check refuses values of fields a device cannot hold.
func (d InventoryDevice) check(fields []string) error {
	for _, f := range fields {
		switch f {
		case InventoryFieldName:
			if strings.TrimSpace(d.Name) == "" {
				return &ErrInvalidField{"name", "required"}
			}
		case InventoryFieldHost:
			if strings.TrimSpace(d.Host) == "" {
				return &ErrInvalidField{"host", "required"}
			}
		case InventoryFieldPort:
			if d.Port < 1 || d.Port > 65535 {
				return &ErrInvalidField{"port", "between 1 and 65535"}
			}
		case InventoryFieldPlatform:
			if d.Platform == "" {
				return &ErrInvalidField{"platform", "required"}
			}
		case InventoryFieldLoginMethod:
			if d.LoginMethod != "ssh" && d.LoginMethod != "telnet" {
				return &ErrInvalidField{"login_method", "ssh or telnet"}
			}
		case InventoryFieldGroup:
			if len(d.GroupPath) > MaxInventoryGroupDepth {
				return &ErrInvalidField{"group", fmt.Sprintf("at most %d levels", MaxInventoryGroupDepth)}
			}
			for _, name := range d.GroupPath {
				if err := checkName(name); err != nil {
					return &ErrInvalidField{"group", err.(*ErrInvalidField).Message}
				}
			}
		}
	}
	return nil
}

// ApplyInventorySync applies a sync's changes to the devices of source
// sourceID, in order, in one transaction, and records on the source that
// it synced (at sync.At, which is also its last good sync, status ok,
// the counts; after failed syncs, the events the event policy decides:
// inventory.sync_recovered, see events_inventory.go). Every change
// applied is audited, naming the source and the key: action "inventory.sync.<kind>"
// on the device. A change whose device moved since the plan is skipped
// and reported (see the top of this file); any other failure is an
// *InventoryChangeError (or the source's ErrNotFound) and nothing is
// written. Changes that change nothing write nothing but the source's
// last sync.
func (s *Store) ApplyInventorySync(ctx context.Context, sourceID int64, sync InventorySync) (InventorySyncResult, error) {
	owned := map[string]int{}
	for i := range sync.Changes {
		c := &sync.Changes[i]
		if err := c.check(); err != nil {
			return InventorySyncResult{}, &InventoryChangeError{Index: i, Kind: c.Kind, Key: c.Key, Err: err}
		}
		if c.Kind == InventoryCreate || c.Kind == InventoryClaim {
			if _, dup := owned[c.Key]; dup {
				return InventorySyncResult{}, &InventoryChangeError{Index: i, Kind: c.Kind, Key: c.Key, Err: ErrInventoryKeyTaken}
			}
			owned[c.Key] = i
		}
	}
	var res InventorySyncResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res = InventorySyncResult{}
		stamp := sync.At.UTC().Format(TimeFormat)
		// The source's row first: its lock keeps two applies of one
		// source from running at once on PostgreSQL.
		var name, kind string
		var failures int
		err := tx.QueryRowContext(ctx, `UPDATE inventory_sources SET last_sync_at = ? WHERE id = ? RETURNING name, kind, sync_failures`,
			stamp, sourceID).Scan(&name, &kind, &failures)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("lock inventory source %d: %w", sourceID, err)
		}
		a := &syncApply{s: s, tx: tx, sourceID: sourceID, source: name, stamp: stamp, by: sync.By,
			groups: map[string]int64{}, paths: map[int64][]string{}, refs: map[deviceRefs]error{}, res: &res}
		defer a.close()
		for i, c := range sync.Changes {
			if err := a.apply(ctx, i, c); err != nil {
				return &InventoryChangeError{Index: i, Kind: c.Kind, Key: c.Key, Err: err}
			}
		}
		counts := map[string]int{}
		for k, v := range sync.Counts {
			counts[k] = v
		}
		for k, v := range res.Counts() {
			counts[k] = v
		}
		raw, err := json.Marshal(counts)
		if err != nil {
			return err
		}
		// A sync that applied after failed ones: inventory.sync_recovered
		// (the policy's), and the streak ends.
		failures, err = s.recordInventorySyncEvents(ctx, tx, InventorySourceRef{ID: sourceID, Name: name, Kind: kind}, failures,
			true, "", sync.At)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE inventory_sources SET last_status = ?, last_error = '', last_counts = ?,
			sync_failures = ?, last_good_sync_at = ? WHERE id = ?`, InventorySyncOK, string(raw), failures, stamp, sourceID)
		return err
	})
	if err != nil {
		return InventorySyncResult{}, err
	}
	return res, nil
}

// RecordInventorySyncFailure records on the source that a sync ended at
// at without applying anything, and why (cut to MaxInventoryErrorBytes;
// never a secret: the caller words it), and in the same transaction the
// events the store's event policy decides (inventory.sync_failed when
// the failed syncs in a row reach a rule's threshold; see
// events_inventory.go). Nothing else changes: the devices stay as they
// were, and last_counts keeps the figures of the last sync that applied.
func (s *Store) RecordInventorySyncFailure(ctx context.Context, sourceID int64, at time.Time, errText string) error {
	errText = cutUTF8(strings.ToValidUTF8(errText, "?"), MaxInventoryErrorBytes)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// The source's row first: its lock orders this with an apply of
		// the same source on PostgreSQL.
		src := InventorySourceRef{ID: sourceID}
		var failures int
		err := tx.QueryRowContext(ctx, `UPDATE inventory_sources SET last_sync_at = ?, last_status = ?, last_error = ? WHERE id = ?
			RETURNING name, kind, sync_failures`, at.UTC().Format(TimeFormat), InventorySyncFailed, errText, sourceID).
			Scan(&src.Name, &src.Kind, &failures)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		next, err := s.recordInventorySyncEvents(ctx, tx, src, failures, false, errText, at)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE inventory_sources SET sync_failures = ? WHERE id = ?`, next, sourceID)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("record inventory sync failure: %w", err)
	}
	return err
}

// syncApply is one run of an apply's transaction: the source, the
// statements it repeats, and what it looked up once.
type syncApply struct {
	s        *Store
	tx       *sql.Tx
	sourceID int64
	source   string
	stamp    string
	by       AuditEntry
	insert   *sql.Stmt
	// groups are group ids by path (names joined by groupPathSep),
	// paths groups' name paths by id, refs the reference checks done.
	groups map[string]int64
	paths  map[int64][]string
	refs   map[deviceRefs]error
	res    *InventorySyncResult
}

// deviceRefs is what checkDeviceReferences looks at, but the group (a
// sync resolves or makes its groups itself).
type deviceRefs struct {
	credential, template int64
	platform             string
}

// groupPathSep joins a path's names into a map key: no name holds it
// (checkName refuses control characters).
const groupPathSep = "\x1f"

func (a *syncApply) close() {
	if a.insert != nil {
		a.insert.Close()
	}
}

func (a *syncApply) apply(ctx context.Context, i int, c InventoryChange) error {
	if c.Kind == InventoryCreate {
		return a.create(ctx, c)
	}
	d, err := a.lockDevice(ctx, c.DeviceID)
	if errors.Is(err, ErrNotFound) {
		a.skip(i, c, InventorySkipGone)
		return nil
	}
	if err != nil {
		return err
	}
	if c.Kind == InventoryClaim {
		if d.InventorySourceID != nil {
			a.skip(i, c, InventorySkipNotOwned)
			return nil
		}
		if c.Was.Name != "" && d.Name != c.Was.Name {
			a.skip(i, c, InventorySkipChanged)
			return nil
		}
		if err := a.exec(ctx, `UPDATE devices SET inventory_source_id = ?, inventory_key = ?, updated_at = ? WHERE id = ?`,
			a.sourceID, c.Key, a.stamp, d.ID); err != nil {
			return err
		}
		a.res.Claimed++
		return a.audit(ctx, c, d.ID, nil)
	}
	if d.InventorySourceID == nil || *d.InventorySourceID != a.sourceID || d.InventoryKey == nil || *d.InventoryKey != c.Key {
		a.skip(i, c, InventorySkipNotOwned)
		return nil
	}
	switch c.Kind {
	case InventoryDisable:
		if !d.Enabled {
			a.skip(i, c, InventorySkipAlreadyDisabled)
			return nil
		}
		if err := a.exec(ctx, `UPDATE devices SET enabled = 0, disabled_by_sync = 1, updated_at = ? WHERE id = ?`, a.stamp, d.ID); err != nil {
			return err
		}
		a.res.Disabled++
	case InventoryEnable:
		if d.Enabled || !d.DisabledBySync {
			a.skip(i, c, InventorySkipNotDisabledBySync)
			return nil
		}
		if err := a.exec(ctx, `UPDATE devices SET enabled = 1, disabled_by_sync = 0, updated_at = ? WHERE id = ?`, a.stamp, d.ID); err != nil {
			return err
		}
		a.res.Enabled++
	case InventoryUpdate:
		same, err := a.holds(ctx, d, c.Fields, c.Was)
		if err != nil {
			return err
		}
		if !same {
			a.skip(i, c, InventorySkipChanged)
			return nil
		}
		if err := a.update(ctx, d, c); err != nil {
			return err
		}
		a.res.Updated++
		return a.audit(ctx, c, d.ID, c.Fields)
	}
	return a.audit(ctx, c, d.ID, nil)
}

// lockDevice reads the device, locked until the transaction ends on
// PostgreSQL (SQLite's writer is alone already), or ErrNotFound.
func (a *syncApply) lockDevice(ctx context.Context, id int64) (Device, error) {
	d, err := scanDevice(a.tx.QueryRowContext(ctx, a.s.d.Pick(getDeviceQuery, getDeviceQuery+` FOR UPDATE OF d`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrNotFound
	}
	return d, err
}

func (a *syncApply) skip(i int, c InventoryChange, why InventorySkipReason) {
	a.res.Skipped = append(a.res.Skipped, InventorySkip{Index: i, Kind: c.Kind, Key: c.Key, DeviceID: c.DeviceID, Reason: why})
}

// exec runs a write of the device list, its refusals in the store's words.
func (a *syncApply) exec(ctx context.Context, query string, args ...any) error {
	_, err := a.tx.ExecContext(ctx, query, args...)
	return writeErr(err)
}

// writeErr is err with a refusal by a UNIQUE constraint in the store's
// words: ErrNameExists for a device's name, ErrInventoryKeyTaken for the
// source's key.
func writeErr(err error) error {
	column, ok := engine.UniqueViolation(err)
	switch {
	case !ok:
		return err
	// SQLite names the index's first column ("inventory_source_id,"),
	// PostgreSQL the index, devices_inventory_key, as "inventory".
	case strings.HasPrefix(column, "inventory"):
		return ErrInventoryKeyTaken
	}
	return nameConflict(err)
}

// create inserts the device of c, enabled, in the local zone.
func (a *syncApply) create(ctx context.Context, c InventoryChange) error {
	d := c.Device
	group, err := a.groupID(ctx, d.GroupPath)
	if err != nil {
		return err
	}
	if err := a.checkRefs(ctx, d.Platform, d.CredentialID, d.TemplateID); err != nil {
		return err
	}
	if a.insert == nil {
		if a.insert, err = a.tx.PrepareContext(ctx, `INSERT INTO devices (name, host, port, platform, login_method, group_id,
			credential_id, template_id, enabled, status, created_at, updated_at, zone_id, inventory_source_id, inventory_key)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?) RETURNING id`); err != nil {
			return err
		}
	}
	var id int64
	if err := a.insert.QueryRowContext(ctx, d.Name, d.Host, d.Port, d.Platform, d.LoginMethod, group, d.CredentialID,
		d.TemplateID, StatusUnknown, a.stamp, a.stamp, LocalZone, a.sourceID, c.Key).Scan(&id); err != nil {
		return writeErr(err)
	}
	a.res.Created++
	a.res.CreatedIDs = append(a.res.CreatedIDs, id)
	return a.audit(ctx, c, id, nil)
}

// holds reports whether d's fields still hold the values was gives them.
func (a *syncApply) holds(ctx context.Context, d Device, fields []string, was InventoryDevice) (bool, error) {
	for _, f := range fields {
		var same bool
		switch f {
		case InventoryFieldName:
			same = d.Name == was.Name
		case InventoryFieldHost:
			same = d.Host == was.Host
		case InventoryFieldPort:
			same = d.Port == was.Port
		case InventoryFieldPlatform:
			same = d.Platform == was.Platform
		case InventoryFieldLoginMethod:
			same = d.LoginMethod == was.LoginMethod
		case InventoryFieldCredentialID:
			same = sameParent(d.CredentialID, was.CredentialID)
		case InventoryFieldTemplateID:
			same = sameParent(d.TemplateID, was.TemplateID)
		case InventoryFieldGroup:
			path, err := a.pathOf(ctx, d.GroupID)
			if err != nil {
				return false, err
			}
			same = slices.Equal(path, was.GroupPath)
		}
		if !same {
			return false, nil
		}
	}
	return true, nil
}

// update sets the fields c names on d.
func (a *syncApply) update(ctx context.Context, d Device, c InventoryChange) error {
	n := c.Device
	for _, f := range c.Fields {
		switch f {
		case InventoryFieldName:
			d.Name = n.Name
		case InventoryFieldHost:
			d.Host = n.Host
		case InventoryFieldPort:
			d.Port = n.Port
		case InventoryFieldPlatform:
			d.Platform = n.Platform
		case InventoryFieldLoginMethod:
			d.LoginMethod = n.LoginMethod
		case InventoryFieldCredentialID:
			d.CredentialID = n.CredentialID
		case InventoryFieldTemplateID:
			d.TemplateID = n.TemplateID
		case InventoryFieldGroup:
			id, err := a.groupID(ctx, n.GroupPath)
			if err != nil {
				return err
			}
			d.GroupID = id
		}
	}
	if err := a.checkRefs(ctx, d.Platform, d.CredentialID, d.TemplateID); err != nil {
		return err
	}
	return a.exec(ctx, `UPDATE devices SET name = ?, host = ?, port = ?, platform = ?, login_method = ?, group_id = ?,
		credential_id = ?, template_id = ?, updated_at = ? WHERE id = ?`,
		d.Name, d.Host, d.Port, d.Platform, d.LoginMethod, d.GroupID, d.CredentialID, d.TemplateID, a.stamp, d.ID)
}

// checkRefs checks a device's credential and template (the template of
// its platform) once per combination.
func (a *syncApply) checkRefs(ctx context.Context, platform string, credential, template *int64) error {
	k := deviceRefs{}
	if credential != nil {
		k.credential = *credential
	}
	if template != nil {
		k.template, k.platform = *template, platform
	}
	if err, done := a.refs[k]; done {
		return err
	}
	err := checkDeviceReferences(ctx, a.tx, Device{Platform: platform, CredentialID: credential, TemplateID: template, ZoneID: LocalZone})
	var ref *ErrReference
	if err != nil && !errors.As(err, &ref) {
		return err
	}
	a.refs[k] = err
	return err
}

// groupID is the id of the group path names (nil for an empty path),
// making the groups missing on the way down. A name a group elsewhere in
// the tree has (group names are unique in the whole tree) is an
// *ErrReference.
func (a *syncApply) groupID(ctx context.Context, path []string) (*int64, error) {
	if len(path) == 0 {
		return nil, nil
	}
	var parent *int64
	for i, name := range path {
		key := strings.Join(path[:i+1], groupPathSep)
		if id, ok := a.groups[key]; ok {
			parent = &id
			continue
		}
		var id int64
		var have sql.NullInt64
		err := a.tx.QueryRowContext(ctx, `SELECT id, parent_id FROM device_groups WHERE name = ?`, name).Scan(&id, &have)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			g, err := a.s.createGroupTx(ctx, a.tx, name, parent)
			if err != nil {
				return nil, err
			}
			id = g.ID
		case err != nil:
			return nil, err
		case !sameParent(nullID(have), parent):
			return nil, &ErrReference{"group", fmt.Sprintf("a group named %q is elsewhere in the tree", name)}
		}
		a.groups[key], parent = id, &id
	}
	return parent, nil
}

// pathOf is the names of group id and its ancestors, outermost first
// (nil for no group).
func (a *syncApply) pathOf(ctx context.Context, id *int64) ([]string, error) {
	if id == nil {
		return nil, nil
	}
	if p, ok := a.paths[*id]; ok {
		return p, nil
	}
	p, err := engine.QueryAll(ctx, a.tx, func(r engine.Scanner) (string, error) {
		var name string
		return name, r.Scan(&name)
	}, `SELECT p.name FROM device_groups g JOIN device_groups p ON substr(g.path, 1, length(p.path)) = p.path
		WHERE g.id = ? ORDER BY p.depth`, *id)
	if err != nil {
		return nil, err
	}
	a.paths[*id] = p
	return p, nil
}

func nullID(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

// audit records the change applied to device id, naming the source and
// the key (and the fields an update set, never their values).
func (a *syncApply) audit(ctx context.Context, c InventoryChange, id int64, fields []string) error {
	e := a.by
	e.Action = "inventory.sync." + string(c.Kind)
	e.TargetType = "device"
	e.TargetID = strconv.FormatInt(id, 10)
	e.Details = map[string]any{"source": a.source, "source_id": a.sourceID, "key": c.Key}
	if fields != nil {
		e.Details["fields"] = fields
	}
	return recordAudit(ctx, a.tx, e)
}

// boolInt is b as the flag columns hold it.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
