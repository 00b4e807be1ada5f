package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/cpu"
)

// sshBufferLimit is how much shell output is held for a caller that is not
// reading; beyond it the SSH window closes and the device waits.
const sshBufferLimit = 1 << 20

// maxKeyboardInteractiveRounds stops a device that keeps asking after every
// answer (a wrong password in a loop) from spinning until the login timeout.
const maxKeyboardInteractiveRounds = 4

// errTooManyPrompts is returned by our keyboard-interactive callback.
var errTooManyPrompts = errors.New("keyboard-interactive: device keeps asking")

// DialSSH connects, authenticates and opens an interactive shell with a
// PTY. It returns the shell stream and the host key the device presented (SSH
// wire format), which the caller pins on first use. When the key differs
// from the pinned one the error wraps ErrHostKeyChanged and the presented key
// is still returned, so an operator can be shown what to accept. The context
// and the Options timeouts bound every stage; once DialSSH returns, the
// stream is bounded by its read deadline and by Close, not by ctx.
func DialSSH(ctx context.Context, o Options) (Conn, []byte, error) {
	l, presented, err := loginSSH(ctx, o)
	if err != nil {
		return nil, presented, err
	}
	defer l.cancel()

	conn, err := openShell(l.client, l.o)
	fired := l.stopWatch()
	if err == nil && fired {
		conn.Close()
		err = stageTimeout(ctx, l.lctx)
	}
	if err != nil {
		_ = l.client.Close()
		if fired || isTimeout(err) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
			if fired {
				err = stageTimeout(ctx, l.lctx)
			}
			return nil, nil, l.fail(ErrConnect, "shell", err)
		}
		return nil, nil, l.fail(nil, "shell", err)
	}
	_ = l.nc.SetDeadline(time.Time{})
	return conn, l.hostKey, nil
}

// sshLogin is an authenticated connection whose login stage is still
// running: the socket deadline and the watcher bound what the caller does
// next (open a shell) until it calls stopWatch and cancel.
type sshLogin struct {
	o         Options
	addr      string
	nc        net.Conn
	client    *ssh.Client
	hostKey   []byte
	lctx      context.Context
	cancel    context.CancelFunc
	stopWatch func() bool // reports whether the watcher closed the socket
}

func (l *sshLogin) fail(class error, stage string, err error) error {
	return sshFail(l.addr, class, stage, err)
}

func sshFail(addr string, class error, stage string, err error) error {
	if class == nil {
		return fmt.Errorf("transport: ssh %s: %s: %w", addr, stage, err)
	}
	return fmt.Errorf("transport: ssh %s: %s: %w: %w", addr, stage, class, err)
}

// loginSSH connects and authenticates. On a host key mismatch it returns
// the key the device presented with the error.
func loginSSH(ctx context.Context, o Options) (*sshLogin, []byte, error) {
	o, err := o.withDefaults(22)
	if err != nil {
		return nil, nil, err
	}
	addr := o.addr()
	fail := func(class error, stage string, err error) error { return sshFail(addr, class, stage, err) }

	var pinned ssh.PublicKey
	if o.PinnedHostKey != nil {
		if pinned, err = parsePublicKey(o.PinnedHostKey); err != nil {
			return nil, nil, fail(nil, "pinned host key", err)
		}
	}
	auths, err := authMethods(o)
	if err != nil {
		return nil, nil, fail(ErrAuth, "private key", err)
	}

	var (
		hostKey        []byte
		keyMismatch    error // set by the callback when the key differs
		tooManyPrompts bool
	)
	algos := sshAlgorithms()
	cfg := &ssh.ClientConfig{
		Config: ssh.Config{
			KeyExchanges: algos.KeyExchanges,
			Ciphers:      algos.Ciphers,
			MACs:         algos.MACs,
		},
		User:              o.Username,
		Auth:              auths(&tooManyPrompts),
		HostKeyAlgorithms: algos.HostKeys,
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			hostKey = key.Marshal()
			if pinned != nil && !bytes.Equal(hostKey, pinned.Marshal()) {
				keyMismatch = fmt.Errorf("device presented %s %s, pinned is %s %s",
					key.Type(), ssh.FingerprintSHA256(key), pinned.Type(), ssh.FingerprintSHA256(pinned))
				return fmt.Errorf("%w: %w", ErrHostKeyChanged, keyMismatch)
			}
			return nil
		},
	}
	if pinned != nil {
		cfg.HostKeyAlgorithms = hostKeyAlgorithmsFor(pinned.Type())
	}

	nc, err := dialTCP(ctx, "ssh", o)
	if err != nil {
		return nil, nil, err
	}

	// The handshake, authentication and shell set-up share LoginTimeout. The
	// socket deadline stops a device that accepts TCP and never sends its
	// banner; the watcher closes the socket when ctx is cancelled.
	lctx, cancel := context.WithTimeout(ctx, o.LoginTimeout)
	dl, _ := lctx.Deadline()
	_ = nc.SetDeadline(dl)
	stopWatch := closeOnDone(lctx, nc)

	sc, chans, reqs, err := ssh.NewClientConn(nc, addr, cfg)
	if err != nil {
		fired := stopWatch()
		cancel()
		_ = nc.Close()
		switch {
		case keyMismatch != nil:
			return nil, hostKey, fail(ErrHostKeyChanged, "handshake", keyMismatch)
		case pinned != nil && strings.Contains(err.Error(), "no common algorithm for host key"):
			return nil, nil, fail(ErrHostKeyChanged, "handshake",
				fmt.Errorf("device offers no %s host key any more: %w", pinned.Type(), err))
		case fired:
			return nil, nil, fail(ErrConnect, "handshake", stageTimeout(ctx, lctx))
		case tooManyPrompts || strings.Contains(err.Error(), "unable to authenticate"):
			return nil, nil, fail(ErrAuth, "login", err)
		default:
			return nil, nil, fail(ErrConnect, "handshake", err)
		}
	}
	return &sshLogin{
		o: o, addr: addr, nc: nc, client: ssh.NewClient(sc, chans, reqs), hostKey: hostKey,
		lctx: lctx, cancel: cancel, stopWatch: stopWatch,
	}, nil, nil
}

