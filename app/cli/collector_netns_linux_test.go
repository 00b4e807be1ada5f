package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/internal/testkit"
)

// fleetEnv makes the test binary, started again inside the network
// namespace, run the simulated fleet there (fleetHelper).
const fleetEnv = "BACKUPD_TEST_NETNS_FLEET"

const (
	fleetUser     = "netops"
	fleetPassword = "Fleet-Pa55-in-the-namespace"
	fleetEnable   = "Fleet-En4ble-in-the-namespace"
)

// The test binary started as the fleet helper runs the fleet and exits,
// before TestMain builds anything.
func init() {
	if os.Getenv(fleetEnv) != "" {
		os.Exit(fleetHelper())
	}
}

// fleetHelper runs n simulated devices on the namespace's own loopback,
// prints each one's SSH port, and serves until its stdin closes. Each
// device drips its configuration out over about two seconds, so that a
// collector killed mid-run is killed mid-collection.
func fleetHelper() int {
	n, err := strconv.Atoi(os.Getenv(fleetEnv))
	if err != nil || n <= 0 || n > 200 {
		fmt.Fprintln(os.Stderr, "bad", fleetEnv)
		return 2
	}
	var devs []*devsim.Device
	for i := range n {
		d, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: fmt.Sprintf("site-sw%02d", i),
			Username: fleetUser, Password: fleetPassword, EnablePassword: fleetEnable, SSHAddr: "127.0.0.1:0",
			Seed: int64(100 + i), ConfigSize: 8 << 10, Failures: []devsim.Failure{devsim.FailSlowDrip},
			DripDelay: 2 * time.Millisecond, DripChunk: 16, DripBudget: 2 * time.Second})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		devs = append(devs, d)
		_, port, _ := net.SplitHostPort(d.SSHAddr())
		fmt.Println(port)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, d := range devs {
		d.Close()
	}
	return 0
}

// netns is a network namespace joined to this one by a veth pair: the
// host side has hostIP, the namespace nsIP, and nothing routes the
// namespace's own loopback from here.
type netns struct {
	name, hostIP, nsIP string
}

