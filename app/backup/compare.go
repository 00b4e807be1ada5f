package backup

import (
	"crypto/sha256"
	"encoding/json"
	"sync"

	"backupd/db"
)

// Bounds on what a compareCache holds: past them it starts again empty.
const (
	maxComparedDevices = 50000 // about 200 bytes each
	maxNoiseFilters    = 64    // platforms × versions of the user's rules
)

// compareCache spares the comparison of a new version with the device's
// previous one the work of reading, decompressing, normalising and
// stripping the previous version: it remembers, per device, the SHA-256
// of its latest version as stripped of noise, under the fingerprint of
// the filter that stripped it (platform and user rules). The entry names
// the version's content address, so a version that was not recorded, one
// another process recorded since or a change of the rules or the
// platform misses the cache, and the comparison falls back to reading
// the previous version. The compiled filters are kept by fingerprint too.
type compareCache struct {
	mu      sync.Mutex
	devices map[int64]strippedVersion
	filters map[[32]byte]cachedFilter
	// hits and misses count lookups (for tests).
	hits, misses int
}

// strippedVersion is a device's latest version as compared.
type strippedVersion struct {
	snapshot string   // the version's snapshot hash
	filter   [32]byte // noiseFingerprint of the filter that stripped it
	stripped [32]byte // SHA-256 of the stripped text
}

// cachedFilter is a compiled filter; warn is the error of the user's
// rules it had to leave out (logged at every use, as before), err that of
// a filter that could not be built at all (not kept).
type cachedFilter struct {
	f    *NoiseFilter
	warn error
	err  error
}

func newCompareCache() *compareCache {
	return &compareCache{devices: map[int64]strippedVersion{}, filters: map[[32]byte]cachedFilter{}}
}

// noiseFingerprint identifies the filter NewNoiseFilter builds for
// platform and rules.
func noiseFingerprint(platform string, rules []db.NoiseRule) ([32]byte, error) {
	raw, err := json.Marshal(rules)
	if err != nil {
		return [32]byte{}, err
	}
	h := sha256.New()
	h.Write([]byte(platform))
	h.Write([]byte{0})
	h.Write(raw)
	var out [32]byte
	h.Sum(out[:0])
	return out, nil
}

// filter returns the compiled filter of a fingerprint, building it with
// build on a miss.
func (c *compareCache) filter(key [32]byte, build func() cachedFilter) cachedFilter {
	c.mu.Lock()
	cf, ok := c.filters[key]
	c.mu.Unlock()
	if ok {
		return cf
	}
	cf = build()
	if cf.err != nil {
		return cf
	}
	c.mu.Lock()
	if len(c.filters) >= maxNoiseFilters {
		clear(c.filters)
	}
	c.filters[key] = cf
	c.mu.Unlock()
	return cf
}

// lookup returns the stripped hash of the device's version snapshot as
// stripped by the filter with fingerprint filter, if remembered.
func (c *compareCache) lookup(deviceID int64, snapshot string, filter [32]byte) ([32]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.devices[deviceID]
	if !ok || v.snapshot != snapshot || v.filter != filter {
		c.misses++
		return [32]byte{}, false
	}
	c.hits++
	return v.stripped, true
}

// remember records the device's new latest version as compared.
func (c *compareCache) remember(deviceID int64, v strippedVersion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.devices[deviceID]; !ok && len(c.devices) >= maxComparedDevices {
		clear(c.devices)
	}
	c.devices[deviceID] = v
}
