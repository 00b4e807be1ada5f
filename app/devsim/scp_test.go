package devsim

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// scpGet copies a file off the device the way OpenSSH's scp does (the
// sink side, written here independently of the collector's): it returns
// the file, or the device's \x01 message and the exit status.
func scpGet(t *testing.T, d *Device, path string) (data string, refusal string, status int) {
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
	if err := sess.Start("scp -f " + path); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(wait):
			client.Close() // a hung device fails the reads below
		}
	}()
	exit := func() int {
		var ee *ssh.ExitError
		if err := sess.Wait(); errors.As(err, &ee) {
			return ee.ExitStatus()
		} else if err != nil {
			t.Fatalf("scp session: %v", err)
		}
		return 0
	}
	in.Write([]byte{0})
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("scp header: %v (got %q)", err, line)
	}
	if line[0] == 1 {
		return "", strings.TrimSpace(line[1:]), exit()
	}
	f := strings.Fields(line[1:])
	if line[0] != 'C' || len(f) != 3 {
		t.Fatalf("scp header %q", line)
	}
	size, _ := strconv.Atoi(f[1])
	in.Write([]byte{0})
	buf := make([]byte, size+1)
	if _, err := io.ReadFull(out, buf); err != nil || buf[size] != 0 {
		t.Fatalf("scp data: %v", err)
	}
	in.Write([]byte{0})
	in.Close()
	return string(buf[:size]), "", exit()
}

// The card's config.ini comes over SCP, exactly what Show and LastOutput
// report; the command line does not know it; a file the card does not
// have is refused with OpenSSH's message and exit status 1.
func TestSCPFile(t *testing.T) {
	d := startDevice(t, Options{Platform: "apc_aos", Seed: 3})
	got, refusal, status := scpGet(t, d, "config.ini")
	shown, _ := d.LastOutput("scp:config.ini")
	if got != shown || !strings.Contains(got, "\n[NetworkTCP/IP]\n") || refusal != "" || status != 0 {
		t.Errorf("scp config.ini: %d bytes, %q, status %d; want the %d bytes shown", len(got), refusal, status, len(shown))
	}
	if _, refusal, status := scpGet(t, d, "nothing.ini"); refusal != "scp: nothing.ini: No such file or directory" || status != 1 {
		t.Errorf("missing file: %q, status %d", refusal, status)
	}

	_, w, e := sshShell(t, d)
	e.must(t, "apc>")
	send(t, w, "scp:config.ini\n")
	e.must(t, "E101: Command Not Found\r\napc>")
}

// Fetched as a file, config.ini is as large as the device was asked to
// make it, and holds one event action per unit.
func TestSCPFileScales(t *testing.T) {
	for _, size := range []int{MinConfigSize, 100 << 10} {
		d := startDevice(t, Options{Platform: "apc_aos", ConfigSize: size})
		got, _, _ := scpGet(t, d, "config.ini")
		if len(got) < size*85/100 || len(got) > size*115/100 {
			t.Errorf("size %d: got %d bytes", size, len(got))
		}
		if n := strings.Count(got, ",E[:::],T[:::::]\n"); n < size/150 {
			t.Errorf("size %d: %d event actions", size, n)
		}
	}
}
