// Package collect gets a configuration off a device: it picks the
// transport, logs in, drives the platform's command line and returns the
// text, bounded in time at every stage. It is the one call the job engine
// makes; retries, scheduling and storage are the engine's.
package collect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"backupd/app/collect/driver"
	"backupd/app/collect/transport"
	"backupd/app/netguard"
)

// Timeouts bound the stages of one collection. A zero field takes its
// default.
type Timeouts struct {
	// Connect bounds the TCP connect (default 10s).
	Connect time.Duration
	// Login bounds everything from the connection to the first usable
	// prompt: SSH handshake and authentication or the telnet login, the
	// banner, enable and paging off (default 30s).
	Login time.Duration
	// Command bounds each command (default 60s).
	Command time.Duration
	// Job bounds the whole collection (default 5 minutes).
	Job time.Duration
}

// Defaults for Timeouts and Target.MaxOutput.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultLoginTimeout   = 30 * time.Second
	DefaultCommandTimeout = 60 * time.Second
	DefaultJobTimeout     = 5 * time.Minute
	DefaultMaxOutput      = 16 << 20
)

func (t Timeouts) withDefaults() Timeouts {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.Connect, DefaultConnectTimeout)
	def(&t.Login, DefaultLoginTimeout)
	def(&t.Command, DefaultCommandTimeout)
	def(&t.Job, DefaultJobTimeout)
	return t
}

// Target is one device to collect from, with everything needed to do it.
type Target struct {
	// Platform is a driver platform ID, e.g. "cisco_ios".
	Platform string
	Host     string
	// Port 0 means the method's default (22 or 23).
	Port int
	// Method is "ssh" or "telnet" ("" means ssh).
	Method string
	// Username, Password and EnablePassword log in and raise privilege.
	// An empty Username on telnet means the line asks only for a password.
	Username, Password, EnablePassword string
	// PrivateKey is a PEM private key offered before the password (SSH).
	PrivateKey           []byte
	PrivateKeyPassphrase string
	// PinnedHostKey is the SSH wire-format public key pinned earlier; nil
	// means trust on first use.
	PinnedHostKey []byte
	// Encoding is the device's character set ("" = utf-8).
	Encoding string
	// Commands are run in order; nil or empty means the platform's
	// default commands.
	Commands []string
	Timeouts Timeouts
	// MaxOutput caps each command's output in bytes (0 = 16 MiB).
	MaxOutput int
	// Definition, when set, is the platform to collect with instead of
	// the registry's Platform: a definition an administrator is trying
	// before saving it. It is checked first (driver.Prepare).
	Definition *driver.Platform
	// Transcript, when set, records the session: what was sent and
	// received on the stream, exec requests and their output.
	Transcript *Transcript
	// Control refuses, before connecting, the addresses the outbound
	// policy refuses (netguard.Policy.Control); nil refuses none.
	Control func(network, address string, c syscall.RawConn) error
}

// Result is what a collection produced.
type Result struct {
	// Text is every command's output joined, decoded to UTF-8, with "\n"
	// line endings, ending in exactly one "\n". Trailing spaces of each
	// line and trailing blank lines of each output are dropped: terminals
	// leave them behind erased pager prompts and before prompts, so
	// keeping them would make unchanged devices look changed.
	Text string
	// HostKey is the SSH host key the device presented (wire format), to
	// pin on first use; nil for telnet. It is also set with a
	// host_key_changed error: it is the key an operator would accept.
	HostKey []byte
}

// Error is a failed collection. Its message is written for a network
// administrator and never holds a password or configuration text.
type Error struct {
	// Reason is the class of failure, see Reason.
	Reason string
	msg    string
	err    error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

// Failure reasons.
const (
	ReasonConnect        = "connect"
	ReasonAuth           = "auth"
	ReasonHostKeyChanged = "host_key_changed"
	ReasonTimeout        = "timeout"
	ReasonEnable         = "enable"
	ReasonOutputTooLarge = "output_too_large"
	ReasonProtocol       = "protocol"
	// ReasonRefused: the address is one backupd does not connect to
	// (link-local, cloud metadata) and the outbound allow list does not
	// hold it. Not retried: a setting has to change.
	ReasonRefused = "address_refused"
)

// Reason classifies an error from Collect for metrics and retries:
// "connect", "auth", "host_key_changed", "timeout", "enable",
// "output_too_large", "address_refused", "protocol" (anything else), ""
// for nil.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ReasonProtocol
}

