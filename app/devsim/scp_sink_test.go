package devsim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// scpPut writes a file to the device the way OpenSSH's scp does (the
// source side, written here independently of the collector's): records
// are sent as given, each answered by the device. It returns the
// device's \x01 message, if any, and the exit status.
func scpPut(t *testing.T, d *Device, target string, records ...string) (refusal string, status int) {
	t.Helper()
	client, err := ssh.Dial("tcp", d.SSHAddr(), clientConfig(d, d.Username(), d.Password()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	in, _ := sess.StdinPipe()
	outPipe, _ := sess.StdoutPipe()
	out := bufio.NewReader(outPipe)
	if err := sess.Start("scp -t " + target); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(wait, func() { client.Close() }) // a hung device fails the reads below
	defer timer.Stop()
	exit := func() int {
		in.Close()
		var ee *ssh.ExitError
		if err := sess.Wait(); errors.As(err, &ee) {
			return ee.ExitStatus()
		} else if err != nil {
			t.Fatalf("scp session: %v", err)
		}
		return 0
	}
	ack := func() string {
		b, err := out.ReadByte()
		if err != nil {
			t.Fatalf("scp acknowledgement: %v", err)
		}
		if b == 0 {
			return ""
		}
		msg, _ := out.ReadString('\n')
		return fmt.Sprintf("%d %s", b, strings.TrimSpace(msg))
	}
	if msg := ack(); msg != "" {
		t.Fatalf("the device did not start its sink: %q", msg)
	}
	for _, rec := range records {
		if _, err := io.WriteString(in, rec); err != nil {
			t.Fatal(err)
		}
		if msg := ack(); msg != "" {
			return msg, exit()
		}
	}
	return "", exit()
}

// TestSCPSink: files written over SCP are kept by path, under a directory
// target by their name; the device still serves its shell.
func TestSCPSink(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_ios"})
	data := "hostname R1\n!\nend\n"
	if msg, status := scpPut(t, d, "flash:restore.cfg",
		"T1700000000 0 1700000000 0\n", fmt.Sprintf("C0644 %d restore.cfg\n", len(data)), data+"\x00"); msg != "" || status != 0 {
		t.Fatalf("upload: %q, status %d", msg, status)
	}
	if got, ok := d.File("flash:restore.cfg"); !ok || string(got) != data {
		t.Fatalf("kept %q, %v", got, ok)
	}
	if msg, _ := scpPut(t, d, "/config/", fmt.Sprintf("C0600 %d new.boot\n", len(data)), data+"\x00"); msg != "" {
		t.Fatalf("upload to a directory: %q", msg)
	}
	if got, ok := d.File("/config/new.boot"); !ok || string(got) != data {
		t.Fatalf("kept %q, %v", got, ok)
	}
	if _, ok := d.File("/config/"); ok {
		t.Error("a directory target was kept as a file")
	}
	if got, ok := d.File("nothing"); ok || got != nil {
		t.Errorf("a file never written: %q, %v", got, ok)
	}
}

// TestSCPSinkRefuses: what a real sink refuses comes back as a \x01 line
// and status 1, and nothing is kept.
func TestSCPSinkRefuses(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_ios"})
	big := bytes.Repeat([]byte("x"), MaxUpload+1)
	for _, tc := range []struct {
		name    string
		records []string
		want    string
	}{
		{"too large", []string{fmt.Sprintf("C0644 %d big.cfg\n", len(big)), string(big) + "\x00"}, "1 scp: big.cfg: No space left on device"},
		{"directory", []string{"D0755 0 dir\n"}, "1 scp: directories are not supported"},
		{"not a record", []string{"hello\n"}, "1 scp: protocol error: expected a file record"},
		{"bad size", []string{"C0644 -1 x.cfg\n"}, "1 scp: protocol error: bad size"},
		{"bad mode", []string{"C06x4 1 x.cfg\n"}, "1 scp: protocol error: bad mode"},
		{"name with a slash", []string{"C0644 1 ../x.cfg\n"}, "1 scp: protocol error: bad file record"},
		{"record too long", []string{"C0644 1 " + strings.Repeat("x", 2000) + "\n"}, "1 scp: protocol error: record too long"},
		{"no end of file", []string{"C0644 2 x.cfg\n", "ab\x01"}, "1 scp: x.cfg: protocol error: no end of file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, status := scpPut(t, d, "x.cfg", tc.records...)
			if msg != tc.want || status != 1 {
				t.Errorf("refusal %q, status %d; want %q, 1", msg, status, tc.want)
			}
			if _, ok := d.File("x.cfg"); ok {
				t.Error("a refused file was kept")
			}
		})
	}
}