// stageTimeout says why lctx ended: the caller's ctx or LoginTimeout.
func stageTimeout(ctx, lctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("login timeout exceeded: %w", lctx.Err())
}

// openShell requests a session, a PTY and a shell, and starts the goroutine
// that drains the output into the deadline-aware stream.
func openShell(client *ssh.Client, o Options) (*sshConn, error) {
	session, err := client.NewSession()
	if err != nil {
		return nil, err
	}
	stdin, err := session.StdinPipe()
	if err != nil {
		session.Close()
		return nil, err
	}
	stdout, err := session.StdoutPipe()
	if err != nil {
		session.Close()
		return nil, err
	}
	out := newStream(sshBufferLimit)
	// Stderr is drained by x/crypto's own copier, which ends with the
	// channel; without a PTY some devices print prompts there.
	session.Stderr = out

	modes := ssh.TerminalModes{ssh.TTY_OP_ISPEED: 38400, ssh.TTY_OP_OSPEED: 38400}
	// Some gear refuses a PTY but still gives a shell: a refusal is only
	// reported when the shell fails too.
	ptyErr := session.RequestPty("vt100", o.TermHeight, o.TermWidth, modes)
	if err := session.Shell(); err != nil {
		session.Close()
		out.close()
		if ptyErr != nil {
			return nil, fmt.Errorf("%w (after PTY request: %v)", err, ptyErr)
		}
		return nil, err
	}

	c := &sshConn{client: client, session: session, stdin: stdin, out: out}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				out.finish(fmt.Errorf("transport: ssh reader panic: %v", r))
			}
		}()
		_, err := io.Copy(out, stdout)
		out.finish(err)
	}()
	return c, nil
}

// sshConn is the shell stream over one SSH session.
type sshConn struct {
	client    *ssh.Client
	session   *ssh.Session
	stdin     io.WriteCloser
	out       *stream
	wg        sync.WaitGroup
	closeOnce sync.Once
}

var _ Conn = (*sshConn)(nil)

func (c *sshConn) Read(p []byte) (int, error)        { return c.out.Read(p) }
func (c *sshConn) Write(p []byte) (int, error)       { return c.stdin.Write(p) }
func (c *sshConn) SetReadDeadline(t time.Time) error { return c.out.SetReadDeadline(t) }

// Close ends the session and the connection and waits for the reader
// goroutine, which ends as soon as the socket is closed.
func (c *sshConn) Close() error {
	c.closeOnce.Do(func() {
		c.out.close()
		_ = c.session.Close()
		_ = c.client.Close()
		c.wg.Wait()
	})
	return nil
}

