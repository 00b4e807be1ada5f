package devsim

import (
	"io"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// cli is an interactive SSH session a test types into, as a restore
// method drives a device.
type cli struct {
	t      *testing.T
	w      io.Writer
	e      *expecter
	client *ssh.Client
}

// openCLI logs in and waits for the first prompt.
func openCLI(t *testing.T, d *Device, prompt string) *cli {
	t.Helper()
	client, w, e := sshShell(t, d)
	e.must(t, prompt)
	return &cli{t: t, w: w, e: e, client: client}
}

// run types a line and returns what follows, up to and including until.
func (c *cli) run(line, until string) string {
	c.t.Helper()
	send(c.t, c.w, line+"\n")
	return c.e.must(c.t, until)
}

// sshExec runs one command as an SSH exec request, as the collector does.
func sshExec(t *testing.T, d *Device, cmd string) string {
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
	out, err := sess.Output(cmd)
	if err != nil {
		t.Fatalf("exec %q: %v", cmd, err)
	}
	return string(out)
}

// waitFor polls cond every few milliseconds until it holds, failing the
// test after limit.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lastCommit is the newest version in the device's history.
func lastCommit(d *Device) Commit {
	c := d.Commits()
	return c[len(c)-1]
}
