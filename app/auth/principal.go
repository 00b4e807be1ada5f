package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"backupd/db"
)

// Principal is who is calling: a user, through one of its API keys (KeyID)
// or a web session (KeyID 0).
type Principal struct {
	UserID   int64
	Username string
	KeyID    int64
	// AllGroups users see every device group; the others see GroupIDs and
	// all their descendants.
	AllGroups bool
	GroupIDs  []int64
	perms     map[string]bool
	// credentials are those its roles let it use one by one.
	credentials map[int64]bool
}

// Can reports whether the principal holds permission p.
func (p *Principal) Can(perm string) bool { return p != nil && p.perms[perm] }

// CanUseCredential reports whether the principal may use credential id:
// attach it to a device, or let it go to a device's new address. It holds
// credentials.use (every credential) or a role lists this one.
func (p *Principal) CanUseCredential(id int64) bool {
	return p != nil && (p.perms[PermCredentialsUse] || p.credentials[id])
}

// CredentialScope is the credentials the principal may use, for the
// store's queries (the device form's choices).
func (p *Principal) CredentialScope() db.CredentialScope {
	if p == nil {
		return db.CredentialScope{}
	}
	if p.perms[PermCredentialsUse] {
		return db.CredentialScope{All: true}
	}
	s := db.CredentialScope{IDs: []int64{}}
	for id := range p.credentials {
		s.IDs = append(s.IDs, id)
	}
	slices.Sort(s.IDs)
	return s
}

// ErrUnauthorized covers every reason a key is refused. Callers get no hint
// which one it was; the log says.
var ErrUnauthorized = errors.New("unauthorized")

// KeyAuthenticator checks API keys and records their last use without a
// write on the request path.
type KeyAuthenticator struct {
	store *db.Store
	log   *slog.Logger
	now   func() time.Time

	mu   sync.Mutex
	used map[int64]time.Time
}

// NewKeyAuthenticator returns an authenticator over store.
func NewKeyAuthenticator(store *db.Store, log *slog.Logger) *KeyAuthenticator {
	return &KeyAuthenticator{store: store, log: log, now: time.Now, used: map[int64]time.Time{}}
}

// Authenticate resolves a presented key to its principal, with effective
// permissions = the key's ∩ its owner's, read fresh on every call so that
// demoting a user demotes its keys at once.
func (a *KeyAuthenticator) Authenticate(ctx context.Context, key string) (*Principal, error) {
	prefix, ok := APIKeyPrefix(key)
	if !ok {
		return nil, ErrUnauthorized
	}
	k, err := a.store.APIKeyByPrefix(ctx, prefix)
	if errors.Is(err, db.ErrNotFound) {
		return nil, ErrUnauthorized
	}
	if err != nil {
		return nil, fmt.Errorf("look up api key: %w", err)
	}
	if subtle.ConstantTimeCompare(HashAPIKey(key), k.Hash) != 1 {
		return nil, ErrUnauthorized
	}
	now := a.now().UTC()
	if k.RevokedAt != nil || !k.UserActive {
		return nil, ErrUnauthorized
	}
	if k.ExpiresAt != nil {
		exp, err := db.ParseTime(*k.ExpiresAt)
		if err != nil || !now.Before(exp) {
			return nil, ErrUnauthorized
		}
	}
	grants, err := a.store.UserGrants(ctx, k.UserID)
	if err != nil {
		return nil, err
	}
	p := &Principal{UserID: k.UserID, Username: k.Username, KeyID: k.ID, perms: effective(grants, k),
		AllGroups: k.UserAllGroups, GroupIDs: k.UserGroupIDs}
	if !k.Narrowed {
		// A key narrowed to some permissions uses credentials only
		// through credentials.use in its list; an unnarrowed one is its
		// owner, one-by-one grants included.
		p.credentials = grants.Credentials
	}
	a.mu.Lock()
	a.used[k.ID] = now
	a.mu.Unlock()
	return p, nil
}

func effective(owner db.Grants, k db.APIKey) map[string]bool {
	ownerHas := func(p string) bool { return owner.All || owner.Permissions[p] }
	out := map[string]bool{}
	if k.Narrowed {
		for _, p := range k.Permissions {
			if ownerHas(p) {
				out[p] = true
			}
		}
		return out
	}
	for _, p := range Permissions {
		if ownerHas(p) {
			out[p] = true
		}
	}
	return out
}

// Flush writes the recorded last-use times.
func (a *KeyAuthenticator) Flush(ctx context.Context) error {
	a.mu.Lock()
	used := a.used
	a.used = map[int64]time.Time{}
	a.mu.Unlock()
	return a.store.TouchAPIKeys(ctx, used)
}

// Run flushes last-use times every interval until ctx ends, then once more.
func (a *KeyAuthenticator) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			// Bounded: a database that does not answer holds no flush
			// (and the writer connection) for longer.
			fctx, cancel := context.WithTimeout(ctx, interval)
			if err := a.Flush(fctx); err != nil {
				a.log.Warn("recording api key use failed", "err", err)
			}
			cancel()
		case <-ctx.Done():
			flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := a.Flush(flushCtx); err != nil {
				a.log.Warn("recording api key use failed", "err", err)
			}
			cancel()
			return
		}
	}
}
