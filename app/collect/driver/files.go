package driver

import (
	"fmt"
	"strings"
)

// SCPPrefix marks a command that is not typed at the command line but names
// a file fetched over SCP on the same SSH login: "scp:config.ini" stores
// the device's config.ini as that command's output. Devices whose
// restorable configuration exists only as a file (APC network management
// cards) are backed up this way.
const SCPPrefix = "scp:"

// SCPPath returns the remote path of an "scp:<path>" command.
func SCPPath(cmd string) (string, bool) {
	path, ok := strings.CutPrefix(strings.TrimSpace(cmd), SCPPrefix)
	return path, ok
}

// FileText turns a fetched file into stored text: decoded to UTF-8 from
// the device's character set, "\n" line endings, no trailing spaces or
// tabs on a line. Unlike a command's output it is not treated as a
// terminal (a carriage return or backspace is not acted on); a file with
// bytes that only binary data holds is refused. name is the command, for
// the error.
func FileText(encoding string, raw []byte, name string) (string, error) {
	text, err := Decode(encoding, raw)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i, l := range lines {
		l, binary := sanitize(strings.TrimRight(l, " \t\r"))
		if binary {
			return "", fmt.Errorf("%s: %w", name, ErrBinaryOutput)
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n"), nil
}
