package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Errors of an SCP fetch; callers classify failures by them. None of their
// messages ever holds the file's content.
var (
	// ErrFileTooLarge: the file the device announced is larger than the
	// caller's limit; nothing of it was read.
	ErrFileTooLarge = errors.New("the file exceeds the size limit")
	// ErrSCPPath: the remote path is refused before anything is sent.
	ErrSCPPath = errors.New("unusable scp path")
	// ErrSCPProtocol: the device did not answer with the SCP protocol.
	ErrSCPProtocol = errors.New("the device did not answer with the SCP protocol")
)

// SCPError is the device's own refusal (an SCP \x01 or \x02 message, such
// as "scp: config.ini: No such file or directory"), reduced to one line of
// printable text.
type SCPError struct{ Msg string }

func (e *SCPError) Error() string { return "the device refused the file: " + e.Msg }

// Bounds on what an SCP fetch reads besides the file.
const (
	maxSCPPath    = 255  // bytes of a remote path
	maxSCPLine    = 1024 // bytes of a control line or a device message
	maxSCPRecords = 4    // T (time) records tolerated before the file
)

// CheckSCPPath refuses a remote path that could not be sent as one word of
// an exec request: empty, too long, an option, or holding anything but
// letters, digits and . _ - / ~ + @ % , : = (no spaces, quotes, newlines
// or shell characters; the request is run by a shell on Unix devices).
func CheckSCPPath(path string) error {
	switch {
	case path == "":
		return fmt.Errorf("%w: no path given", ErrSCPPath)
	case len(path) > maxSCPPath:
		return fmt.Errorf("%w: longer than %d bytes", ErrSCPPath, maxSCPPath)
	case path[0] == '-':
		return fmt.Errorf("%w: it must not start with '-'", ErrSCPPath)
	}
	for _, r := range path {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/~+@%,:=", r)) {
			continue
		}
		return fmt.Errorf("%w: only letters, digits and . _ - / ~ + @ %% , : = are allowed (no spaces, quotes or newlines)", ErrSCPPath)
	}
	return nil
}

// SCPFetch copies one file off the device over an authenticated SSH
// connection, as "scp" does: an exec request "scp -f <path>" on a new
// session channel, then the SCP source protocol (we send \0, read
// "C<mode> <size> <name>\n", send \0, read size bytes and a \0, send \0).
// A file larger than max bytes is refused from its announced size, before
// any of it is read. ctx bounds the whole fetch: when it ends the
// connection is closed (a device that stalls a transfer is not trusted
// with more), so the caller must not reuse client after a ctx error. The
// device's refusal comes back as *SCPError; no error holds the file.
func SCPFetch(ctx context.Context, client *ssh.Client, path string, max int) ([]byte, error) {
	if err := CheckSCPPath(path); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = client.Close() })
	defer stop()
	data, err := scpFetch(ctx, client, path, max)
	if cerr := ctx.Err(); cerr != nil && err != nil {
		return nil, cerr
	}
	return data, err
}

func scpFetch(ctx context.Context, client *ssh.Client, path string, max int) ([]byte, error) {
	sess, err := openSession(ctx, client)
	var refused *ssh.OpenChannelError
	switch {
	case errors.As(err, &refused):
		return nil, fmt.Errorf("%w: the device refused a session channel for SCP (%s); a device that allows one session per connection takes files in a template of scp: commands only, which opens no shell",
			ErrSCPProtocol, refused.Reason)
	case err != nil:
		return nil, fmt.Errorf("transport: scp: open session: %w: %w", ErrConnectionLost, err)
	}
	defer sess.Close()
	stdin, err := sess.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("transport: scp: %w", err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("transport: scp: %w", err)
	}
	// What the device prints on standard error (a shell's complaint) is
	// not read: x/crypto discards it when Stderr is nil.
	if err := sess.Start("scp -f " + path); err != nil {
		return nil, fmt.Errorf("%w: the exec request for scp was refused (SCP may be disabled on the device): %w", ErrSCPProtocol, err)
	}
	return scpReceive(bufio.NewReaderSize(stdout, 32<<10), stdin, max)
}