// Retryable reports whether a retry with backoff may help: only connect
// failures, never rejected credentials (retries lock accounts), a changed
// host key (an operator must decide) or a device that stopped answering
// after login.
func Retryable(err error) bool { return RetryableReason(Reason(err)) }

// RetryableReason is Retryable for a failure known by its reason (one a
// remote collector reported).
func RetryableReason(reason string) bool { return reason == ReasonConnect }

// runner is a logged-in command line: an interactive session or exec
// requests.
type runner interface {
	Run(ctx context.Context, cmd string) (string, error)
}

// fileFetcher copies a file off the device over its SSH login (an
// "scp:<path>" command); both SSH command lines offer it.
type fileFetcher interface {
	FetchSCP(ctx context.Context, path string, max int) ([]byte, error)
}

// Collect logs in to the device, runs the commands and returns their
// output. Every stage is bounded by t.Timeouts and by ctx. A command
// "scp:<path>" is a file fetched over SCP on the SSH login rather than a
// command typed (see driver.SCPPrefix); when every command is one, no
// shell is opened.
func Collect(ctx context.Context, t Target) (Result, error) {
	var pl driver.Platform
	if t.Definition != nil {
		p, err := driver.Prepare(*t.Definition)
		if err != nil {
			return Result{}, &Error{Reason: ReasonProtocol, msg: err.Error()}
		}
		pl = p
	} else {
		p, ok := driver.Lookup(t.Platform)
		if !ok {
			return Result{}, &Error{Reason: ReasonProtocol, msg: fmt.Sprintf("unknown platform %q", t.Platform)}
		}
		pl = p
	}
	d := pl.Dialogue
	commands := t.Commands
	if len(commands) == 0 {
		commands = strings.Split(pl.DefaultCommands, "\n")
	}
	commands = trimCommands(commands)
	if len(commands) == 0 {
		return Result{}, &Error{Reason: ReasonProtocol, msg: "no commands to run"}
	}
	if _, err := driver.Decode(t.Encoding, nil); err != nil {
		return Result{}, &Error{Reason: ReasonProtocol, msg: err.Error()}
	}
	if strings.TrimSpace(t.Host) == "" {
		return Result{}, &Error{Reason: ReasonProtocol, msg: "no host given"}
	}
	method := strings.ToLower(t.Method)
	if method == "" {
		method = "ssh"
	}
	defPort, ok := driver.LoginMethods[method]
	if !ok {
		return Result{}, &Error{Reason: ReasonProtocol, msg: fmt.Sprintf("unknown login method %q (ssh or telnet)", t.Method)}
	}
	if t.Port == 0 {
		t.Port = defPort
	}
	for _, cmd := range commands {
		path, ok := driver.SCPPath(cmd)
		if !ok {
			continue
		}
		if method != "ssh" {
			return Result{}, &Error{Reason: ReasonProtocol, msg: fmt.Sprintf(
				"`%s`: scp: needs ssh: a file is fetched over the device's SSH login, and this device is set to log in over %s", cmd, method)}
		}
		if err := transport.CheckSCPPath(path); err != nil {
			return Result{}, &Error{Reason: ReasonProtocol, err: err, msg: fmt.Sprintf("`%s`: %s", cmd, err.Error())}
		}
	}
	t.Timeouts = t.Timeouts.withDefaults()
	if t.MaxOutput <= 0 {
		t.MaxOutput = DefaultMaxOutput
	}

	if t.Transcript != nil {
		t.Transcript.setSecrets(t.Password, t.EnablePassword, t.PrivateKeyPassphrase)
	}
	c := &collector{t: t, d: d, pl: pl, addr: net.JoinHostPort(t.Host, strconv.Itoa(t.Port))}
	ctx, cancel := context.WithTimeout(ctx, t.Timeouts.Job)
	defer cancel()
	res, err := c.run(ctx, method, commands)
	if err != nil {
		return res, c.redact(err)
	}
	return res, nil
}

