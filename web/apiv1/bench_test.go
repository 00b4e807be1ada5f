package apiv1_test

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/engine"
	"backupd/db/seed"
	"backupd/embed"
	"backupd/internal/dbtest"
	"backupd/web"
	"backupd/web/apiv1"
)

// The benchmarks run the public API in-process over a seeded store of
// 10,000 devices and 1,000,000 backup records:
//
//	go test ./web/apiv1 -run '^$' -bench . -benchtime 2000x -count 1
//
// Each reports the median and 99th-percentile latency of one request
// (p50-ms, p99-ms) besides ns/op. The seeded database is built once per
// process on first use and cached under os.TempDir() in
// backupd-bench-<schema>-<date>/, so that later runs the same day start at
// once; the date in the name keeps the "last 24 hours" figures of /stats
// real. Delete those directories to reclaim the space (about 400 MB each).
//
// With BACKUPD_TEST_POSTGRES set they measure PostgreSQL instead: the
// seeded database is kept on that server as backupd_bench_<schema>_<date>
// (older ones of the same schema are dropped).

// benchSeedVersion names what db.Seed builds; bump it when that changes
// without a migration changing.
const benchSeedVersion = "seed-3"

var benchSeed = seed.Options{Devices: 10_000, BackupsPerDevice: 100, RootGroups: 10, ChildGroups: 10, Snapshots: 300, RandomSeed: 1}

// benchAPI is the server under measurement and what the requests need.
type benchAPI struct {
	handler             http.Handler
	adminKey, scopedKey string
	minID, maxID        int64
	scopedDevices       int
}

var benchFixture struct {
	once sync.Once
	api  *benchAPI
	err  error
}

// benchServer returns the shared server, building it on first use.
func benchServer(b *testing.B) *benchAPI {
	b.Helper()
	if testing.Short() {
		b.Skip("needs a seeded database of 1,000,000 backup records")
	}
	benchFixture.once.Do(func() {
		benchFixture.api, benchFixture.err = newBenchAPI(b)
	})
	if benchFixture.err != nil {
		b.Fatal(benchFixture.err)
	}
	return benchFixture.api
}

// benchCacheKey changes with the schema, the seed options and the day.
func benchCacheKey() (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s %+v\n", benchSeedVersion, benchSeed)
	err := fs.WalkDir(embed.Migrations, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(embed.Migrations, path)
		fmt.Fprintf(h, "%s %d\n", path, len(data))
		h.Write(data)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// seedInfo is kept beside the cached database.
type seedInfo struct {
	Seconds float64 `json:"seed_seconds"`
	At      string  `json:"seeded_at"`
}

// benchDataDir returns a data directory holding the seeded database,
// seeding it when no cached copy of today exists.
func benchDataDir(b *testing.B) (string, error) {
	key, err := benchCacheKey()
	if err != nil {
		return "", err
	}
	prefix := "backupd-bench-" + key + "-"
	dir := filepath.Join(os.TempDir(), prefix+time.Now().UTC().Format("20060102"))
	if raw, err := os.ReadFile(filepath.Join(dir, "seed.json")); err == nil {
		var info seedInfo
		_ = json.Unmarshal(raw, &info)
		b.Logf("seeded database: %s (cached; seeding took %.1fs at %s)", dir, info.Seconds, info.At)
		return dir, nil
	}

	build, err := os.MkdirTemp(os.TempDir(), "backupd-bench-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(build) // a no-op once renamed
	ctx := context.Background()
	store, err := db.Open(ctx, build)
	if err != nil {
		return "", err
	}
	opt := benchSeed
	opt.Now = time.Now()
	start := time.Now()
	err = store.Seed(ctx, opt)
	took := time.Since(start)
	if cerr := store.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	b.Logf("seeded %d devices × %d backups in %.1fs", opt.Devices, opt.BackupsPerDevice, took.Seconds())
	info, _ := json.Marshal(seedInfo{Seconds: took.Seconds(), At: start.UTC().Format(time.RFC3339)})
	if err := os.WriteFile(filepath.Join(build, "seed.json"), info, 0o600); err != nil {
		return "", err
	}
	if err := os.Rename(build, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "seed.json")); statErr != nil {
			return "", err
		}
		// Another process cached the same database meanwhile.
	}
	b.Logf("seeded database: %s", dir)
	// Older days of the same schema are of no further use.
	if old, err := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*")); err == nil {
		for _, o := range old {
			if o != dir {
				os.RemoveAll(o)
			}
		}
	}
	return dir, nil
}