// authMethods builds the auth methods; the returned function binds the flag
// set when keyboard-interactive gives up on a device that keeps asking.
func authMethods(o Options) (func(tooMany *bool) []ssh.AuthMethod, error) {
	var signer ssh.Signer
	if len(o.PrivateKey) > 0 {
		var err error
		if len(o.PrivateKeyPassphrase) > 0 {
			signer, err = ssh.ParsePrivateKeyWithPassphrase(o.PrivateKey, o.PrivateKeyPassphrase)
		} else {
			signer, err = ssh.ParsePrivateKey(o.PrivateKey)
		}
		if err != nil {
			var missing *ssh.PassphraseMissingError
			if errors.As(err, &missing) {
				return nil, errors.New("private key is encrypted and no passphrase was given")
			}
			return nil, errors.New("private key cannot be parsed (or the passphrase is wrong)")
		}
	}
	password := o.Password
	usePassword := password != "" || signer == nil
	return func(tooMany *bool) []ssh.AuthMethod {
		var methods []ssh.AuthMethod
		if signer != nil {
			methods = append(methods, ssh.PublicKeys(signer))
		}
		if usePassword {
			rounds := 0
			methods = append(methods,
				ssh.Password(password),
				ssh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
					if len(questions) == 0 {
						return nil, nil // an informational round
					}
					rounds++
					if rounds > maxKeyboardInteractiveRounds {
						*tooMany = true
						return nil, errTooManyPrompts
					}
					answers := make([]string, len(questions))
					for i := range answers {
						answers[i] = password
					}
					return answers, nil
				}))
		}
		return methods
	}, nil
}

// sshAlgorithms is everything x/crypto implements, secure first, then the
// insecure ones old gear still needs (diffie-hellman-group1-sha1, CBC,
// ssh-rsa, ssh-dss). Certificate host keys are left out: pinning a
// certificate would break on every renewal.
func sshAlgorithms() ssh.Algorithms {
	sup, insec := ssh.SupportedAlgorithms(), ssh.InsecureAlgorithms()
	join := func(a, b []string) []string {
		out := slices.Clone(a)
		for _, s := range b {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	hostKeys := slices.DeleteFunc(join(sup.HostKeys, insec.HostKeys), func(s string) bool {
		return strings.Contains(s, "-cert-")
	})
	return ssh.Algorithms{
		KeyExchanges: join(sup.KeyExchanges, insec.KeyExchanges),
		Ciphers:      preferCipher(join(sup.Ciphers, insec.Ciphers), aesGCMHardware),
		MACs:         join(sup.MACs, insec.MACs),
		HostKeys:     hostKeys,
	}
}

// aesGCMHardware is whether this CPU runs AES-GCM in hardware (AES and
// carry-less multiply instructions, as crypto/tls decides). Without them
// ChaCha20-Poly1305 costs a fraction of AES-GCM's time: a Raspberry Pi 4,
// or any 32-bit ARM, has no AES instructions.
var aesGCMHardware = runtime.GOARCH == "amd64" && cpu.X86.HasAES && cpu.X86.HasPCLMULQDQ ||
	runtime.GOARCH == "arm64" && cpu.ARM64.HasAES && cpu.ARM64.HasPMULL ||
	runtime.GOARCH == "s390x" && cpu.S390X.HasAES && cpu.S390X.HasAESCTR && cpu.S390X.HasGHASH ||
	runtime.GOARCH == "ppc64" || runtime.GOARCH == "ppc64le"

// preferCipher orders the ciphers the client offers: x/crypto's order
// (AES-GCM first) on a CPU with AES-GCM in hardware, ChaCha20-Poly1305
// first on one without. The peer takes the first of ours it supports;
// every cipher stays offered, the insecure ones old gear needs last.
func preferCipher(ciphers []string, aesHardware bool) []string {
	if aesHardware || !slices.Contains(ciphers, ssh.CipherChaCha20Poly1305) {
		return ciphers
	}
	out := []string{ssh.CipherChaCha20Poly1305}
	for _, c := range ciphers {
		if c != ssh.CipherChaCha20Poly1305 {
			out = append(out, c)
		}
	}
	return out
}

// hostKeyAlgorithmsFor restricts negotiation to the pinned key's type, so a
// device holding several keys presents the one we know.
func hostKeyAlgorithmsFor(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}

// parsePublicKey accepts the wire format and, for convenience, an
// authorized_keys line.
func parsePublicKey(b []byte) (ssh.PublicKey, error) {
	if k, err := ssh.ParsePublicKey(b); err == nil {
		return k, nil
	}
	k, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return nil, errors.New("not an SSH public key")
	}
	return k, nil
}
