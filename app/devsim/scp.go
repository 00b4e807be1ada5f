package devsim

import (
	"fmt"
	"io"
	"path"
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
func scpSourcePath(cmd string) (string, bool) {
	f := strings.Fields(cmd)
	if len(f) < 3 || f[0] != "scp" {
		return "", false
	}
	from := false
	for _, opt := range f[1 : len(f)-1] {
		switch opt {
		case "-f":
			from = true
		case "-p", "-v", "-q", "--":
		default:
			return "", false
		}
	}
	return f[len(f)-1], from
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
