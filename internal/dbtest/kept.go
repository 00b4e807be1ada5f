package dbtest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"regexp"
	"strings"
)

var keptName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,50}$`)

// KeptPostgres returns the URL of the database name on the test server,
// a store kept between test processes (the seeded database benchmarks
// measure, which takes minutes to build). When it does not exist, fill
// gets a fresh migrated database to fill; once fill returns without error
// (having closed its store) that database is renamed to name, so a
// half-built one is never used. Databases whose names start with stale
// (older caches of the same kind) are dropped. name and stale are
// lower-case identifiers; name should change with what fill builds.
func KeptPostgres(name, stale string, fill func(url string) error) (string, error) {
	if !Postgres() {
		return "", fmt.Errorf("KeptPostgres: %s is not set", Env)
	}
	if !keptName.MatchString(name) || !strings.HasPrefix(name, stale) || stale == "" {
		return "", fmt.Errorf("KeptPostgres: bad database name %q (stale prefix %q)", name, stale)
	}
	tmpl, err := template()
	if err != nil {
		return "", err
	}
	a, err := admin()
	if err != nil {
		return "", err
	}
	defer a.Close()
	ctx := context.Background()
	conn, err := a.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w", Env, err)
	}
	defer conn.Close()
	// Processes wanting the same database take turns: the first builds it.
	sum := sha256.Sum256([]byte(name))
	key := int64(binary.BigEndian.Uint64(sum[:8]))
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)

	rows, err := conn.QueryContext(ctx, `SELECT datname FROM pg_database WHERE starts_with(datname, $1) AND datname <> $2`, stale, name)
	if err != nil {
		return "", err
	}
	var old []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return "", err
		}
		old = append(old, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	found := false
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&found); err != nil {
		return "", err
	}
	for _, n := range old {
		if !keptName.MatchString(n) {
			continue
		}
		if _, err := conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+n+` WITH (FORCE)`); err != nil {
			return "", fmt.Errorf("drop the stale database %s: %w", n, err)
		}
	}
	if found {
		return withDatabase(os.Getenv(Env), name), nil
	}
	build := name + "_build"
	if _, err := conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+build+` WITH (FORCE)`); err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+build+` TEMPLATE `+tmpl); err != nil {
		return "", fmt.Errorf("create %s: %w", build, err)
	}
	if err := fill(withDatabase(os.Getenv(Env), build)); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `DROP DATABASE IF EXISTS `+build+` WITH (FORCE)`)
		return "", err
	}
	if _, err := conn.ExecContext(ctx, `ALTER DATABASE `+build+` RENAME TO `+name); err != nil {
		return "", fmt.Errorf("keep %s: %w", name, err)
	}
	return withDatabase(os.Getenv(Env), name), nil
}
