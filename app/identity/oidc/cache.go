package oidc

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"backupd/app/netguard"
	"backupd/db"
)

// cacheSize bounds the providers a Cache keeps (one per distinct
// configuration: normally one).
const cacheSize = 4

// CacheMaxAge is how long a provider's discovery is trusted before it is
// read again (endpoints rarely move; keys are refreshed by go-oidc on
// their own when an unknown key id comes).
const CacheMaxAge = time.Hour

// Cache keeps the Provider of each configuration, so that discovery runs
// once per settings version rather than at every sign-in; a change of
// the settings (or the secret, or the outbound allow list) is another
// key, so the next Get builds anew. A failed discovery is not kept:
// the next sign-in tries again. The zero Cache is ready to use.
type Cache struct {
	mu      sync.Mutex
	entries []cacheEntry
}

type cacheEntry struct {
	key   [32]byte
	p     *Provider
	built time.Time
}

// Get returns the provider for s, from the cache or discovered now. When
// a provider past CacheMaxAge cannot be discovered again, the old one
// serves on.
func (c *Cache) Get(ctx context.Context, s db.OIDCSettings, clientSecret string, outbound netguard.Policy) (*Provider, error) {
	key := cacheKey(s, clientSecret, outbound)
	now := time.Now()
	c.mu.Lock()
	var stale *Provider
	for _, e := range c.entries {
		if e.key == key {
			if now.Sub(e.built) < CacheMaxAge {
				c.mu.Unlock()
				return e.p, nil
			}
			stale = e.p
		}
	}
	c.mu.Unlock()

	p, err := New(ctx, s, clientSecret, WithOutbound(outbound))
	if err != nil {
		if stale != nil {
			return stale, nil
		}
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.entries[:0]
	for _, e := range c.entries {
		if e.key == key {
			e.p.Close()
			continue
		}
		kept = append(kept, e)
	}
	if len(kept) >= cacheSize {
		kept[0].p.Close()
		kept = append(kept[:0], kept[1:]...)
	}
	c.entries = append(kept, cacheEntry{key: key, p: p, built: now})
	return p, nil
}

func cacheKey(s db.OIDCSettings, secret string, outbound netguard.Policy) [32]byte {
	s.Mappings = nil // they change who may sign in, not how to talk to the provider
	s.Enabled = false
	s.ClientSecret = nil
	b, _ := json.Marshal(struct {
		S      db.OIDCSettings
		Secret string
		Allow  []string
	}{s, secret, netguard.Strings(outbound.Allow)})
	return sha256.Sum256(b)
}
