package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// ErrConnectionLost: the device dropped the connection while a command
// was running, so its output may be cut short.
var ErrConnectionLost = errors.New("connection lost")

// connLostGrace is how long Exec waits, after a command ended without an
// exit status, to learn whether the whole connection went down with it.
// x/crypto closes the channels of a dead connection just before it reports
// the connection itself closed.
const connLostGrace = 250 * time.Millisecond

// ExecClient is an authenticated SSH connection that runs one command per
// exec request, without a PTY: no prompt, no echo, no pager. Junos,
// RouterOS and Unix hosts are collected this way.
type ExecClient struct {
	client *ssh.Client
	dead   chan struct{} // closed when the connection has ended
	closed atomic.Bool   // set before we close the connection ourselves
	wg     sync.WaitGroup
	once   sync.Once
}

// DialSSHExec connects and authenticates like DialSSH (same timeouts, host
// key pinning and error classes) but opens no shell. It returns the client
// and the host key the device presented.
func DialSSHExec(ctx context.Context, o Options) (*ExecClient, []byte, error) {
	l, presented, err := loginSSH(ctx, o)
	if err != nil {
		return nil, presented, err
	}
	fired := l.stopWatch()
	l.cancel()
	if fired {
		_ = l.client.Close()
		return nil, nil, l.fail(ErrConnect, "login", stageTimeout(ctx, l.lctx))
	}
	_ = l.nc.SetDeadline(time.Time{})
	c := &ExecClient{client: l.client, dead: make(chan struct{})}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_ = c.client.Wait()
		close(c.dead)
	}()
	return c, l.hostKey, nil
}

// lost reports a connection that is closed or closing.
func (c *ExecClient) lost() bool {
	if c.closed.Load() {
		return true
	}
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// shutdown closes the connection; it returns once x/crypto has let go of
// it, so that no later request is written to a half-closed connection.
func (c *ExecClient) shutdown() {
	c.closed.Store(true)
	_ = c.client.Close()
}

// Exec runs cmd and copies what it prints (standard output and error,
// interleaved as they arrive) to out; writes to out are serialised. A
// write error stops the command and is returned as is, so the caller can
// cap the output by failing a write. The exit status is not an error: what
// the device printed is the result. Exec is bounded by ctx; when ctx ends
// the whole connection is closed, since a device that stalls one request
// cannot be trusted with the next.
func (c *ExecClient) Exec(ctx context.Context, cmd string, out io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.lost() {
		return fmt.Errorf("transport: ssh exec: %w", ErrConnectionLost)
	}
	closing := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(closing)
		c.shutdown()
	})
	defer func() {
		if !stop() {
			<-closing // the close has begun: let it finish
		}
	}()

	sess, err := c.newSession(ctx)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("transport: ssh exec: open session: %w: %w", ErrConnectionLost, err)
	}
	defer sess.Close()
	w := &execWriter{out: out, stop: func() { _ = sess.Close() }}
	sess.Stdout, sess.Stderr = w, w
	err = sess.Run(cmd)
	if werr := w.failed(); werr != nil {
		return werr
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var exitErr *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case err == nil, errors.As(err, &exitErr):
		return nil
	case errors.As(err, &missing):
		// Devices that send no exit status end a command the way a
		// dropped connection does; tell them apart by the connection.
		t := time.NewTimer(connLostGrace)
		defer t.Stop()
		select {
		case <-c.dead:
			return fmt.Errorf("transport: ssh exec: %w", ErrConnectionLost)
		case <-t.C:
			return nil
		}
	default:
		return fmt.Errorf("transport: ssh exec: %w: %w", ErrConnectionLost, err)
	}
}

var errGaveUp = errors.New("gave up opening a session")

// newSession opens a session channel, bounded by ctx and by the
// connection: x/crypto waits for ever for the answer to a channel opened
// just as the connection dies (the first failed write is not reported).
// In that one case the opening goroutine cannot be reclaimed; it holds
// nothing but a dead channel.
func (c *ExecClient) newSession(ctx context.Context) (*ssh.Session, error) {
	type result struct {
		s   *ssh.Session
		err error
	}
	res := make(chan result, 1)
	go func() {
		s, err := c.client.NewSession()
		res <- result{s, err}
	}()
	select {
	case r := <-res:
		return r.s, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.dead:
		return nil, errGaveUp
	}
}

// Close ends the connection and waits for the goroutine watching it.
func (c *ExecClient) Close() error {
	c.once.Do(func() {
		c.shutdown()
		c.wg.Wait()
	})
	return nil
}

// execWriter serialises the stdout and stderr copiers and remembers the
// first write error, stopping the command on it.
type execWriter struct {
	mu   sync.Mutex
	out  io.Writer
	err  error
	stop func()
}

func (w *execWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return 0, err
	}
	n, err := w.out.Write(p)
	if err != nil {
		w.err = err
	}
	w.mu.Unlock()
	if err != nil {
		// Stop the command: with the copier gone the device would fill the
		// window and wait forever for us to read.
		w.stop()
	}
	return n, err
}

func (w *execWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