func ipCmd(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// skipOrFailInCI skips a test this machine cannot run, except under
// CI=true, where the collector test must run and a missing part fails it.
func skipOrFailInCI(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

func newNetns(t *testing.T) netns {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFailInCI(t, "needs root to create a network namespace (CI runs as root)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		skipOrFailInCI(t, "needs the ip command (iproute2, which .ci/run installs) to create a network namespace")
	}
	id := os.Getpid() % 10000
	ns := netns{name: fmt.Sprintf("bdcol%d", id), hostIP: "10.254.77.1", nsIP: "10.254.77.2"}
	hostIf, nsIf := fmt.Sprintf("bdh%d", id), fmt.Sprintf("bdn%d", id)
	if err := ipCmd("netns", "add", ns.name); err != nil {
		skipOrFailInCI(t, fmt.Sprintf("cannot create a network namespace here: %v", err))
	}
	t.Cleanup(func() {
		_ = ipCmd("link", "del", hostIf)
		_ = ipCmd("netns", "del", ns.name)
	})
	for _, args := range [][]string{
		{"link", "add", hostIf, "type", "veth", "peer", "name", nsIf},
		{"link", "set", nsIf, "netns", ns.name},
		{"addr", "add", ns.hostIP + "/30", "dev", hostIf},
		{"link", "set", hostIf, "up"},
		{"-n", ns.name, "addr", "add", ns.nsIP + "/30", "dev", nsIf},
		{"-n", ns.name, "link", "set", nsIf, "up"},
		{"-n", ns.name, "link", "set", "lo", "up"},
	} {
		if err := ipCmd(args...); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

// selfSigned writes a certificate for ip and its key, and returns their
// paths (the certificate is its own CA).
func selfSigned(t *testing.T, dir, ip string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "backupd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP(ip)},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// proc is a started process with its output.
type proc struct {
	cmd    *exec.Cmd
	out    *testkit.LockedBuffer
	done   chan struct{}
	result error
}

func startProc(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(name, args...), out: &testkit.LockedBuffer{}, done: make(chan struct{})}
	p.cmd.Env = cleanEnv(storeEnv(args)...)
	p.cmd.Dir = t.TempDir()
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.result = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// waitUntil polls cond every 100 ms until it holds or within passes.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var httpsListening = regexp.MustCompile(`msg="backupd listening" url=(https://[0-9.]+:\d+)`)

// The simulated fleet lives only inside a network namespace (on its own
// loopback, which the server cannot reach), a collector (the real binary)
// runs in that namespace and dials out to the server over HTTPS: every
// device is backed up through it. Killed with SIGKILL mid-run and started
// again, it loses nothing: every device ends the run with exactly one
// good backup.
func TestCollectorInNetworkNamespaceSurvivesKill9(t *testing.T) {
	t.Parallel() // see runTests
	ns := newNetns(t)
	ctx := context.Background()
	const devices = 12

	// The fleet, inside the namespace.
	fleet := exec.Command("ip", "netns", "exec", ns.name, os.Args[0], "-test.run=^$")
	fleet.Env = cleanEnv(fleetEnv + "=" + strconv.Itoa(devices))
	stdin, err := fleet.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := fleet.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	fleet.Stderr = os.Stderr
	if err := fleet.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = fleet.Wait() })
	var ports []int
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != "ready" {
		p, err := strconv.Atoi(lines.Text())
		if err != nil {
			t.Fatalf("fleet helper printed %q", lines.Text())
		}
		ports = append(ports, p)
	}
	if len(ports) != devices {
		t.Fatalf("the fleet started %d devices, want %d", len(ports), devices)
	}
	// Not reachable from here: the same address is the namespace's own.
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), time.Second); err == nil {
		c.Close()
		t.Logf("note: port %d happens to be open on this host's loopback too", ports[0])
	}

	// The server's store: a zone, its devices at the namespace's
	// addresses, their credential sealed with the data directory's key.
	data := storeDir(t)
	sealer, err := secret.LoadOrCreate(data)
	if err != nil {
		t.Fatal(err)
	}
	store := openStore(t, data)
	zone, err := store.CreateZone(ctx, "site-a")
	if err != nil {
		t.Fatal(err)
	}
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "site", Username: fleetUser,
		Password:       sealer.Seal(fleetPassword, secret.PurposePassword),
		EnablePassword: sealer.Seal(fleetEnable, secret.PurposeEnablePassword)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, port := range ports {
		d, err := store.CreateDevice(ctx, db.Device{Name: fmt.Sprintf("site-sw%02d", i), Host: "127.0.0.1", Port: port,
			Platform: "cisco_ios", LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true, ZoneID: zone.ID})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}

	// The server, over HTTPS on the host side of the veth pair.
	certFile, keyFile := selfSigned(t, t.TempDir(), ns.hostIP)
	srv := startProc(t, binPath, "serve", "--data", data, "--listen", ns.hostIP+":0", "--tls-cert", certFile, "--tls-key", keyFile)
	var url string
	waitUntil(t, 15*time.Second, "serve listening", func() bool {
		if m := httpsListening.FindStringSubmatch(srv.out.String()); m != nil {
			url = m[1]
		}
		return url != ""
	})
	token := strings.TrimSpace(mustRun(t, call{}, "collector", "token", "create", "--zone", "site-a", "--data", data).stdout)
	if !strings.HasPrefix(token, "bke_") {
		t.Fatalf("token create printed %q", token)
	}

	// The collector, inside the namespace.
	colData := t.TempDir()
	startCollector := func(extra ...string) *proc {
		args := append([]string{"netns", "exec", ns.name, binPath, "collector", "--server", url, "--ca-file", certFile,
			"--data", colData, "--workers", "3", "--name", "edge-a"}, extra...)
		return startProc(t, "ip", args...)
	}
	col := startCollector("--token", token)

	// A run of every device, waited for by `backup run` as an operator would.
	runCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	runArgs := []string{"backup", "run", "--all", "--data", data}
	run := exec.CommandContext(runCtx, binPath, runArgs...)
	run.Env = cleanEnv(storeEnv(runArgs)...)
	run.Dir = t.TempDir()
	runOut := &testkit.LockedBuffer{}
	run.Stdout, run.Stderr = runOut, runOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	runDone := make(chan error, 1)
	go func() { runDone <- run.Wait() }()

	// Mid-run: some devices done, some in the collector's hands.
	goodCount := func() int {
		var n int
		if err := dbtest.Peek(t, store).QueryRow(`SELECT COUNT(*) FROM backups WHERE success = 1`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	leased := func() int {
		var n int
		if err := dbtest.Peek(t, store).QueryRow(`SELECT COUNT(*) FROM jobs WHERE state = 'running' AND collector_id IS NOT NULL`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitUntil(t, 90*time.Second, "the first backups through the collector", func() bool { return goodCount() >= 3 && leased() > 0 })
	heldAtKill := leased()
	if err := col.cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	<-col.done
	t.Logf("killed the collector with %d good backups recorded and %d jobs in its hands", goodCount(), heldAtKill)

	// Started again (its identity is on disk): it takes the run over.
	col = startCollector()
	select {
	case err := <-runDone:
		if err != nil {
			t.Fatalf("backup run: %v\n%s\nserver:\n%s\ncollector:\n%s", err, runOut, srv.out, col.out)
		}
	case <-runCtx.Done():
		t.Fatalf("backup run did not finish:\n%s\ncollector:\n%s", runOut, col.out)
	}

	// Every device: exactly one good backup, its job succeeded.
	for _, id := range ids {
		var good, interrupted int
		if err := dbtest.Peek(t, store).QueryRow(`SELECT COALESCE(SUM(success = 1), 0), COALESCE(SUM(error_message = ?), 0)
			FROM backups WHERE device_id = ?`, queue.ErrorInterrupted, id).Scan(&good, &interrupted); err != nil {
			t.Fatal(err)
		}
		if good != 1 {
			t.Errorf("device %d has %d good backups, want exactly 1", id, good)
		}
		if interrupted > 0 {
			t.Logf("device %d: %d attempts interrupted by the kill, then backed up", id, interrupted)
		}
	}
	var jobsOK int
	if err := dbtest.Peek(t, store).QueryRow(`SELECT COUNT(*) FROM jobs WHERE state = 'succeeded'`).Scan(&jobsOK); err != nil || jobsOK != devices {
		t.Fatalf("%d jobs succeeded, want %d (%v)", jobsOK, devices, err)
	}
	for _, out := range []string{srv.out.String(), col.out.String(), runOut.String()} {
		for _, leak := range []string{fleetPassword, fleetEnable, token} {
			if strings.Contains(out, leak) {
				t.Fatal("a log holds a secret")
			}
		}
	}
}
