// Package transport is the bytes-in/bytes-out layer of the collector: it
// opens an interactive shell on a device over SSH or telnet and hands the
// platform drivers a stream whose reads can be bounded by a deadline.
//
// Everything on the wire is bounded (STYLE habit 8): the TCP connect by
// Options.ConnectTimeout, the SSH handshake, authentication and shell set-up
// by Options.LoginTimeout, and all of them by the caller's context. A device
// that accepts TCP and then says nothing fails in bounded time.
//
// Errors are classified so the job runner can decide whether to retry:
// ErrConnect (retryable), ErrAuth (never retry: it would lock accounts) and
// ErrHostKeyChanged (needs an operator). Messages never carry secrets.
package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Conn is an interactive shell stream on a device. Read honours
// SetReadDeadline: once the deadline passes Read returns an error for which
// errors.Is(err, os.ErrDeadlineExceeded) holds and which is a net.Error whose
// Timeout method reports true; the stream stays usable after that. Close
// releases the session and every goroutine behind it.
type Conn interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	SetReadDeadline(t time.Time) error
	Close() error
}

// Options describe how to reach and log in to one device.
type Options struct {
	// Host is the device's address or name; Port its TCP port (0 means 22
	// for SSH and 23 for telnet).
	Host string
	Port int

	// Username and Password log in. The password also answers every
	// keyboard-interactive question, as network gear asks for it that way.
	Username string
	Password string

	// PrivateKey, when set, is a PEM private key (OpenSSH, PKCS#1 or PKCS#8)
	// offered before the password. PrivateKeyPassphrase decrypts it when it
	// is encrypted.
	PrivateKey           []byte
	PrivateKeyPassphrase []byte

	// PinnedHostKey is the SSH wire-format public key accepted earlier for
	// this device (an authorized_keys line is accepted too). Nil means trust
	// on first use: any key is accepted and returned by DialSSH so the caller
	// can pin it.
	PinnedHostKey []byte

	// ConnectTimeout bounds the TCP connect (default DefaultConnectTimeout).
	// LoginTimeout bounds the SSH handshake, authentication and the shell
	// set-up together (default DefaultLoginTimeout). The context bounds both.
	ConnectTimeout time.Duration
	LoginTimeout   time.Duration

	// TermWidth and TermHeight are the terminal size announced in the SSH
	// PTY request and the telnet NAWS option. A wide terminal keeps devices
	// from wrapping long configuration lines; 0 rows is taken by most
	// platforms as "do not page". Defaults: DefaultTermWidth and 0.
	TermWidth  int
	TermHeight int

	// Control, when set, is the TCP dialer's Control hook: it sees every
	// address after DNS, before the connect system call, and refuses
	// those the outbound policy refuses (netguard.Policy.Control).
	Control func(network, address string, c syscall.RawConn) error
}

// Defaults used when an Options field is zero.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultLoginTimeout   = 30 * time.Second
	DefaultTermWidth      = 511
)

// Error classes. Match them with errors.Is.
var (
	// ErrConnect: refused, unreachable, or timed out while connecting,
	// handshaking or waiting for the login dialogue. Retryable.
	ErrConnect = errors.New("connection failed")
	// ErrAuth: the device rejected the credentials. Never retry
	// automatically: repeated attempts lock accounts.
	ErrAuth = errors.New("authentication failed")
	// ErrHostKeyChanged: the device presented a different SSH host key than
	// the pinned one. An operator has to accept the new key.
	ErrHostKeyChanged = errors.New("host key changed")
)

// withDefaults validates o and fills in the zero fields.
func (o Options) withDefaults(defaultPort int) (Options, error) {
	if o.Host == "" {
		return o, errors.New("transport: no host given")
	}
	if o.Port == 0 {
		o.Port = defaultPort
	}
	if o.Port < 1 || o.Port > 65535 {
		return o, fmt.Errorf("transport: port %d out of range", o.Port)
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.LoginTimeout <= 0 {
		o.LoginTimeout = DefaultLoginTimeout
	}
	if o.TermWidth <= 0 {
		o.TermWidth = DefaultTermWidth
	}
	if o.TermHeight < 0 {
		o.TermHeight = 0
	}
	return o, nil
}

func (o Options) addr() string { return net.JoinHostPort(o.Host, strconv.Itoa(o.Port)) }

// dialTCP opens the TCP connection, bounded by ctx and ConnectTimeout.
func dialTCP(ctx context.Context, proto string, o Options) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	defer cancel()
	d := net.Dialer{Control: o.Control}
	nc, err := d.DialContext(dctx, "tcp", o.addr())
	if err != nil {
		return nil, fmt.Errorf("transport: %s %s: connect: %w: %w", proto, o.addr(), ErrConnect, err)
	}
	return nc, nil
}

// closeOnDone closes c when ctx ends before stop is called. stop waits for
// the watcher goroutine and reports whether it closed c.
func closeOnDone(ctx context.Context, c io.Closer) (stop func() bool) {
	stopCh := make(chan struct{})
	done := make(chan struct{})
	fired := false
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			fired = true
			_ = c.Close()
		case <-stopCh:
		}
	}()
	var once sync.Once
	return func() bool {
		once.Do(func() { close(stopCh) })
		<-done
		return fired
	}
}

// isTimeout reports whether err is a deadline or context expiry.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// ReadUntil reads from conn until the bytes read so far match re, and
// returns all of them (the match is usually at the end, but bytes that
// arrived in the same read after it are included). It is bounded by ctx and
// by max bytes; on failure it returns what was read with the error. It takes
// over conn's read deadline and leaves it cleared.
func ReadUntil(ctx context.Context, conn Conn, re *regexp.Regexp, max int) ([]byte, error) {
	return readUntil(ctx, conn, max, re.Match)
}

func readUntil(ctx context.Context, conn Conn, max int, match func([]byte) bool) ([]byte, error) {
	if max <= 0 {
		return nil, errors.New("transport: ReadUntil needs a positive byte limit")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dl, _ := ctx.Deadline() // zero when ctx has none: cancellation still applies
	if err := conn.SetReadDeadline(dl); err != nil {
		return nil, err
	}
	// On cancellation, expire the deadline to wake a blocked Read. The mutex
	// and flag keep a late callback from poisoning the deadline after return.
	var mu sync.Mutex
	finished := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !finished {
			_ = conn.SetReadDeadline(time.Now())
		}
	})
	defer func() {
		stop()
		mu.Lock()
		finished = true
		mu.Unlock()
		_ = conn.SetReadDeadline(time.Time{})
	}()

	buf := make([]byte, 0, min(max, 4096))
	chunk := make([]byte, 4096)
	for {
		n, err := conn.Read(chunk[:min(len(chunk), max-len(buf))])
		buf = append(buf, chunk[:n]...)
		if n > 0 && match(buf) {
			return buf, nil
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return buf, cerr
			}
			// The socket deadline is the ctx deadline and may fire first.
			if dl, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) && !time.Now().Before(dl) {
				return buf, context.DeadlineExceeded
			}
			return buf, err
		}
		if len(buf) >= max {
			return buf, fmt.Errorf("transport: no match within %d bytes", max)
		}
	}
}
