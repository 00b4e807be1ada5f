package backup_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"backupd/app/backup"
	"backupd/app/devsim"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/testkit"
)

// repoint moves device id to port on 127.0.0.1 through the store, as any
// path that changes a device does: the engine must not trust it.
func (e *engEnv) repoint(id int64, port int) {
	e.t.Helper()
	if _, err := e.store.UpdateDevice(context.Background(), id, func(d *db.Device) error {
		d.Host, d.Port = "127.0.0.1", port
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
}

func jobError(j queue.Job) string {
	if j.Error == nil {
		return ""
	}
	return *j.Error
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A telnet device whose address changed after its credential went to the
// old one is not logged into: the job fails without even connecting, and
// a listener at the new address receives nothing. Once someone confirms
// the address the credential goes there — which also shows the listener
// would have caught it.
func TestTelnetDeviceRepointedIsNotLoggedIntoUntilConfirmed(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	id := e.sim("edge-sw", "cisco_ios", "telnet", devsim.Options{Seed: 71})
	eng := e.engine(backup.Options{Workers: 1})
	if j := e.run(eng, id)[id]; j.State != queue.JobSucceeded {
		t.Fatalf("first backup: %s %v", j.State, *j.Error)
	}
	d, _ := e.store.GetDevice(ctx, id)
	if d.AddressPin == nil || *d.AddressPin != d.Address() {
		t.Fatalf("the first backup did not pin the address: %v", d.AddressPin)
	}

	trap := testkit.NewLoginTrap(t)
	e.repoint(id, trap.Port())
	j := e.run(eng, id)[id]
	if j.State != queue.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "address changed") || !strings.Contains(*j.Error, "accept-address") {
		t.Fatalf("backup after the re-point: %s %q; the listener got %q", j.State, jobError(j), trap.Received())
	}
	if j.Attempt != 1 {
		t.Errorf("an unconfirmed address was retried: attempt %d", j.Attempt)
	}
	if trap.Connections() != 0 || strings.Contains(trap.Received(), engPassword) || strings.Contains(trap.Received(), engUser) {
		t.Fatalf("the listener got %d connections and %q", trap.Connections(), trap.Received())
	}
	if strings.Contains(e.log.String(), engPassword) {
		t.Fatal("the password reached the log")
	}

	d, _ = e.store.GetDevice(ctx, id)
	if _, err := e.store.ConfirmAddress(ctx, id, "telnet|127.0.0.1|1|1"); err != db.ErrAddressMoved {
		t.Fatalf("confirming an address other than the device's: %v", err)
	}
	previous, err := e.store.ConfirmAddress(ctx, id, d.Address())
	if err != nil || previous != *d.AddressPin {
		t.Fatalf("confirm: %q %v", previous, err)
	}
	if _, err := e.store.ConfirmAddress(ctx, id, d.Address()); err != db.ErrAddressConfirmed {
		t.Fatalf("confirming twice: %v", err)
	}
	e.run(eng, id)
	if !strings.Contains(trap.Received(), engPassword) {
		t.Fatalf("after confirming, the credential did not go to the new address: %q", trap.Received())
	}
}

// An SSH device re-pointed at another SSH server (one that would accept
// the same login) is not logged into: the server presents another host
// key, the login stops before the password is offered, and the key waits
// to be accepted. Accepting it confirms the new address too.
func TestSSHDeviceRepointedToAnotherKeyIsNotLoggedInto(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	id := e.sim("core-r1", "cisco_ios", "ssh", devsim.Options{Seed: 72})
	eng := e.engine(backup.Options{Workers: 1})
	if j := e.run(eng, id)[id]; j.State != queue.JobSucceeded {
		t.Fatalf("first backup: %s %v", j.State, *j.Error)
	}
	rogue, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "rogue", Seed: 99, Username: engUser,
		Password: engPassword, EnablePassword: engEnable, SSHAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rogue.Close() })
	e.repoint(id, portOf(t, rogue.SSHAddr()))

	j := e.run(eng, id)[id]
	if j.State != queue.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "host key changed") {
		t.Fatalf("backup against the other server: %s %q", j.State, jobError(j))
	}
	if st := rogue.Stats(); st.Logins != 0 || st.FailedLogins != 0 {
		t.Fatalf("the other server was offered the login: %+v", st)
	}
	_, pending, _ := e.store.HostKeys(ctx, id)
	if err := e.store.AcceptSeenHostKey(ctx, id, pending); err != nil {
		t.Fatal(err)
	}
	d, _ := e.store.GetDevice(ctx, id)
	if d.AddressPin == nil || *d.AddressPin != d.Address() {
		t.Fatalf("accepting the key did not confirm the address: %v", d.AddressPin)
	}
	if j := e.run(eng, id)[id]; j.State != queue.JobSucceeded || rogue.Stats().Logins != 1 {
		t.Fatalf("after accepting: %s %q, logins %d", j.State, jobError(j), rogue.Stats().Logins)
	}
}

// An SSH device with no pinned key (its first backup never got that far)
// has no key to prove itself with: a new address waits for confirmation
// like a telnet one, and the server there is not even connected to.
func TestSSHDeviceWithoutKeyRepointedWaits(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	id := e.device("dark", "cisco_ios", "ssh", engClosedPort(t))
	eng := e.engine(backup.Options{Workers: 1, MaxAttempts: 1})
	if j := e.run(eng, id)[id]; j.State != queue.JobFailed {
		t.Fatalf("backup of a closed port: %s", j.State)
	}
	d, _ := e.store.GetDevice(ctx, id)
	if d.AddressPin == nil {
		t.Fatal("the attempt sent nothing yet pinned no address")
	}
	sim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "elsewhere", Seed: 5, Username: engUser,
		Password: engPassword, EnablePassword: engEnable, SSHAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	e.repoint(id, portOf(t, sim.SSHAddr()))
	j := e.run(eng, id)[id]
	if j.State != queue.JobFailed || !strings.Contains(jobError(j), "address changed") {
		t.Fatalf("backup at the new address: %s %q", j.State, jobError(j))
	}
	if st := sim.Stats(); st.Connections != 0 {
		t.Fatalf("the server at the new address was connected to: %+v", st)
	}
}
