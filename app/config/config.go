// Package config holds backupd's settings: defaults, then BACKUPD_*
// environment variables, then flags, then Validate.
package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
)

// Config is everything `backupd serve` needs to know.
type Config struct {
	DataDir string
	// DB is the store: empty for SQLite in DataDir, or a PostgreSQL URL
	// (postgres://user:password@host:port/database) for a store several
	// nodes share. DataDir then still holds secret.key and run files.
	DB        string
	Listen    string
	Timezone  string
	TLSCert   string
	TLSKey    string
	LogFormat string
	LogLevel  string
	// Workers is how many devices are backed up at once.
	Workers int
	// Demo starts a simulated fleet on loopback and registers it.
	Demo bool
	// DemoChangesEvery is how often the demo fleet changes a few
	// configurations (0: every 3 minutes).
	DemoChangesEvery time.Duration
	// MetricsListen is where Prometheus metrics are served; empty is off.
	MetricsListen string
	// TrustedProxy lists the reverse proxies (IP addresses or CIDR
	// prefixes) whose forwarding headers are believed: X-Forwarded-For
	// and X-Forwarded-Proto, or Forwarded. TrustedProxies is the older,
	// comma-separated spelling of the same list; both count.
	TrustedProxy   []string
	TrustedProxies []string
	// SyslogListen is where device logs are received (UDP and TCP), so a
	// configuration change a device logs queues its backup; empty is off.
	SyslogListen string
	// SyslogDebounce is the quiet time after a device's last change
	// message before its backup is queued; 0 is the listener's default
	// (60 s; 15 s in the demo).
	SyslogDebounce time.Duration
	// PublicURL is the web interface's address as users reach it
	// ("https://backupd.example"): notifications link to the device's
	// diff page under it. Empty: no links.
	PublicURL string
	// NotifyWindow is the digest window of notifications: new events are
	// sent once none came for this long, so that the rest of their run
	// goes in the same message per channel; 0 is the default (60 s).
	NotifyWindow time.Duration
	// StaleAfter is how long a device may go without a good backup
	// before backup.stale is recorded; 0 is the default (48 h).
	StaleAfter time.Duration
	// OutboundAllow is serve's --outbound-allow: link-local and cloud
	// metadata addresses (IP addresses, CIDR prefixes) backupd may still
	// connect to. When OutboundAllowSet (the flag or its variable was
	// given) it replaces the stored allow list at start.
	OutboundAllow    []string
	OutboundAllowSet bool
	// Git holds the git mirror flags of serve; the ones given (flag or
	// environment) are saved to the mirror's settings at start.
	Git GitFlags
}

// GitFlags are serve's git mirror flags. Set names the ones given.
type GitFlags struct {
	Enable         bool
	Groups         bool
	Remote         string
	Branch         string
	AuthorName     string
	AuthorEmail    string
	KnownHostsFile string
	SSHKeyFile     string
	HTTPSUser      string
	TokenFile      string
	// AllowLocalRemote takes a remote on this machine (file://, a path).
	AllowLocalRemote bool
	// MaxWait bounds how long a busy queue delays the mirror's commit;
	// 0 is the default (10 min).
	MaxWait time.Duration
	Set     map[string]bool
}

// Defaults are used when neither a flag nor the environment says otherwise.
func Defaults() Config {
	return Config{
		DataDir:   "./data",
		Listen:    ":8080",
		LogFormat: "text",
		LogLevel:  "info",
		Workers:   50,
	}
}

