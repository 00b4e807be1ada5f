package platforms

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"backupd/app/collect/driver"
	"backupd/db"
)

// loadMu orders reloads: two changes in quick succession must not end
// with the older list installed.
var loadMu sync.Mutex

// LoadStore installs the store's custom platforms in the driver registry
// (driver.SetCustom), replacing the ones installed before. Every process
// that validates or collects devices calls it after opening the store,
// and the web interface after every change. A stored definition that no
// longer passes the checks is left out and named in the returned error;
// the others are installed all the same.
func LoadStore(ctx context.Context, store *db.Store) error {
	bad, err := load(ctx, store)
	if err != nil {
		return err
	}
	return errors.Join(bad...)
}

// load installs the store's platforms and returns the ones left out.
func load(ctx context.Context, store *db.Store) ([]error, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	rows, err := store.ListCustomPlatforms(ctx)
	if err != nil {
		return nil, err
	}
	var ps []driver.Platform
	var bad []error
	for _, r := range rows {
		p, _, err := Load([]byte(r.Definition))
		if err == nil && p.ID != r.PlatformID {
			err = fmt.Errorf("the definition's id is %q", p.ID)
		}
		if err != nil {
			bad = append(bad, fmt.Errorf("custom platform %s left out: %w", r.PlatformID, err))
			continue
		}
		ps = append(ps, p)
	}
	return bad, driver.SetCustom(ps)
}

// reload installs the store's platforms after a change; a definition
// left out is the list page's to show, not the change's error.
func reload(ctx context.Context, store *db.Store) error {
	_, err := load(ctx, store)
	return err
}

// Stored is one stored definition with its problem (nil when it
// loads).
type Stored struct {
	db.CustomPlatform
	Def Definition
	Err error
}

// ListStored reads every stored custom platform and checks each.
func ListStored(ctx context.Context, store *db.Store) ([]Stored, error) {
	rows, err := store.ListCustomPlatforms(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Stored, 0, len(rows))
	for _, r := range rows {
		_, d, err := Load([]byte(r.Definition))
		out = append(out, Stored{CustomPlatform: r, Def: d, Err: err})
	}
	return out, nil
}

// Save checks d and stores it: a new platform when create is set (an
// existing ID is db.ErrNameExists), else a replacement of the stored one
// with the same ID (db.ErrNotFound when there is none). The registry is
// reloaded after the change.
func Save(ctx context.Context, store *db.Store, d Definition, create bool) (driver.Platform, error) {
	p, err := d.Platform()
	if err != nil {
		return p, err
	}
	d.ID = p.ID
	doc := string(Marshal(d))
	if create {
		_, err = store.CreateCustomPlatform(ctx, p.ID, doc)
	} else {
		_, err = store.UpdateCustomPlatform(ctx, p.ID, doc)
	}
	if err != nil {
		return p, err
	}
	return p, reload(ctx, store)
}

// Delete removes a platform nothing uses (see db.DeleteCustomPlatform)
// and reloads the registry.
func Delete(ctx context.Context, store *db.Store, platformID string) error {
	if err := store.DeleteCustomPlatform(ctx, platformID); err != nil {
		return err
	}
	return reload(ctx, store)
}