func trimCommands(cmds []string) []string {
	var out []string
	for _, c := range cmds {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

type collector struct {
	t    Target
	d    driver.Dialogue
	pl   driver.Platform
	addr string
	exec bool // one SSH exec request per command
	// filesOnly: every command is a file fetched over SCP; no shell.
	filesOnly bool
}

func (c *collector) options() transport.Options {
	return transport.Options{
		Host:                 c.t.Host,
		Port:                 c.t.Port,
		Username:             c.t.Username,
		Password:             c.t.Password,
		PrivateKey:           c.t.PrivateKey,
		PrivateKeyPassphrase: []byte(c.t.PrivateKeyPassphrase),
		PinnedHostKey:        c.t.PinnedHostKey,
		ConnectTimeout:       c.t.Timeouts.Connect,
		LoginTimeout:         c.t.Timeouts.Login,
		Control:              c.t.Control,
	}
}

func (c *collector) run(ctx context.Context, method string, commands []string) (Result, error) {
	c.filesOnly = !slices.ContainsFunc(commands, func(cmd string) bool { _, file := driver.SCPPath(cmd); return !file })
	r, files, hostKey, closeConn, err := c.login(ctx, method)
	if err != nil {
		return Result{HostKey: hostKey}, err
	}
	defer closeConn()

	var text strings.Builder
	for _, cmd := range commands {
		cctx, cancel := context.WithTimeout(ctx, c.t.Timeouts.Command)
		var out string
		if path, ok := driver.SCPPath(cmd); ok {
			out, err = c.fetch(ctx, cctx, files, cmd, path)
		} else {
			out, err = r.Run(cctx, cmd)
		}
		cancel()
		var done *Error
		if errors.As(err, &done) {
			return Result{HostKey: hostKey}, done
		}
		if err != nil {
			return Result{HostKey: hostKey}, c.commandError(ctx, cmd, err)
		}
		out = c.pl.StripOutput(out)
		if out = strings.TrimRight(out, "\n"); out != "" {
			text.WriteString(out)
			text.WriteByte('\n')
		}
	}
	if text.Len() == 0 {
		return Result{HostKey: hostKey}, &Error{Reason: ReasonProtocol,
			msg: fmt.Sprintf("%s: the device printed nothing for %s", c.addr, quoteCommands(commands))}
	}
	return Result{Text: text.String(), HostKey: hostKey}, nil
}

// login connects and logs in, up to a command line ready for the first
// command. Over SSH the transport bounds the connect by Connect and the
// handshake and authentication by Login, and the prompt that follows gets
// what is left of both; over telnet the login dialogue and the prompt
// share Login once connected. The presented host key is returned with a
// host key error too.
func (c *collector) login(ctx context.Context, method string) (runner, fileFetcher, []byte, func() error, error) {
	dctx, cancel := context.WithTimeout(ctx, c.t.Timeouts.Connect+c.t.Timeouts.Login)
	defer cancel()
	if tr := c.t.Transcript; tr != nil {
		tr.note(fmt.Sprintf("[%s] connecting to %s as %s\n", method, c.addr, c.t.Username))
	}
	switch {
	case method == "ssh" && c.filesOnly:
		// Files only: the SSH login is all a fetch needs, and a device
		// that allows one session per connection (APC cards) is not
		// asked for a shell beside it.
		client, key, err := transport.DialSSHExec(dctx, c.options())
		if err != nil {
			return nil, nil, key, nil, c.dialError(ctx, err, key)
		}
		if tr := c.t.Transcript; tr != nil {
			tr.note(fmt.Sprintf("[ssh] logged in to %s as %s; files over SCP, no shell\n", c.addr, c.t.Username))
		}
		return nil, client, key, client.Close, nil
	case method == "ssh" && c.d.Exec:
		c.exec = true
		client, key, err := transport.DialSSHExec(dctx, c.options())
		if err != nil {
			return nil, nil, key, nil, c.dialError(ctx, err, key)
		}
		var e driver.Execer = client
		if tr := c.t.Transcript; tr != nil {
			tr.note(fmt.Sprintf("[ssh] logged in to %s as %s; one exec request per command\n", c.addr, c.t.Username))
			e = recordingExec{e: client, t: tr}
		}
		s := driver.NewExecSession(e, c.d, c.t.MaxOutput)
		if err := s.SetEncoding(c.t.Encoding); err != nil {
			client.Close()
			return nil, nil, key, nil, &Error{Reason: ReasonProtocol, msg: err.Error()}
		}
		return s, client, key, client.Close, nil
	case method == "ssh":
		conn, key, err := transport.DialSSH(dctx, c.options())
		if err != nil {
			return nil, nil, key, nil, c.dialError(ctx, err, key)
		}
		// An SSH shell's connection opens a session channel beside it
		// for each file.
		files, _ := conn.(fileFetcher)
		if tr := c.t.Transcript; tr != nil {
			tr.note(fmt.Sprintf("[ssh] logged in to %s as %s; interactive shell\n", c.addr, c.t.Username))
			conn = &recordingConn{Conn: conn, t: tr}
		}
		s, err := c.start(dctx, conn)
		if err != nil {
			conn.Close()
			return nil, nil, key, nil, err
		}
		return s, files, key, conn.Close, nil
	default:
		conn, err := transport.DialTelnet(dctx, c.options())
		if err != nil {
			return nil, nil, nil, nil, c.dialError(ctx, err, nil)
		}
		if tr := c.t.Transcript; tr != nil {
			tr.note(fmt.Sprintf("[telnet] connected to %s\n", c.addr))
			conn = &recordingConn{Conn: conn, t: tr}
		}
		lctx, cancel := context.WithTimeout(ctx, c.t.Timeouts.Login)
		defer cancel()
		user := c.t.Username
		if user != "" {
			user += c.d.TelnetUserSuffix
		}
		if err := transport.TelnetLogin(lctx, conn, user, c.t.Password); err != nil {
			conn.Close()
			return nil, nil, nil, nil, c.dialError(ctx, err, nil)
		}
		if c.d.LineEnd == "" {
			c.d.LineEnd = "\r\n" // the telnet NVT newline
		}
		s, err := c.start(lctx, conn)
		if err != nil {
			conn.Close()
			return nil, nil, nil, nil, err
		}
		return s, nil, nil, conn.Close, nil
	}
}

// fetch copies the file of an "scp:<path>" command and returns its text.
// Its failures come back as *Error; none quotes the file.
func (c *collector) fetch(ctx, cctx context.Context, files fileFetcher, cmd, path string) (string, error) {
	if files == nil {
		return "", &Error{Reason: ReasonProtocol,
			msg: fmt.Sprintf("%s: `%s`: scp: needs ssh: this login cannot open an SCP session", c.addr, cmd)}
	}
	tr := c.t.Transcript
	if tr != nil {
		tr.note("[scp] scp -f " + path + "\n")
	}
	raw, err := files.FetchSCP(cctx, path, c.t.MaxOutput)
	if err != nil {
		return "", c.fileError(ctx, cctx, cmd, err)
	}
	if tr != nil {
		tr.note(fmt.Sprintf("[scp] received %d bytes\n", len(raw)))
	}
	text, err := driver.FileText(c.t.Encoding, raw, cmd)
	if err != nil {
		return "", c.commandError(ctx, cmd, err)
	}
	return text, nil
}

// fileError explains a failed SCP fetch. The device's own refusal is
// quoted (one line, printable); the file never is.
func (c *collector) fileError(ctx, cctx context.Context, cmd string, err error) error {
	var refused *transport.SCPError
	switch {
	case errors.Is(err, transport.ErrFileTooLarge):
		return &Error{Reason: ReasonOutputTooLarge, err: err,
			msg: fmt.Sprintf("%s: the file of `%s` exceeds the limit of %s", c.addr, cmd, size(c.t.MaxOutput))}
	case errors.As(err, &refused):
		return &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: `%s`: %s (check the path, and that SCP is enabled on the device for this account)", c.addr, cmd, refused.Error())}
	case cctx.Err() != nil:
		why := fmt.Sprintf("the command timeout (%s)", c.t.Timeouts.Command)
		if ctx.Err() != nil {
			why = fmt.Sprintf("the job timeout (%s) or a cancellation", c.t.Timeouts.Job)
		}
		return &Error{Reason: ReasonTimeout, err: err,
			msg: fmt.Sprintf("%s: timed out fetching `%s` over SCP: %s ran out", c.addr, cmd, why)}
	case errors.Is(err, transport.ErrSCPProtocol):
		return &Error{Reason: ReasonProtocol, err: err, msg: fmt.Sprintf("%s: `%s`: %s", c.addr, cmd, safeText(err))}
	case errors.Is(err, transport.ErrConnectionLost):
		return &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: the device closed the connection during `%s`; the file is incomplete and was not kept", c.addr, cmd)}
	}
	return &Error{Reason: ReasonProtocol, err: err, msg: fmt.Sprintf("%s: `%s`: %s", c.addr, cmd, safeText(err))}
}

// start waits for the prompt, raises privilege and turns paging off.
func (c *collector) start(lctx context.Context, conn driver.Conn) (*driver.Session, error) {
	s := driver.NewSession(conn, c.d, c.t.MaxOutput)
	if err := s.SetEncoding(c.t.Encoding); err != nil {
		return nil, &Error{Reason: ReasonProtocol, msg: err.Error()}
	}
	s.SetUsername(c.t.Username)
	s.SetPassword(c.t.Password)
	if err := s.Start(lctx, c.t.EnablePassword); err != nil {
		return nil, c.loginError(err)
	}
	return s, nil
}

func quoteCommands(cmds []string) string {
	q := make([]string, len(cmds))
	for i, c := range cmds {
		q[i] = "`" + c + "`"
	}
	return strings.Join(q, ", ")
}

// dialError explains a transport failure: connect, authentication, host
// key or handshake.
func (c *collector) dialError(ctx context.Context, err error, presented []byte) error {
	out := c.dialFailure(ctx, err, presented)
	if tr := c.t.Transcript; tr != nil {
		// The message is written for the operator, free of secrets.
		tr.note("[login] " + out.Error() + "\n")
	}
	return out
}

func (c *collector) dialFailure(ctx context.Context, err error, presented []byte) error {
	var opErr *net.OpError
	var refused *netguard.RefusedError
	switch {
	case errors.Is(err, transport.ErrHostKeyChanged):
		return &Error{Reason: ReasonHostKeyChanged, err: err, msg: c.hostKeyMessage(presented)}
	case errors.Is(err, transport.ErrAuth):
		msg := fmt.Sprintf("%s: authentication failed for user %s", c.addr, c.t.Username)
		if c.t.Username == "" {
			msg = fmt.Sprintf("%s: authentication failed (no username set)", c.addr)
		}
		if strings.Contains(err.Error(), "private key") {
			msg = fmt.Sprintf("%s: the private key for user %s cannot be used: it is malformed, encrypted without a passphrase given, or the passphrase is wrong", c.addr, c.t.Username)
		}
		return &Error{Reason: ReasonAuth, err: err, msg: msg}
	case errors.As(err, &refused):
		return &Error{Reason: ReasonRefused, err: err, msg: fmt.Sprintf("connect %s: %s", c.addr, refused.Error())}
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return &Error{Reason: ReasonConnect, err: err, msg: fmt.Sprintf("connect %s: %s", c.addr, netReason(opErr, c.t.Timeouts.Connect))}
	case errors.Is(err, transport.ErrConnect):
		var why string
		switch {
		case ctx.Err() != nil:
			why = "the job was cancelled or ran out of time while logging in"
		case isTimeout(err):
			why = fmt.Sprintf("the device accepted the connection but the %s login did not complete within %s",
				c.methodName(), c.t.Timeouts.Login)
		case strings.Contains(err.Error(), "no common algorithm"):
			why = "SSH negotiation failed: " + innermost(err)
		default:
			why = "the connection failed during login: " + innermost(err)
		}
		return &Error{Reason: ReasonConnect, err: err, msg: fmt.Sprintf("connect %s: %s", c.addr, why)}
	default:
		return &Error{Reason: ReasonProtocol, err: err, msg: fmt.Sprintf("%s: %s", c.addr, innermost(err))}
	}
}

func (c *collector) methodName() string {
	if strings.EqualFold(c.t.Method, "telnet") {
		return "telnet"
	}
	return "SSH"
}

func (c *collector) hostKeyMessage(presentedKey []byte) string {
	accept := "; if the device was replaced or re-keyed on purpose, accept the new key with `backupd device accept-hostkey ID`"
	pinned := fingerprint(c.t.PinnedHostKey)
	var presented string
	if k, perr := ssh.ParsePublicKey(presentedKey); perr == nil {
		presented = ssh.FingerprintSHA256(k)
	}
	if presented != "" {
		return fmt.Sprintf("%s: host key changed: the device presented %s but %s is pinned%s", c.addr, presented, pinned, accept)
	}
	return fmt.Sprintf("%s: host key changed: the device no longer offers a key of the pinned type (%s is pinned)%s", c.addr, pinned, accept)
}

func fingerprint(key []byte) string {
	if k, err := ssh.ParsePublicKey(key); err == nil {
		return ssh.FingerprintSHA256(k)
	}
	if k, _, _, _, err := ssh.ParseAuthorizedKey(key); err == nil {
		return ssh.FingerprintSHA256(k)
	}
	return "another key"
}

// loginError explains a failure between the login and the first command.
func (c *collector) loginError(err error) error {
	switch {
	case errors.Is(err, driver.ErrLoginRefused):
		return &Error{Reason: ReasonAuth, err: err,
			msg: fmt.Sprintf("%s: authentication failed for user %s: the command line asked for the credentials again", c.addr, c.t.Username)}
	case errors.Is(err, driver.ErrEnable):
		msg := fmt.Sprintf("%s: %s", c.addr, err.Error())
		if errors.Is(err, driver.ErrTimeout) {
			msg = fmt.Sprintf("%s: enable failed: no prompt came back after `%s` within the login timeout (%s)", c.addr, c.d.Enable, c.t.Timeouts.Login)
		}
		return &Error{Reason: ReasonEnable, err: err, msg: msg}
	case errors.Is(err, driver.ErrTimeout):
		return &Error{Reason: ReasonTimeout, err: err,
			msg: fmt.Sprintf("%s: timed out waiting for the prompt after login (%s); %s", c.addr, c.t.Timeouts.Login, detail(err))}
	case errors.Is(err, driver.ErrClosed):
		return &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: the device closed the connection after login, before a usable prompt", c.addr)}
	case errors.Is(err, driver.ErrOutputTooLarge):
		return &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: the device printed more than 1 MiB after login without a recognisable prompt", c.addr)}
	}
	return &Error{Reason: ReasonProtocol, err: err, msg: fmt.Sprintf("%s: login: %s", c.addr, safeText(err))}
}

// commandError explains a failed command.
func (c *collector) commandError(ctx context.Context, cmd string, err error) error {
	switch {
	case errors.Is(err, driver.ErrOutputTooLarge):
		return &Error{Reason: ReasonOutputTooLarge, err: err,
			msg: fmt.Sprintf("%s: the output of `%s` exceeds the limit of %s", c.addr, cmd, size(c.t.MaxOutput))}
	case errors.Is(err, driver.ErrTimeout):
		why := fmt.Sprintf("the command timeout (%s)", c.t.Timeouts.Command)
		if ctx.Err() != nil {
			why = fmt.Sprintf("the job timeout (%s) or a cancellation", c.t.Timeouts.Job)
		}
		what := fmt.Sprintf("timed out waiting for the prompt after `%s`", cmd)
		if c.exec {
			what = fmt.Sprintf("timed out waiting for `%s` to finish", cmd)
		}
		return &Error{Reason: ReasonTimeout, err: err,
			msg: fmt.Sprintf("%s: %s: %s ran out; %s", c.addr, what, why, detail(err))}
	case errors.Is(err, driver.ErrClosed):
		return &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: the device closed the connection during `%s`; the output is incomplete and was not kept", c.addr, cmd)}
	case errors.Is(err, driver.ErrRejected):
		return &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: the device rejected `%s` (unknown command or insufficient privilege: check the template and the account's privilege level or enable password)", c.addr, cmd)}
	case errors.Is(err, driver.ErrBinaryOutput):
		return &Error{Reason: ReasonProtocol, err: err,
			msg: fmt.Sprintf("%s: the output of `%s` contains binary control bytes (line noise or a misbehaving device); it was not kept", c.addr, cmd)}
	}
	return &Error{Reason: ReasonProtocol, err: err, msg: fmt.Sprintf("%s: `%s`: %s", c.addr, cmd, safeText(err))}
}

// detail is the session's own description of a timeout, which holds no
// device text (byte and pager counts only).
func detail(err error) string {
	s := err.Error()
	if i := strings.Index(s, driver.ErrTimeout.Error()); i >= 0 {
		s = s[i+len(driver.ErrTimeout.Error()):]
	}
	s = strings.TrimLeft(s, ": ")
	if s == "" {
		return "the device stopped answering"
	}
	return s
}

// safeText is the message of an error that reached no known class. Driver
// and transport errors never quote configuration text; this keeps only
// the first line, as a guard against a future one that would.
func safeText(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

func innermost(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			break
		}
		if _, joined := u.(interface{ Unwrap() []error }); joined {
			break
		}
		err = u
	}
	return safeText(err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func netReason(err *net.OpError, connectTimeout time.Duration) string {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "host unreachable"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("cannot resolve the host name %q", dnsErr.Name)
	case err.Timeout() || errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", connectTimeout)
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return innermost(err)
}

func size(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// redact is the last guard: no message leaves with a secret in it.
func (c *collector) redact(err error) error {
	e, ok := err.(*Error)
	if !ok {
		e = &Error{Reason: ReasonProtocol, err: err, msg: safeText(err)}
	}
	for _, secret := range []string{c.t.Password, c.t.EnablePassword, c.t.PrivateKeyPassphrase} {
		if len(secret) >= 4 && strings.Contains(e.msg, secret) {
			e.msg = strings.ReplaceAll(e.msg, secret, "********")
		}
	}
	return e
}