// openSession opens a session channel, bounded by ctx: x/crypto can wait
// for ever for the answer to a channel opened as the connection dies.
func openSession(ctx context.Context, client *ssh.Client) (*ssh.Session, error) {
	type result struct {
		s   *ssh.Session
		err error
	}
	res := make(chan result, 1)
	go func() {
		s, err := client.NewSession()
		res <- result{s, err}
	}()
	select {
	case r := <-res:
		return r.s, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// scpReceive is the sink side of the SCP protocol for one regular file.
func scpReceive(r *bufio.Reader, w io.Writer, max int) ([]byte, error) {
	ack := func() error {
		if _, err := w.Write([]byte{0}); err != nil {
			return fmt.Errorf("transport: scp: %w: %w", ErrConnectionLost, err)
		}
		return nil
	}
	if err := ack(); err != nil {
		return nil, err
	}
	var size int64
	for records := 0; ; records++ {
		kind, err := r.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("%w: the device ended the SCP session before sending the file (SCP may be disabled, or the account may not use it)", ErrSCPProtocol)
		}
		switch kind {
		case 1, 2:
			return nil, &SCPError{Msg: scpMessage(r)}
		case 'T':
			if records >= maxSCPRecords {
				return nil, fmt.Errorf("%w: too many time records", ErrSCPProtocol)
			}
			if _, err := readSCPLine(r); err != nil {
				return nil, err
			}
			if err := ack(); err != nil {
				return nil, err
			}
			continue
		case 'D':
			return nil, fmt.Errorf("%w: the path is a directory, not a file", ErrSCPProtocol)
		case 'C':
		default:
			return nil, fmt.Errorf("%w: something else came where the file header was due", ErrSCPProtocol)
		}
		line, err := readSCPLine(r)
		if err != nil {
			return nil, err
		}
		if size, err = parseSCPHeader(line); err != nil {
			return nil, err
		}
		break
	}
	if size > int64(max) {
		return nil, fmt.Errorf("%w: the device announced %d bytes, the limit is %d", ErrFileTooLarge, size, max)
	}
	if err := ack(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if n, err := io.CopyN(&buf, r, size); err != nil {
		return nil, fmt.Errorf("transport: scp: %w: the file ended after %d of %d bytes", ErrConnectionLost, n, size)
	}
	status, err := r.ReadByte()
	switch {
	case err != nil:
		return nil, fmt.Errorf("transport: scp: %w: no end of file status after %d bytes", ErrConnectionLost, size)
	case status == 1 || status == 2:
		return nil, &SCPError{Msg: scpMessage(r)}
	case status != 0:
		return nil, fmt.Errorf("%w: the file was longer than the %d bytes announced", ErrSCPProtocol, size)
	}
	if err := ack(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readSCPLine reads a control line (without its "\n"), bounded.
func readSCPLine(r *bufio.Reader) (string, error) {
	var b []byte
	for len(b) <= maxSCPLine {
		c, err := r.ReadByte()
		if err != nil {
			return "", fmt.Errorf("transport: scp: %w: inside a control record", ErrConnectionLost)
		}
		if c == '\n' {
			return string(b), nil
		}
		b = append(b, c)
	}
	return "", fmt.Errorf("%w: a control record longer than %d bytes", ErrSCPProtocol, maxSCPLine)
}

// parseSCPHeader reads "<mode> <size> <name>" (after the 'C') and returns
// the size.
func parseSCPHeader(line string) (int64, error) {
	f := strings.SplitN(line, " ", 3)
	if len(f) != 3 || len(f[0]) != 4 || f[2] == "" {
		return 0, fmt.Errorf("%w: malformed file header", ErrSCPProtocol)
	}
	if _, err := strconv.ParseUint(f[0], 8, 32); err != nil {
		return 0, fmt.Errorf("%w: malformed file mode", ErrSCPProtocol)
	}
	size, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || size < 0 {
		return 0, fmt.Errorf("%w: malformed file size", ErrSCPProtocol)
	}
	return size, nil
}

// scpMessage reads the device's message after a \x01 or \x02: one line,
// bounded, printable ASCII only.
func scpMessage(r *bufio.Reader) string {
	var b strings.Builder
	for n := 0; n < maxSCPLine; n++ {
		c, err := r.ReadByte()
		if err != nil || c == '\n' {
			break
		}
		if c >= 0x20 && c < 0x7f && b.Len() < 200 {
			b.WriteByte(c)
		}
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		return s
	}
	return "no reason given"
}

// FetchSCP fetches a file over the connection's SSH login (see SCPFetch);
// when ctx ends the connection is closed.
func (c *ExecClient) FetchSCP(ctx context.Context, path string, max int) ([]byte, error) {
	if c.lost() {
		return nil, fmt.Errorf("transport: scp: %w", ErrConnectionLost)
	}
	stop := context.AfterFunc(ctx, c.shutdown)
	defer stop()
	return SCPFetch(ctx, c.client, path, max)
}

// FetchSCP fetches a file on a new session channel of the shell's SSH
// connection (see SCPFetch); the shell stays open. When ctx ends the
// connection, shell included, is closed.
func (c *sshConn) FetchSCP(ctx context.Context, path string, max int) ([]byte, error) {
	return SCPFetch(ctx, c.client, path, max)
}
