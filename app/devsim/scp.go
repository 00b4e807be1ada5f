package devsim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// Files served over SCP. A personality's configuration command
// "scp:<path>" (the collector's notation, see driver.SCPPrefix) is a file
// the device hands out only over SCP (APC cards' config.ini), not a
// command: the command line does not know it, and an SSH exec request
// "scp -f <path>" gets it with the SCP source protocol. Show and
// LastOutput answer for it as for a command.

// scpPrefix is the configuration-command prefix of a file.
const scpPrefix = "scp:"

// isFileCommand reports whether a configuration command names a file.
func isFileCommand(cmd string) bool { return strings.HasPrefix(cmd, scpPrefix) }

// scpSourcePath parses the exec request an SCP client sends to copy a
// file from the device: "scp [-p] [-v] [-q] -f <path>". Anything else
// (an upload with -t, a directory with -r) is not an SCP download.
func scpSourcePath(cmd string) (string, bool) { return scpRequest(cmd, "-f") }

// scpSinkPath parses the exec request an SCP client sends to copy a file
// to the device: "scp [-p] [-v] [-q] [-d] -t <path>".
func scpSinkPath(cmd string) (string, bool) { return scpRequest(cmd, "-t") }

func scpRequest(cmd, direction string) (string, bool) {
	f := strings.Fields(cmd)
	if len(f) < 3 || f[0] != "scp" {
		return "", false
	}
	found := false
	for _, opt := range f[1 : len(f)-1] {
		switch opt {
		case direction:
			found = true
		case "-p", "-v", "-q", "--":
		case "-d":
			if direction != "-t" {
				return "", false
			}
		default:
			return "", false
		}
	}
	return f[len(f)-1], found
}

// SCPSource plays the source side of the SCP protocol for one file over
// rw (an exec channel after "scp -f"): it waits for the client's \0, sends
// "C0644 <size> <name>\n", waits for \0, sends the data and \0, and waits
// for the final \0. A missing file is refused instead, with a \x01
// message as OpenSSH words it. Exported so that tests can serve a
// recorded file the way a device does.
func SCPSource(rw io.ReadWriter, name string, data []byte, missing bool) error {
	if err := scpWaitAck(rw); err != nil {
		return err
	}
	if missing {
		_, err := fmt.Fprintf(rw, "\x01scp: %s: No such file or directory\n", name)
		return err
	}
	if _, err := fmt.Fprintf(rw, "C0644 %d %s\n", len(data), path.Base(name)); err != nil {
		return err
	}
	if err := scpWaitAck(rw); err != nil {
		return err
	}
	if _, err := rw.Write(append(append([]byte(nil), data...), 0)); err != nil {
		return err
	}
	return scpWaitAck(rw)
}

// scpWaitAck reads the client's one-byte answer: \0 is go on, anything
// else ends the transfer.
func scpWaitAck(r io.Reader) error {
	var b [1]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return err
	}
	if b[0] != 0 {
		return fmt.Errorf("devsim: scp: the client answered %d", b[0])
	}
	return nil
}

// serveSCP answers an "scp -f <path>" exec request: the file when the
// personality has it (a show, as for a command), the SCP refusal
// otherwise. The output failure modes act on the file as on command
// output: half of it, then a hang or a dropped connection.
func (s *session) serveSCP(name string) error {
	s.d.commands.Add(1)
	cmd, ok := findCommand(s.p, scpPrefix+name, s.p.ConfigCommands)
	if !ok {
		if err := SCPSource(s.rwc(), name, nil, true); err != nil {
			return errQuit
		}
		return errUnknownCommand
	}
	text, _ := s.d.Show(cmd)
	data := s.d.enc(text)
	if s.d.has(FailHangMidOutput) || s.d.has(FailDisconnectMidOutput) {
		rw := s.rwc()
		if scpWaitAck(rw) != nil {
			return errQuit
		}
		if _, err := fmt.Fprintf(rw, "C0644 %d %s\n", len(data), path.Base(name)); err != nil || scpWaitAck(rw) != nil {
			return errQuit
		}
		if err := s.write(data[:len(data)/2]); err != nil {
			return errQuit
		}
		if s.d.has(FailDisconnectMidOutput) {
			return errDisconnect
		}
		s.hang()
		return errHung
	}
	if err := SCPSource(s.rwc(), name, data, false); err != nil {
		return errQuit
	}
	return nil
}

