package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"
)

// LocalZone is the server's own zone (migration 00020): the devices its
// engines back up. Every other zone's devices are backed up by the zone's
// remote collectors.
const LocalZone int64 = 1

// Zone is a network devices live in.
type Zone struct {
	ID        int64
	Name      string
	CreatedAt string
	// Devices and Collectors count what the zone holds (listing only).
	Devices    int
	Collectors int
}

// ListZones returns every zone by id, with what each holds.
func (s *Store) ListZones(ctx context.Context) ([]Zone, error) {
	zones, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (Zone, error) {
		var z Zone
		return z, r.Scan(&z.ID, &z.Name, &z.CreatedAt, &z.Devices, &z.Collectors)
	}, `SELECT z.id, z.name, z.created_at,
			(SELECT COUNT(*) FROM devices d WHERE d.zone_id = z.id),
			(SELECT COUNT(*) FROM collectors c WHERE c.zone_id = z.id AND c.revoked_at IS NULL)
		FROM zones z ORDER BY z.id`)
	if err != nil {
		return nil, fmt.Errorf("list zones: %w", err)
	}
	return zones, nil
}

// GetZone returns one zone or ErrNotFound.
func (s *Store) GetZone(ctx context.Context, id int64) (Zone, error) {
	var z Zone
	err := s.reader.QueryRowContext(ctx, `SELECT id, name, created_at FROM zones WHERE id = ?`, id).Scan(&z.ID, &z.Name, &z.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return z, ErrNotFound
	}
	if err != nil {
		return z, fmt.Errorf("get zone %d: %w", id, err)
	}
	return z, nil
}

// ZoneByName returns the zone of that name (case-insensitive) or
// ErrNotFound.
func (s *Store) ZoneByName(ctx context.Context, name string) (Zone, error) {
	var z Zone
	err := s.reader.QueryRowContext(ctx, `SELECT id, name, created_at FROM zones WHERE name = ?`, name).Scan(&z.ID, &z.Name, &z.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return z, ErrNotFound
	}
	if err != nil {
		return z, fmt.Errorf("zone %q: %w", name, err)
	}
	return z, nil
}

// CreateZone adds a zone; a taken name (case-insensitive) is
// ErrNameExists.
func (s *Store) CreateZone(ctx context.Context, name string) (Zone, error) {
	var z Zone
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM zones WHERE name = ?`, name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		id, err := engine.InsertID(ctx, tx, `INSERT INTO zones (name, created_at) VALUES (?, ?)`, name, now)
		if err != nil {
			return err
		}
		z = Zone{ID: id, Name: name, CreatedAt: now}
		return nil
	})
	if err != nil && !errors.Is(err, ErrNameExists) {
		err = fmt.Errorf("create zone: %w", err)
	}
	return z, err
}

// Collector is a remote collector enrolled in a zone.
type Collector struct {
	ID          int64
	ZoneID      int64
	ZoneName    string
	Name        string
	PublicKey   string // the X25519 key job secrets are sealed to (unpadded URL-safe base64)
	EnrolledAt  string
	LastSeenAt  *string
	LastAddress string
	Version     string
	RevokedAt   *string
	// Leased counts the jobs it holds now (listing only).
	Leased int
}

const collectorColumns = `c.id, c.zone_id, z.name, c.name, c.public_key, c.enrolled_at, c.last_seen_at, c.last_address,
	c.version, c.revoked_at`

func scanCollector(r engine.Scanner, extra ...any) (Collector, error) {
	var c Collector
	var seen, revoked sql.NullString
	err := r.Scan(append([]any{&c.ID, &c.ZoneID, &c.ZoneName, &c.Name, &c.PublicKey, &c.EnrolledAt, &seen,
		&c.LastAddress, &c.Version, &revoked}, extra...)...)
	if seen.Valid {
		c.LastSeenAt = &seen.String
	}
	if revoked.Valid {
		c.RevokedAt = &revoked.String
	}
	return c, err
}

// ErrEnrolment refuses an enrolment token that is unknown, used, revoked
// or expired (which one is not told).
var ErrEnrolment = errors.New("the enrolment token is unknown, already used, revoked or expired")

// CreateEnrolmentToken stores the hash of a one-time token that enrols
// one collector in the zone until expires, and returns the token's ID
// (which names it to list and revoke it; the token itself is never
// stored).
func (s *Store) CreateEnrolmentToken(ctx context.Context, zoneID int64, hash []byte, expires time.Time) (int64, error) {
	var id int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if ok, err := engine.Exists(ctx, tx, `SELECT 1 FROM zones WHERE id = ?`, zoneID); err != nil {
			return fmt.Errorf("enrolment token: %w", err)
		} else if !ok {
			return ErrNotFound
		}
		var err error
		id, err = engine.InsertID(ctx, tx, `INSERT INTO collector_tokens (zone_id, hash, created_at, expires_at) VALUES (?, ?, ?, ?)`,
			zoneID, hash, Now(), expires.UTC().Format(TimeFormat))
		if err != nil {
			return fmt.Errorf("enrolment token: %w", err)
		}
		return nil
	})
	return id, err
}

// EnrolmentToken is what is stored of an enrolment token: never the
// token, only when it was made, until when it enrols, and what became
// of it.
type EnrolmentToken struct {
	ID        int64
	ZoneID    int64
	ZoneName  string
	CreatedAt string
	ExpiresAt string
	UsedAt    *string
	// CollectorID and CollectorName name the collector it enrolled.
	CollectorID   *int64
	CollectorName string
	RevokedAt     *string
}

// Usable reports whether the token can still enrol a collector at now.
func (t EnrolmentToken) Usable(now time.Time) bool {
	return t.UsedAt == nil && t.RevokedAt == nil && t.ExpiresAt > now.UTC().Format(TimeFormat)
}

const enrolmentTokenColumns = `t.id, t.zone_id, z.name, t.created_at, t.expires_at, t.used_at, t.collector_id,
	COALESCE(c.name, ''), t.revoked_at`

func scanEnrolmentToken(r engine.Scanner) (EnrolmentToken, error) {
	var t EnrolmentToken
	var used, revoked sql.NullString
	var collector sql.NullInt64
	err := r.Scan(&t.ID, &t.ZoneID, &t.ZoneName, &t.CreatedAt, &t.ExpiresAt, &used, &collector, &t.CollectorName, &revoked)
	if used.Valid {
		t.UsedAt = &used.String
	}
	if collector.Valid {
		t.CollectorID = &collector.Int64
	}
	if revoked.Valid {
		t.RevokedAt = &revoked.String
	}
	return t, err
}

// MaxListedEnrolmentTokens bounds ListEnrolmentTokens: the newest are
// listed.
const MaxListedEnrolmentTokens = 500

// ListEnrolmentTokens returns the newest enrolment tokens first (at most
// MaxListedEnrolmentTokens); with usableAt set, only those that can
// still enrol a collector then.
func (s *Store) ListEnrolmentTokens(ctx context.Context, usableAt *time.Time) ([]EnrolmentToken, error) {
	where, args := "", []any{}
	if usableAt != nil {
		where = `WHERE t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > ?`
		args = append(args, usableAt.UTC().Format(TimeFormat))
	}
	args = append(args, MaxListedEnrolmentTokens)
	out, err := engine.QueryAll(ctx, s.reader, scanEnrolmentToken, `SELECT `+enrolmentTokenColumns+`
		FROM collector_tokens t JOIN zones z ON z.id = t.zone_id LEFT JOIN collectors c ON c.id = t.collector_id
		`+where+` ORDER BY t.id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("list enrolment tokens: %w", err)
	}
	return out, nil
}

