package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/crypto/ssh"
)

// MaxSCPUpload bounds a file written to a device: a configuration is far
// smaller, and a larger one is a mistake better refused before it fills
// the device's flash.
const MaxSCPUpload = 16 << 20

// CheckSCPUploadPath is CheckSCPPath for a file to write: the path must
// also end in a file name, which names the file in the SCP header.
func CheckSCPUploadPath(p string) error {
	if err := CheckSCPPath(p); err != nil {
		return err
	}
	if base := path.Base(p); strings.HasSuffix(p, "/") || strings.HasSuffix(p, ":") || base == "." || base == ".." {
		return fmt.Errorf("%w: it must end in a file name", ErrSCPPath)
	}
	return nil
}

// SCPUpload writes data to path on the device over an authenticated SSH
// connection, as "scp" does: an exec request "scp -t <path>" on a new
// session channel, then the SCP sink protocol (the device sends \0; we
// send "C<mode> <size> <name>\n", the device \0; we send the data and \0,
// the device \0). mode's permission bits go in the header (0644 when
// none). A file larger than MaxSCPUpload is refused before anything is
// sent. ctx bounds the whole upload: when it ends the connection is
// closed (a device that stalls a transfer is not trusted with more), so
// the caller must not reuse client after a ctx error. The device's
// refusal comes back as *SCPError; no error holds the data.
func SCPUpload(ctx context.Context, client *ssh.Client, p string, data []byte, mode os.FileMode) error {
	if err := CheckSCPUploadPath(p); err != nil {
		return err
	}
	if len(data) > MaxSCPUpload {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrFileTooLarge, len(data), MaxSCPUpload)
	}
	if mode&^os.ModePerm != 0 {
		return errors.New("transport: scp: a file to write takes permission bits only")
	}
	if mode == 0 {
		mode = 0o644
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = client.Close() })
	defer stop()
	err := scpUpload(ctx, client, p, data, mode)
	if cerr := ctx.Err(); cerr != nil && err != nil {
		return cerr
	}
	return err
}

func scpUpload(ctx context.Context, client *ssh.Client, p string, data []byte, mode os.FileMode) error {
	sess, err := openSession(ctx, client)
	var refused *ssh.OpenChannelError
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("%w: the device refused a session channel for SCP (%s)", ErrSCPProtocol, refused.Reason)
	case err != nil:
		return fmt.Errorf("transport: scp: open session: %w: %w", ErrConnectionLost, err)
	}
	defer sess.Close()
	stdin, err := sess.StdinPipe()
	if err != nil {
		return fmt.Errorf("transport: scp: %w", err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		return fmt.Errorf("transport: scp: %w", err)
	}
	if err := sess.Start("scp -t " + p); err != nil {
		return fmt.Errorf("%w: the exec request for scp was refused (SCP may be disabled on the device): %w", ErrSCPProtocol, err)
	}
	err = scpSend(bufio.NewReaderSize(stdout, 4<<10), stdin, path.Base(p), data, mode)
	// End of input ends the device's sink; its exit is not waited for:
	// the last acknowledgement already said the file is written.
	_ = stdin.Close()
	return err
}

// scpSend is the source side of the SCP protocol for one file, talking to
// a sink that answers on r.
func scpSend(r *bufio.Reader, w io.Writer, name string, data []byte, mode os.FileMode) error {
	if err := scpAck(r, 0); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "C%04o %d %s\n", mode.Perm(), len(data), name); err != nil {
		return scpWriteFailed(r, err)
	}
	if err := scpAck(r, 1); err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return scpWriteFailed(r, err)
	}
	if _, err := w.Write([]byte{0}); err != nil {
		return scpWriteFailed(r, err)
	}
	return scpAck(r, 2)
}

// scpAckStages name where an acknowledgement was due, for errors.
var scpAckStages = [...]string{"before the file header", "after the file header", "after the file"}

// scpAck reads the sink's answer: \0 goes on, \x01 or \x02 and a message
// line is its refusal, anything else is not SCP (a shell's complaint).
func scpAck(r *bufio.Reader, stage int) error {
	b, err := r.ReadByte()
	switch {
	case err != nil && stage == 0:
		return fmt.Errorf("%w: the device ended the SCP session before accepting a file (SCP may be disabled, or the account may not use it)", ErrSCPProtocol)
	case err != nil:
		return fmt.Errorf("transport: scp: %w: no acknowledgement %s", ErrConnectionLost, scpAckStages[stage])
	case b == 0:
		return nil
	case b == 1 || b == 2:
		return &SCPError{Msg: scpMessage(r)}
	}
	return fmt.Errorf("%w: something other than an acknowledgement came %s", ErrSCPProtocol, scpAckStages[stage])
}

// scpWriteFailed explains a write the device stopped reading: its own
// refusal when it sent one before leaving (a full flash), a lost
// connection otherwise.
func scpWriteFailed(r *bufio.Reader, err error) error {
	var refused *SCPError
	if aerr := scpAck(r, 2); errors.As(aerr, &refused) {
		return refused
	}
	return fmt.Errorf("transport: scp: %w: %w", ErrConnectionLost, err)
}

// UploadSCP writes a file on a new session channel of the shell's SSH
// connection (see SCPUpload); the shell stays open. When ctx ends the
// connection, shell included, is closed.
func (c *sshConn) UploadSCP(ctx context.Context, path string, data []byte, mode os.FileMode) error {
	return SCPUpload(ctx, c.client, path, data, mode)
}
