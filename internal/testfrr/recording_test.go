package testfrr

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite the FRR recording from the real router")

// recordings is where the driver keeps recordings of real devices.
const recordings = "../../app/collect/driver/testdata/recordings"

// recordingHeader opens the recording: where it comes from and how to
// make it again.
const recordingHeader = `# A vtysh session over SSH, captured from the real thing: FRR 8.4.4
# (Debian 12's frr package) behind Debian 12's OpenSSH 9.2p1 sshd, whose
# ForceCommand runs vtysh; the client is golang.org/x/crypto/ssh with a
# vt100 PTY of 511 columns and 0 rows, as backupd's SSH transport asks,
# sending each line with "\n" once the previous prompt has come.
# TestSessionOverSSH in internal/testfrr checks it against the router and
# rewrites it with -update. $DIR stands for the router's directory, which
# changes per run. Format: app/collect/driver/testdata/recordings/README.md
# (Ruby-style escapes inside YAML).
`

// recordingYAML renders the console's dialogue as a recording:
// init_prompt is what came before the first line sent, then each line
// sent with everything received after it.
func recordingYAML(c *console, dir string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var init strings.Builder
	type pair struct{ sent, reply string }
	var pairs []pair
	for _, s := range c.log {
		text := strings.ReplaceAll(s.text, dir, "$DIR")
		switch {
		case s.sent:
			pairs = append(pairs, pair{sent: text})
		case len(pairs) == 0:
			init.WriteString(text)
		default:
			pairs[len(pairs)-1].reply += text
		}
	}
	var b bytes.Buffer
	b.WriteString(recordingHeader)
	b.WriteString("---\ninit_prompt: |-\n")
	writeBlock(&b, "    ", init.String())
	b.WriteString("commands:\n")
	for _, p := range pairs {
		fmt.Fprintf(&b, "  - %s: |-\n", strconv.Quote(p.sent))
		writeBlock(&b, "      ", p.reply)
	}
	return b.Bytes()
}

// writeBlock writes text as the lines of a YAML literal block, escaped
// as the recordings are: "\r", "\e", other control bytes as "\xNN", a
// backslash doubled, a space ending a line as "\x20" (editors strip
// it), a final "\n" as "\n" (the block drops it).
func writeBlock(b *bytes.Buffer, indent, text string) {
	finalNL := strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, line := range lines {
		var e strings.Builder
		for j := 0; j < len(line); j++ {
			switch c := line[j]; {
			case c == '\\':
				e.WriteString(`\\`)
			case c == '\r':
				e.WriteString(`\r`)
			case c == 0x1b:
				e.WriteString(`\e`)
			case c == '\t':
				e.WriteString(`\t`)
			case c < 0x20 || c == 0x7f:
				fmt.Fprintf(&e, `\x%02x`, c)
			default:
				e.WriteByte(c)
			}
		}
		s := e.String()
		if strings.HasSuffix(s, " ") {
			s = strings.TrimSuffix(s, " ") + `\x20`
		}
		if i == len(lines)-1 && finalNL {
			s += `\n`
		}
		b.WriteString(indent + s + "\n")
	}
}

// unescape undoes writeBlock's escapes (the subset of the recordings'
// Ruby-style escapes it writes).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'r':
			b.WriteByte('\r')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'e':
			b.WriteByte(0x1b)
		case 'x':
			if v, err := strconv.ParseUint(s[i+1:min(i+3, len(s))], 16, 8); err == nil && i+2 < len(s) {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
			b.WriteString(`\x`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// checkGolden compares got with the recording name among the driver's
// recordings of real devices (replayed by TestReplayCaptures), or writes
// it there with -update. It also reads got back as YAML and checks that every reply
// unescapes to what was received.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	var doc struct {
		InitPrompt string              `yaml:"init_prompt"`
		Commands   []map[string]string `yaml:"commands"`
	}
	if err := yaml.Unmarshal(got, &doc); err != nil {
		t.Fatalf("the recording is not YAML: %v", err)
	}
	if p := unescape(doc.InitPrompt); !strings.HasPrefix(p, "\r\nHello, this is FRRouting") || !strings.HasSuffix(p, "\r\nr1# ") {
		t.Errorf("init_prompt reads back as %q", p)
	}
	if len(doc.Commands) == 0 {
		t.Error("the recording has no commands")
	}
	for _, m := range doc.Commands {
		for sent, reply := range m {
			if r := unescape(reply); !strings.HasPrefix(r, strings.TrimSuffix(sent, "\n")+"\r\n") {
				t.Errorf("reply to %q reads back as %q", sent, r)
			}
		}
	}

	path := filepath.Join(recordings, name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update ./internal/testfrr/ writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("the session differs from %s at line %d:\n got: %s\nwant: %s\n(-update rewrites the file after a deliberate change)", path, i+1, g, w)
				break
			}
		}
	}
}