// GetEnrolmentToken returns one enrolment token or ErrNotFound.
func (s *Store) GetEnrolmentToken(ctx context.Context, id int64) (EnrolmentToken, error) {
	t, err := scanEnrolmentToken(s.reader.QueryRowContext(ctx, `SELECT `+enrolmentTokenColumns+`
		FROM collector_tokens t JOIN zones z ON z.id = t.zone_id LEFT JOIN collectors c ON c.id = t.collector_id
		WHERE t.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	if err != nil {
		return t, fmt.Errorf("get enrolment token %d: %w", id, err)
	}
	return t, nil
}

// ErrTokenUsed refuses to revoke an enrolment token that has enrolled its
// collector: revoke the collector instead.
var ErrTokenUsed = errors.New("the enrolment token has been used")

// RevokeEnrolmentToken makes an unused enrolment token enrol nothing from
// now on and returns it as it is then. Revoking a revoked (or expired)
// token changes nothing and is no error; a used one is ErrTokenUsed (its
// collector is revoked on its own), an unknown one ErrNotFound.
func (s *Store) RevokeEnrolmentToken(ctx context.Context, id int64) (EnrolmentToken, error) {
	// One statement against EnrolCollector's: whichever commits first
	// wins, and the other finds used_at or revoked_at set.
	if _, err := s.writer.ExecContext(ctx, `UPDATE collector_tokens SET revoked_at = ?
		WHERE id = ? AND used_at IS NULL AND revoked_at IS NULL`, Now(), id); err != nil {
		return EnrolmentToken{}, fmt.Errorf("revoke enrolment token: %w", err)
	}
	t, err := s.GetEnrolmentToken(ctx, id)
	if err != nil {
		return t, err
	}
	if t.UsedAt != nil {
		return t, ErrTokenUsed
	}
	return t, nil
}

// EnrolCollector spends the enrolment token of tokenHash on a new
// collector of its zone, which authenticates from then on with the
// bearer token of bearerHash. ErrEnrolment when the token cannot be used.
func (s *Store) EnrolCollector(ctx context.Context, tokenHash []byte, c Collector, bearerHash []byte) (Collector, error) {
	var out Collector
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// Spend the token first, in one statement that only a single
		// enrolment can win: a second node enrolling with the same token
		// at the same moment finds it used (PostgreSQL re-checks the row
		// after the first transaction commits; SQLite has one writer).
		now := Now()
		var tokenID, zoneID int64
		err := tx.QueryRowContext(ctx, `UPDATE collector_tokens SET used_at = ?
			WHERE hash = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ? RETURNING id, zone_id`,
			now, tokenHash, now).Scan(&tokenID, &zoneID)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrEnrolment
		}
		if err != nil {
			return err
		}
		id, err := engine.InsertID(ctx, tx, `INSERT INTO collectors (zone_id, name, public_key, token_hash, enrolled_at,
			last_seen_at, last_address, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			zoneID, c.Name, c.PublicKey, bearerHash, now, now, c.LastAddress, c.Version)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE collector_tokens SET collector_id = ? WHERE id = ?`, id, tokenID); err != nil {
			return err
		}
		out, err = scanCollector(tx.QueryRowContext(ctx, `SELECT `+collectorColumns+`
			FROM collectors c JOIN zones z ON z.id = c.zone_id WHERE c.id = ?`, id))
		return err
	})
	if err != nil && !errors.Is(err, ErrEnrolment) {
		err = fmt.Errorf("enrol collector: %w", err)
	}
	return out, err
}

// CollectorByToken returns the unrevoked collector whose bearer token
// hashes to hash, or ErrNotFound.
func (s *Store) CollectorByToken(ctx context.Context, hash []byte) (Collector, error) {
	c, err := scanCollector(s.reader.QueryRowContext(ctx, `SELECT `+collectorColumns+`
		FROM collectors c JOIN zones z ON z.id = c.zone_id WHERE c.token_hash = ? AND c.revoked_at IS NULL`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("collector by token: %w", err)
	}
	return c, nil
}

// GetCollector returns one collector (revoked or not) or ErrNotFound.
func (s *Store) GetCollector(ctx context.Context, id int64) (Collector, error) {
	c, err := scanCollector(s.reader.QueryRowContext(ctx, `SELECT `+collectorColumns+`
		FROM collectors c JOIN zones z ON z.id = c.zone_id WHERE c.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("get collector %d: %w", id, err)
	}
	return c, nil
}

// ListCollectors returns every collector by id, with the jobs each holds.
func (s *Store) ListCollectors(ctx context.Context) ([]Collector, error) {
	out, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (Collector, error) {
		var leased int
		c, err := scanCollector(r, &leased)
		c.Leased = leased
		return c, err
	}, `SELECT `+collectorColumns+`,
			(SELECT COUNT(*) FROM jobs j WHERE j.collector_id = c.id AND j.state = 'running')
		FROM collectors c JOIN zones z ON z.id = c.zone_id ORDER BY c.id`)
	if err != nil {
		return nil, fmt.Errorf("list collectors: %w", err)
	}
	return out, nil
}

