package devsim

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// goroutinesBack polls (bounded) until the goroutine count is back to at
// most want.
func goroutinesBack(want int) (int, bool) {
	n := runtime.NumGoroutine()
	for i := 0; i < 200 && n > want; i++ {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n, n <= want
}

func TestFleetStartsAndClosesWithoutLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	n := max(50, len(Platforms()))
	f, err := StartFleet(FleetOptions{Count: n, Template: Options{ConfigSize: MinConfigSize}})
	if err != nil {
		t.Fatal(err)
	}
	devices := f.Devices()
	platforms := map[string]bool{}
	hosts := map[string]bool{}
	for _, d := range devices {
		platforms[d.Platform()] = true
		hosts[d.Hostname()] = true
		if !strings.HasPrefix(d.SSHAddr(), "127.0.0.1:") || !strings.HasPrefix(d.TelnetAddr(), "127.0.0.1:") {
			t.Errorf("%s listens on %s / %s", d.Hostname(), d.SSHAddr(), d.TelnetAddr())
		}
	}
	if len(devices) != n || len(platforms) != len(Platforms()) || len(hosts) != n {
		t.Errorf("%d devices, %d platforms, %d hostnames", len(devices), len(platforms), len(hosts))
	}

	// Leave sessions open in every state Close must end: an idle shell, a
	// telnet login prompt and a device hanging mid-output.
	var clients []*ssh.Client
	for _, d := range devices[:5] {
		client, w, e := sshShell(t, d)
		clients = append(clients, client)
		send(t, w, d.Personality().ConfigCommands[0]+"\n")
		e.must(t, d.Personality().ConfigCommands[0])
	}
	conn, e := dialTelnet(t, devices[7])
	e.must(t, "\xff\xfd\x1f") // option negotiation: the login dialogue has begun
	hang, err := NewDevice(Options{Platform: "cisco_xe", Failures: []Failure{FailHangMidOutput}, ConfigSize: MinConfigSize})
	if err != nil {
		t.Fatal(err)
	}
	_, w, he := sshShell(t, hang)
	he.must(t, "CSR1#")
	send(t, w, "terminal length 0\n")
	he.must(t, "CSR1#")
	send(t, w, "show running-config\n")
	he.must(t, "interface")
	if ok, _ := he.quiet(short); !ok {
		t.Fatal("hanging device did not hang")
	}

	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := hang.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, d := range devices[:3] {
		if _, err := ssh.Dial("tcp", d.SSHAddr(), &ssh.ClientConfig{User: "admin", Auth: []ssh.AuthMethod{ssh.Password("admin")}, HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: time.Second}); err == nil {
			t.Errorf("%s still accepts after Close", d.Hostname())
		}
	}
	for _, c := range clients {
		c.Close()
	}
	conn.Close()
	// Test-side readers end with their connections; allow a little slack
	// for runtime goroutines.
	if n, ok := goroutinesBack(before + 2); !ok {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before, %d after Close\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

func TestFleetRejectsBadOptions(t *testing.T) {
	for _, opts := range []FleetOptions{
		{Count: 0},
		{Count: 2, Platforms: []string{"cisco_ios", "nope"}},
		{Count: 1, Template: Options{SSHAddr: "0.0.0.0:0"}},
	} {
		if f, err := StartFleet(opts); err == nil {
			f.Close()
			t.Errorf("%+v accepted", opts)
		}
	}
}
