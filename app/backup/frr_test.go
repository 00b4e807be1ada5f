package backup_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"backupd/app/backup"
	"backupd/app/secret"
	"backupd/db"
	"backupd/internal/testfrr"
)

// Five real FRR routers (bgpd behind OpenSSH, vtysh as the login shell,
// each with its own configuration) are backed up by the engine over SSH
// with a key: each backup is the router's running configuration, and a
// change by hand on one of them is seen on that one alone.
func TestEngineBacksUpRealFRR(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	routers := make([]*testfrr.Router, 5)
	for i := range routers {
		host := fmt.Sprintf("edge%d", i+1)
		conf := strings.Replace(testfrr.DefaultConfig(host), "bgp router-id 192.0.2.1", fmt.Sprintf("bgp router-id 192.0.2.%d", 101+i), 1)
		routers[i] = testfrr.Start(t, testfrr.Options{Hostname: host, Config: conf})
	}
	// The routers' key, sealed as the web interface stores it, and no
	// password: sshd lets only the key in.
	cred, err := e.store.CreateCredential(ctx, db.Credential{Name: "frr", Username: routers[0].User,
		PrivateKey: e.sealer.Seal(string(routers[0].PrivateKey), secret.PurposePrivateKey)})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(routers))
	for i, r := range routers {
		// Every router has a key of its own: one credential each.
		if i > 0 {
			c, err := e.store.CreateCredential(ctx, db.Credential{Name: r.Hostname, Username: r.User,
				PrivateKey: e.sealer.Seal(string(r.PrivateKey), secret.PurposePrivateKey)})
			if err != nil {
				t.Fatal(err)
			}
			cred = c
		}
		_, p, _ := net.SplitHostPort(r.Addr)
		port, _ := strconv.Atoi(p)
		d, err := e.store.CreateDevice(ctx, db.Device{Name: r.Hostname, Host: "127.0.0.1", Port: port,
			Platform: "frr", LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = d.ID
	}
	jobs := e.run(e.engine(backup.Options{Workers: 5}), ids...)
	for i, r := range routers {
		j := jobs[ids[i]]
		if j.State != "succeeded" {
			t.Fatalf("%s: %s: %v\n%s", r.Hostname, j.State, j.Error, e.log.String())
		}
		b := e.backup(j)
		if b.SnapshotHash == nil {
			t.Fatalf("%s: no configuration stored", r.Hostname)
		}
		got, err := e.store.SnapshotText(ctx, *b.SnapshotHash)
		if err != nil {
			t.Fatal(err)
		}
		want := r.RunningConfig(t)
		if got != want {
			t.Errorf("%s: the backup is not the running configuration\n got:\n%s\nwant:\n%s", r.Hostname, got, want)
		}
		if !strings.Contains(got, fmt.Sprintf("hostname %s\n", r.Hostname)) || !strings.Contains(got, fmt.Sprintf(" bgp router-id 192.0.2.%d\n", 101+i)) {
			t.Errorf("%s: the backup is another router's:\n%s", r.Hostname, got)
		}
	}
	// A change made by hand on one router is that router's only change.
	routers[2].Vtysh(t, "configure terminal", "router bgp 65001", "neighbor 192.0.2.10 description customer-a-moved")
	jobs = e.run(e.engine(backup.Options{Workers: 5}), ids...)
	for i, r := range routers {
		b := e.backup(jobs[ids[i]])
		if b.Changed != (i == 2) {
			t.Errorf("%s: changed = %v after a change on %s only", r.Hostname, b.Changed, routers[2].Hostname)
		}
	}
	if strings.Contains(e.log.String(), "s3cret-bgp") {
		t.Error("a neighbour password reached the log")
	}
}