// CollectorSeen records a collector's heartbeat: when, from where, and
// the version it runs.
func (s *Store) CollectorSeen(ctx context.Context, id int64, version, address string) error {
	if _, err := s.writer.ExecContext(ctx, `UPDATE collectors SET last_seen_at = ?, version = ?, last_address = ? WHERE id = ?`,
		Now(), version, address, id); err != nil {
		return fmt.Errorf("collector heartbeat: %w", err)
	}
	return nil
}

// RevokeCollector refuses the collector from now on; the jobs it holds
// are queued again at once (interrupted, as a stopped engine's are).
func (s *Store) RevokeCollector(ctx context.Context, id int64, maxInterruptions int) error {
	res, err := s.writer.ExecContext(ctx, `UPDATE collectors SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, Now(), id)
	if err != nil {
		return fmt.Errorf("revoke collector: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := s.GetCollector(ctx, id); err != nil {
			return err
		}
		return nil // already revoked
	}
	_, err = s.ReleaseLeases(ctx, id, nil, maxInterruptions)
	return err
}

// CollectorCounts counts the unrevoked collectors seen within fresh
// ("online") and the others ("offline"), and the revoked ones, for
// metrics.
func (s *Store) CollectorCounts(ctx context.Context, fresh time.Duration) (online, offline, revoked int, err error) {
	since := time.Now().Add(-fresh).UTC().Format(TimeFormat)
	err = s.reader.QueryRowContext(ctx, `SELECT
			COALESCE(`+s.d.SumIf(`revoked_at IS NULL AND last_seen_at >= ?`)+`, 0),
			COALESCE(`+s.d.SumIf(`revoked_at IS NULL AND (last_seen_at IS NULL OR last_seen_at < ?)`)+`, 0),
			COALESCE(`+s.d.SumIf(`revoked_at IS NOT NULL`)+`, 0)
		FROM collectors`, since, since).Scan(&online, &offline, &revoked)
	if err != nil {
		err = fmt.Errorf("collector counts: %w", err)
	}
	return online, offline, revoked, err
}