// rwc is the session's channel as one reader-writer.
func (s *session) rwc() io.ReadWriter {
	return struct {
		io.Reader
		io.Writer
	}{s.in, s.out}
}

// MaxUpload is the largest file the device's flash takes over SCP;
// a larger one is refused as a full file system is.
const MaxUpload = 1 << 20

// errSCPRefused is a sink that answered the client with a refusal.
var errSCPRefused = errors.New("devsim: scp: refused")

// scpSink plays the sink side of the SCP protocol for one file over rw
// (an exec channel after "scp -t"), as OpenSSH's scp does: it sends \0,
// takes time records, reads "C<mode> <size> <name>\n" and answers \0,
// reads the data and its \0, hands the file to keep, and answers \0
// only once keep took it: a client that has its last acknowledgement
// finds the file on the device. A directory, a malformed header, a file
// over max and one keep refuses are refused with a \x01 message.
func scpSink(rw io.ReadWriter, max int, keep func(name string, data []byte) bool) (name string, data []byte, err error) {
	r := bufio.NewReaderSize(rw, 4<<10)
	refuse := func(msg string) (string, []byte, error) {
		_, _ = fmt.Fprintf(rw, "\x01scp: %s\n", msg)
		return "", nil, errSCPRefused
	}
	if _, err := rw.Write([]byte{0}); err != nil {
		return "", nil, err
	}
	for records := 0; ; records++ {
		if records > 4 {
			return refuse("protocol error: too many time records")
		}
		line, err := scpRecord(r)
		if err != nil {
			return "", nil, err
		}
		if line == "" {
			return refuse("protocol error: record too long")
		}
		switch line[0] {
		case 'T':
			if _, err := rw.Write([]byte{0}); err != nil {
				return "", nil, err
			}
			continue
		case 'C':
		case 'D':
			return refuse("directories are not supported")
		default:
			return refuse("protocol error: expected a file record")
		}
		f := strings.SplitN(strings.TrimSuffix(line[1:], "\n"), " ", 3)
		if len(f) != 3 || f[2] == "" || strings.ContainsAny(f[2], "/") {
			return refuse("protocol error: bad file record")
		}
		if _, err := strconv.ParseUint(f[0], 8, 32); err != nil {
			return refuse("protocol error: bad mode")
		}
		size, err := strconv.Atoi(f[1])
		if err != nil || size < 0 {
			return refuse("protocol error: bad size")
		}
		if size > max {
			return refuse(f[2] + ": No space left on device")
		}
		if _, err := rw.Write([]byte{0}); err != nil {
			return "", nil, err
		}
		data = make([]byte, size+1)
		if _, err := io.ReadFull(r, data); err != nil {
			return "", nil, err
		}
		if data[size] != 0 {
			return refuse(f[2] + ": protocol error: no end of file")
		}
		if !keep(f[2], data[:size]) {
			return refuse(f[2] + ": cannot write the file")
		}
		if _, err := rw.Write([]byte{0}); err != nil {
			return "", nil, err
		}
		return f[2], data[:size], nil
	}
}

// scpRecord reads one control record with its "\n", at most 1 KiB; ""
// when it is longer.
func scpRecord(r *bufio.Reader) (string, error) {
	var b []byte
	for len(b) < 1024 {
		c, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		b = append(b, c)
		if c == '\n' {
			return string(b), nil
		}
	}
	return "", nil
}

// receiveSCP answers an "scp -t <target>" exec request: the file is kept
// under target, or under target/<name> when target ends in "/" (File
// reads it).
func (s *session) receiveSCP(target string) error {
	s.d.commands.Add(1)
	// Into the device's file store, where configure replace and load
	// find it.
	keep := func(name string, data []byte) bool {
		path := target
		if strings.HasSuffix(path, "/") {
			path += name
		}
		return s.d.PutFile(path, data)
	}
	_, _, err := scpSink(s.rwc(), MaxUpload, keep)
	switch {
	case errors.Is(err, errSCPRefused):
		return errUnknownCommand
	case err != nil:
		return errQuit
	}
	return nil
}