// EnvName is the environment variable that sets a flag: BACKUPD_<FLAG>
// with dashes as underscores, e.g. --tls-cert → BACKUPD_TLS_CERT.
func EnvName(flag string) string {
	return "BACKUPD_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// Location resolves Timezone ("" is the host's local zone).
func (c Config) Location() (*time.Location, error) {
	if c.Timezone == "" {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		return nil, fmt.Errorf("--timezone %q: unknown time zone (use an IANA name such as Europe/Berlin)", c.Timezone)
	}
	return loc, nil
}

// Validate reports the first setting that cannot work.
func (c Config) Validate() error {
	if err := c.ValidateStore(); err != nil {
		return err
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key must be given together")
	}
	if _, err := c.Location(); err != nil {
		return err
	}
	if _, err := c.level(); err != nil {
		return err
	}
	if c.Workers < 1 || c.Workers > 1000 {
		return fmt.Errorf("--workers %d: want 1 to 1000 concurrent backups", c.Workers)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format %q: want text or json", c.LogFormat)
	}
	if c.MetricsListen != "" && c.MetricsListen == c.Listen && !strings.HasSuffix(c.Listen, ":0") {
		return fmt.Errorf("--metrics-listen %q is the --listen address; give metrics their own port", c.MetricsListen)
	}
	if c.SyslogListen != "" {
		if _, _, err := net.SplitHostPort(c.SyslogListen); err != nil {
			return fmt.Errorf("--syslog-listen %q: want host:port, e.g. 0.0.0.0:5514", c.SyslogListen)
		}
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return errors.New("--public-url: want the address users open, http:// or https:// without credentials, query or fragment, e.g. https://backupd.example")
		}
	}
	if c.NotifyWindow < 0 || c.NotifyWindow > time.Hour {
		return fmt.Errorf("--notify-window %s: want 0 (the default, 60s) up to 1h", c.NotifyWindow)
	}
	if c.StaleAfter < 0 || (c.StaleAfter > 0 && c.StaleAfter < time.Hour) {
		return fmt.Errorf("--stale-after %s: want at least 1h (0: the default, 48h)", c.StaleAfter)
	}
	if c.Git.MaxWait < 0 || c.Git.MaxWait > 24*time.Hour {
		return fmt.Errorf("--git-max-wait %s: want 0 (the default, 10m) up to 24h", c.Git.MaxWait)
	}
	if c.SyslogDebounce < 0 || c.SyslogDebounce > time.Hour {
		return fmt.Errorf("--syslog-debounce %s: want 0 (the default) up to 1h", c.SyslogDebounce)
	}
	return nil
}

// ValidateStore checks --data and --db, which every command that opens
// the store needs. An error never repeats the --db value: it may hold a
// password.
func (c Config) ValidateStore() error {
	if strings.TrimSpace(c.DataDir) == "" {
		return errors.New("--data must name a directory")
	}
	if c.DB == "" {
		return nil
	}
	if !strings.HasPrefix(c.DB, "postgres://") && !strings.HasPrefix(c.DB, "postgresql://") {
		scheme, _, ok := strings.Cut(c.DB, "://")
		what := "it is not a URL"
		if ok && scheme != "" && len(scheme) < 20 && !strings.ContainsAny(scheme, ":@/") {
			what = fmt.Sprintf("it names %q", scheme+"://")
		}
		return fmt.Errorf("--db (BACKUPD_DB): want empty for SQLite in --data, or a PostgreSQL URL postgres://user:password@host:port/database; %s", what)
	}
	u, err := url.Parse(c.DB)
	if err != nil {
		return errors.New("--db (BACKUPD_DB): the PostgreSQL URL cannot be read; want postgres://user:password@host:port/database (characters such as @ : / in the password percent-encoded)")
	}
	if strings.Trim(u.Path, "/") == "" {
		return errors.New("--db (BACKUPD_DB): the PostgreSQL URL names no database; want postgres://user:password@host:port/database")
	}
	return nil
}

// Postgres reports whether the store is a PostgreSQL database.
func (c Config) Postgres() bool { return c.DB != "" }

func (c Config) level() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return l, fmt.Errorf("--log-level %q: want debug, info, warn or error", c.LogLevel)
	}
	return l, nil
}

// Logger builds the process logger on w (stderr in production).
func (c Config) Logger(w io.Writer) *slog.Logger {
	if w == nil {
		w = os.Stderr
	}
	lvl, _ := c.level()
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// ZoneName is the IANA name of the configured time zone, for what is
// stored (schedules): Timezone when set, else the host's zone as far as it
// can be named ($TZ, /etc/timezone, the /etc/localtime link), else UTC.
func (c Config) ZoneName() string {
	candidates := []string{c.Timezone, os.Getenv("TZ")}
	if raw, err := os.ReadFile("/etc/timezone"); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(raw)))
	}
	if link, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(link, "zoneinfo/"); ok {
			candidates = append(candidates, name)
		}
	}
	for _, name := range candidates {
		name = strings.TrimPrefix(name, ":")
		if name == "" || name == "Local" {
			continue
		}
		if _, err := time.LoadLocation(name); err == nil {
			return name
		}
	}
	return "UTC"
}
