package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// PostgresBin is where Debian's PostgreSQL 15 keeps its programs, which
// StartServer runs.
const PostgresBin = "/usr/lib/postgresql/15/bin"

// Server is a PostgreSQL server of one test's own, which the test may
// stop and start again (a database restart), unlike the shared server of
// Env.
type Server struct {
	t    testing.TB
	dir  string // the cluster's directory (data/, log, socket)
	port int
	// runAs runs a program of the cluster: as the postgres user when the
	// test runs as root (initdb and postgres refuse root).
	runAs func(name string, args ...string) *exec.Cmd
}

// StartServer creates a fresh cluster in a temporary directory, starts it
// on a free port of 127.0.0.1 with trust authentication, and stops it
// (immediately) when t ends. Without Debian's PostgreSQL binaries
// (PostgresBin) the test is skipped; CI has them. A test on a server of
// its own does the same whichever engine the suite runs on, so it runs
// once, in the SQLite run (OnceOnSQLite), where CI also has -race.
func StartServer(t testing.TB) *Server {
	t.Helper()
	OnceOnSQLite(t, "on a PostgreSQL server of its own, whatever the suite's engine")
	if _, err := os.Stat(filepath.Join(PostgresBin, "pg_ctl")); err != nil {
		t.Skipf("a PostgreSQL server of the test's own needs Debian's postgresql-15 (%s): %v", PostgresBin, err)
	}
	s := &Server{t: t, runAs: func(name string, args ...string) *exec.Cmd {
		return exec.Command(filepath.Join(PostgresBin, name), args...)
	}}
	base := t.TempDir()
	s.dir = filepath.Join(base, "pg")
	if err := os.Mkdir(s.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root, the server needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		// The temporary directories are root's and private: the postgres
		// user may pass through them to its own.
		for _, d := range []string{filepath.Dir(base), base} {
			if err := os.Chmod(d, 0o711); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chown(s.dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		s.runAs = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(PostgresBin, name)}, args...)...)
		}
	}
	if out, err := s.runAs("initdb", "-D", s.data(), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s.port = freePort(t)
	// Its own port on loopback only, and no fsync: test data. Commits
	// still wait for their WAL to be written (synchronous_commit on, the
	// default): Stop kills the server as a crash does, and a committed
	// transaction must survive that, as on any real server. With it off,
	// a commit younger than the WAL writer's next round was lost, and a
	// test of an outage found its queued jobs gone.
	conf := fmt.Sprintf("port = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n"+
		"fsync = off\nfull_page_writes = off\nmax_connections = 100\n", s.port, s.dir)
	f, err := os.OpenFile(filepath.Join(s.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(conf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Stopped whatever state the test left it in.
		_ = s.runAs("pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "-t", "30", "stop").Run()
	})
	s.Start()
	return s
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is the URL of database name on the server.
func (s *Server) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", s.Addr(), name)
}

// Start starts the server and returns once it takes connections.
func (s *Server) Start() {
	s.t.Helper()
	if out, err := s.runAs("pg_ctl", "-D", s.data(), "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		s.t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// Stop stops the server as a crash does (pg_ctl stop -m immediate): every
// session ends at once, nothing is written on the way out.
func (s *Server) Stop() {
	s.t.Helper()
	if out, err := s.runAs("pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "-t", "60", "stop").CombinedOutput(); err != nil {
		s.t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// CreateDatabase creates an empty database on the server and returns its
// URL.
func (s *Server) CreateDatabase(name string) string {
	s.t.Helper()
	a, err := sql.Open("postgres", s.URL("postgres"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := a.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		s.t.Fatalf("create database %s: %v", name, err)
	}
	return s.URL(name)
}

// Log is what the server logged so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "log"))
	return string(b)
}

// freePort is a TCP port of 127.0.0.1 nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// WithHost is the PostgreSQL URL loc with its host:port replaced by addr
// (a Proxy's, say).
func WithHost(loc, addr string) string {
	u, err := url.Parse(loc)
	if err != nil {
		panic(fmt.Errorf("dbtest.WithHost: %w", err))
	}
	u.Host = addr
	return u.String()
}