// benchPostgres returns the URL of the seeded database on the PostgreSQL
// server tests run on (BACKUPD_TEST_POSTGRES), seeding it when no database
// of today's name is kept there yet.
func benchPostgres(b *testing.B) (string, error) {
	key, err := benchCacheKey()
	if err != nil {
		return "", err
	}
	prefix := "backupd_bench_" + key + "_"
	return dbtest.KeptPostgres(prefix+time.Now().UTC().Format("20060102"), prefix, func(url string) error {
		ctx := context.Background()
		store, err := db.OpenPostgres(ctx, url)
		if err != nil {
			return err
		}
		opt := benchSeed
		opt.Now = time.Now()
		start := time.Now()
		err = store.Seed(ctx, opt)
		if cerr := store.Close(); err == nil {
			err = cerr
		}
		b.Logf("seeded %d devices × %d backups on PostgreSQL in %.1fs", opt.Devices, opt.BackupsPerDevice, time.Since(start).Seconds())
		return err
	})
}

// benchStore opens the seeded store, SQLite or PostgreSQL as the tests
// run, and its secret key's sealer.
func benchStore(b *testing.B) (*db.Store, *secret.Sealer, error) {
	ctx := context.Background()
	if dbtest.Postgres() {
		url, err := benchPostgres(b)
		if err != nil {
			return nil, nil, err
		}
		b.Logf("seeded database: %s", engine.RedactURL(url))
		store, err := db.OpenPostgres(ctx, url)
		if err != nil {
			return nil, nil, err
		}
		// The seed seals nothing: a new key each run will do.
		key := make([]byte, 32)
		crand.Read(key)
		sealer, err := secret.New(key)
		return store, sealer, err
	}
	dir, err := benchDataDir(b)
	if err != nil {
		return nil, nil, err
	}
	store, err := db.Open(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	sealer, err := secret.LoadOrCreate(dir)
	return store, sealer, err
}

func newBenchAPI(b *testing.B) (*benchAPI, error) {
	ctx := context.Background()
	// The process keeps the store open; the benchmarks share it.
	store, sealer, err := benchStore(b)
	if err != nil {
		return nil, err
	}
	if _, err := auth.Bootstrap(ctx, store); err != nil {
		return nil, err
	}
	log := slog.New(slog.DiscardHandler)
	mux := http.NewServeMux()
	apiv1.Mount(mux, apiv1.Deps{Store: store, Sealer: sealer, Keys: auth.NewKeyAuthenticator(store, log), Log: log, Location: time.UTC})
	api := &benchAPI{handler: web.Wrap(mux, log)}

	// The scoped user sees one root group with its children and two
	// children of other roots.
	groups, err := store.AllGroups(ctx)
	if err != nil {
		return nil, err
	}
	var scope []int64
	for _, g := range groups {
		if g.Name == "region-01" || g.Name == "region-04-site-03" || g.Name == "region-07-site-08" {
			scope = append(scope, g.ID)
		}
	}
	if len(scope) != 3 {
		return nil, fmt.Errorf("seeded groups not found: %v", scope)
	}
	const scopedUser = "bench-scoped"
	if _, err := store.UserByName(ctx, scopedUser); errors.Is(err, db.ErrNotFound) {
		viewer, err := store.RoleByName(ctx, auth.RoleViewer)
		if err != nil {
			return nil, err
		}
		if _, err := store.CreateUser(ctx, db.NewUser{Username: scopedUser, PasswordHash: "x", RoleIDs: []int64{viewer.ID}, GroupIDs: scope}); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if api.adminKey, err = benchKey(ctx, store, auth.AdminUsername); err != nil {
		return nil, err
	}
	if api.scopedKey, err = benchKey(ctx, store, scopedUser); err != nil {
		return nil, err
	}
	if err := dbtest.Peek(b, store).QueryRowContext(ctx, `SELECT MIN(id), MAX(id) FROM devices`).Scan(&api.minID, &api.maxID); err != nil {
		return nil, err
	}

	// Make sure the requests measure what they claim to.
	var history, all, scoped struct {
		Items      []json.RawMessage
		Pagination struct{ Total int }
	}
	var stats struct{ Backups struct{ Total int } }
	for _, c := range []struct {
		path, key string
		out       any
	}{
		{fmt.Sprintf("/api/v1/devices/%d/backups?limit=10", api.minID), api.adminKey, &history},
		{"/api/v1/devices?limit=50", api.adminKey, &all},
		{"/api/v1/devices?limit=50", api.scopedKey, &scoped},
		{"/api/v1/stats", api.adminKey, &stats},
	} {
		rec := api.get(c.path, c.key)
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %d %s", c.path, rec.Code, rec.Body)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), c.out); err != nil {
			return nil, fmt.Errorf("GET %s: %w", c.path, err)
		}
	}
	if history.Pagination.Total != benchSeed.BackupsPerDevice || len(history.Items) != 10 ||
		all.Pagination.Total != benchSeed.Devices || len(all.Items) != 50 ||
		stats.Backups.Total != benchSeed.Devices*benchSeed.BackupsPerDevice ||
		scoped.Pagination.Total == 0 || scoped.Pagination.Total >= benchSeed.Devices/2 {
		return nil, fmt.Errorf("seeded database does not look as expected: history %d, devices %d, scoped %d, backups %d",
			history.Pagination.Total, all.Pagination.Total, scoped.Pagination.Total, stats.Backups.Total)
	}
	api.scopedDevices = scoped.Pagination.Total
	b.Logf("scoped key sees %d devices", api.scopedDevices)
	return api, nil
}

func benchKey(ctx context.Context, store *db.Store, username string) (string, error) {
	u, err := store.UserByName(ctx, username)
	if err != nil {
		return "", err
	}
	key, prefix, hash := auth.NewAPIKey()
	_, err = store.CreateAPIKey(ctx, db.APIKey{UserID: u.ID, Name: "benchmark", Prefix: prefix, Hash: hash})
	return key, err
}

func (a *benchAPI) get(path, key string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("X-API-Key", key)
	rec := httptest.NewRecorder()
	a.handler.ServeHTTP(rec, req)
	return rec
}

// measure sends b.N requests, to the paths path returns, timing each one,
// and reports the median and the 99th percentile.
func (a *benchAPI) measure(b *testing.B, key string, path func(r *rand.Rand) string) {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	paths := make([]string, b.N)
	for i := range paths {
		paths[i] = path(r)
	}
	took := make([]time.Duration, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		req := httptest.NewRequest(http.MethodGet, paths[i], nil)
		req.Header.Set("X-API-Key", key)
		rec := httptest.NewRecorder()
		start := time.Now()
		a.handler.ServeHTTP(rec, req)
		took[i] = time.Since(start)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", paths[i], rec.Code, rec.Body)
		}
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(benchPercentile(took, 50), "p50-ms")
	b.ReportMetric(benchPercentile(took, 99), "p99-ms")
}

// benchPercentile is the nearest-rank p-th percentile of sorted, in ms.
func benchPercentile(sorted []time.Duration, p int) float64 {
	i := (len(sorted)*p+99)/100 - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / float64(time.Millisecond)
}

func BenchmarkDeviceHistoryPage(b *testing.B) {
	a := benchServer(b)
	pages := benchSeed.BackupsPerDevice / 10
	a.measure(b, a.adminKey, func(r *rand.Rand) string {
		return fmt.Sprintf("/api/v1/devices/%d/backups?page=%d&limit=10", a.minID+r.Int64N(a.maxID-a.minID+1), 1+r.IntN(pages))
	})
}

func BenchmarkDeviceListPage(b *testing.B) {
	a := benchServer(b)
	b.Run("all", func(b *testing.B) {
		a.measure(b, a.adminKey, func(r *rand.Rand) string {
			return fmt.Sprintf("/api/v1/devices?page=%d&limit=50", 1+r.IntN(benchSeed.Devices/50))
		})
	})
	b.Run("scoped", func(b *testing.B) {
		a.measure(b, a.scopedKey, func(r *rand.Rand) string {
			return fmt.Sprintf("/api/v1/devices?page=%d&limit=50", 1+r.IntN((a.scopedDevices+49)/50))
		})
	})
	b.Run("query", func(b *testing.B) {
		// Names look like sw-01234 and dc-sw-05678: each query matches
		// about a hundred devices.
		a.measure(b, a.adminKey, func(r *rand.Rand) string {
			return fmt.Sprintf("/api/v1/devices?q=sw-%03d&page=1&limit=50", r.IntN(100))
		})
	})
}

func BenchmarkStats(b *testing.B) {
	a := benchServer(b)
	a.measure(b, a.adminKey, func(*rand.Rand) string { return "/api/v1/stats" })
}
