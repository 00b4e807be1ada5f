package cli_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"backupd/app/devsim"
	"backupd/db"
	"backupd/internal/dbtest"
	"backupd/internal/testkit"
)

var (
	syslogListening = regexp.MustCompile(`msg="syslog listening" addr=(127\.0\.0\.1:\d+)`)
)

// addSim starts a simulated IOS device on ip (any 127/8 address is
// loopback on Linux, so each device has an address of its own) and
// registers it with the credential simFleet created.
func addSim(t *testing.T, store *db.Store, name, ip string, enabled bool) int64 {
	t.Helper()
	ctx := context.Background()
	var credID int64
	if err := dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT id FROM credentials WHERE name = 'lab'`).Scan(&credID); err != nil {
		t.Fatal(err)
	}
	d, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: name, Username: simUser, Password: simPassword,
		EnablePassword: simEnable, SSHAddr: ip + ":0", Seed: 77})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	_, p, _ := net.SplitHostPort(d.SSHAddr())
	port, _ := strconv.Atoi(p)
	dev, err := store.CreateDevice(ctx, db.Device{Name: name, Host: ip, Port: port, Platform: "cisco_ios",
		LoginMethod: "ssh", CredentialID: &credID, Encoding: "utf-8", Enabled: enabled})
	if err != nil {
		t.Fatal(err)
	}
	return dev.ID
}

// sendFrom sends one syslog message from the local address from (UDP
// datagram, or TCP octet-counted frame) to addr.
func sendFrom(t *testing.T, network, from, addr, msg string) {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	switch network {
	case "udp":
		d.LocalAddr = &net.UDPAddr{IP: net.ParseIP(from)}
	case "tcp":
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
		msg = fmt.Sprintf("%d %s", len(msg), msg)
	}
	c, err := d.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// syslogBackups counts each device's finished successful backups with
// trigger syslog.
func syslogBackups(t *testing.T, store *db.Store) map[int64]int {
	t.Helper()
	rows, err := dbtest.Peek(t, store).QueryContext(context.Background(), `SELECT device_id, COUNT(*) FROM backups
		WHERE trigger = 'syslog' AND finished_at IS NOT NULL AND success = 1 GROUP BY device_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		out[id] = n
	}
	return out
}

// waitFor polls (bounded) until ok holds; what says what was awaited.
func waitFor(t *testing.T, srv *server, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s, still waiting for %s\n%s", what, srv.stderr)
		}
	}
}

// serve --syslog-listen: a device that logs a configuration change
// (a real UDP datagram, a real TCP octet-counted frame, and util-linux
// logger) is backed up with trigger syslog after the quiet time; a
// sender that is no device is counted and backs nothing up; a disabled
// device, found by the hostname in its message, is counted and not
// backed up.
func TestServeSyslogTriggersBackups(t *testing.T) {
	t.Parallel() // see runTests
	data := storeDir(t)
	store, ids := simFleet(t, data, 1, devsim.Options{}) // sw-00 on 127.0.0.1
	a := ids[0]
	b := addSim(t, store, "edge-03", "127.0.0.3", true)
	off := addSim(t, store, "Lab-Off", "127.0.0.4", false)

	srv := startServe(t, data, "--syslog-listen", "127.0.0.1:0", "--syslog-debounce", "1s", "--metrics-listen", "127.0.0.1:0")
	m := syslogListening.FindStringSubmatch(srv.stderr.String())
	mm := metricsURL.FindStringSubmatch(srv.stderr.String())
	if m == nil || mm == nil {
		t.Fatalf("serve did not log the syslog and metrics addresses:\n%s", srv.stderr)
	}
	addr, metricsAt := m[1], mm[1]
	counter := func(name string) int {
		samples, _ := testkit.Exposition(t, scrapeMetrics(t, metricsAt))
		total := 0
		for _, s := range samples {
			if s.Name == name || s.Name+"/"+s.Labels["reason"] == name {
				v, _ := strconv.Atoi(s.Value)
				total += v
			}
		}
		return total
	}
	const change = "%SYS-5-CONFIG_I: Configured from console by admin on vty0 (192.0.2.50)"

	// Nobody's: counted once handled, never waiting for a trigger.
	sendFrom(t, "udp", "127.0.0.2", addr, "<189>Nov 25 14:00:00 stranger "+change)
	waitFor(t, srv, "the unknown sender to be counted", func() bool { return counter("backupd_syslog_unknown_sender_total") == 1 })
	if n := counter("backupd_syslog_pending_devices"); n != 0 {
		t.Fatalf("an unknown sender's message left %d devices waiting", n)
	}

	// A disabled device, named in the message's header (in another case)
	// and sending from an address no device has.
	sendFrom(t, "udp", "127.0.0.2", addr, "<189>Nov 25 14:00:01 lab-off "+change)
	waitFor(t, srv, "the disabled device's change to be skipped", func() bool {
		return counter("backupd_syslog_skipped_total/disabled") == 1
	})

	// By address: sw-00 over UDP, edge-03 over TCP (octet counting).
	sendFrom(t, "udp", "127.0.0.1", addr, "<189>82: *Nov 25 14:00:02: "+change)
	sendFrom(t, "tcp", "127.0.0.3", addr, "<189>1 2026-11-25T14:00:02Z edge-03 - - - - "+change)
	waitFor(t, srv, "a syslog backup of each device", func() bool {
		got := syslogBackups(t, store)
		return got[a] == 1 && got[b] == 1
	})

	// util-linux logger, as an administrator would test the setup.
	if _, err := exec.LookPath("logger"); err != nil {
		t.Log("logger (util-linux) not installed; that part is skipped")
	} else {
		_, port, _ := net.SplitHostPort(addr)
		out, err := exec.Command("logger", "--server", "127.0.0.1", "--port", port, "--udp", "--rfc3164", change).CombinedOutput()
		if err != nil {
			t.Fatalf("logger: %v\n%s", err, out)
		}
		waitFor(t, srv, "a second syslog backup of sw-00, from logger", func() bool { return syslogBackups(t, store)[a] == 2 })
	}

	got := syslogBackups(t, store)
	var offBackups int
	if err := dbtest.Peek(t, store).QueryRowContext(context.Background(), `SELECT COUNT(*) FROM backups WHERE device_id = ?`, off).Scan(&offBackups); err != nil {
		t.Fatal(err)
	}
	if offBackups != 0 || len(got) != 2 {
		t.Fatalf("syslog backups %v, disabled device's backups %d", got, offBackups)
	}
	if n := counter("backupd_syslog_unknown_sender_total"); n != 1 {
		t.Fatalf("unknown senders: %d, want 1", n)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.stderr)
	}
}

// BACKUPD_SYSLOG_LISTEN sets --syslog-listen like every flag's variable;
// an address that is no host:port is refused before anything starts.
func TestSyslogListenFromEnvironmentIsValidated(t *testing.T) {
	data := storeDir(t)
	mustFail(t, call{env: []string{"BACKUPD_SYSLOG_LISTEN=5514"}}, []string{`--syslog-listen "5514": want host:port`}, "serve", "--data", data)
	mustFail(t, call{}, []string{"--syslog-debounce 2h0m0s"}, "serve", "--data", data, "--syslog-listen", "127.0.0.1:0", "--syslog-debounce", "2h")
}
