package platforms_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/devsim"
	"backupd/app/platforms"
	"backupd/app/secret"
	"backupd/db"
	"backupd/internal/dbtest"
)

// An unsaved definition runs a real session against the simulated device
// on loopback, over SSH and telnet, typed in or with a stored device's
// login; what comes back is cleaned up as a backup would be, with the
// passwords masked, and nothing is stored or installed.
func TestRunTestAgainstADevice(t *testing.T) {
	ctx := context.Background()
	store := dbtest.Open(t)
	sealer, err := secret.LoadOrCreate(dbtest.DataDir(t, store))
	if err != nil {
		t.Fatal(err)
	}
	const password, enable = "Sim-pass-9241", "Sim-enable-5177"
	sim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "acme-lab", Username: "netops",
		Password: password, EnablePassword: enable, SSHAddr: "127.0.0.1:0", TelnetAddr: "127.0.0.1:0", Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	portOf := func(addr string) int {
		_, p, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(p)
		return n
	}

	def := valid()
	def.ID = "" // not chosen yet: a test needs none
	def.Enable.PasswordPrompt = `(?i)password ?:$`
	p, warnings, err := platforms.TestPlatform(def)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("TestPlatform: %v, warnings %v", err, warnings)
	}
	check := func(what string, res platforms.TestResult) {
		t.Helper()
		if !res.OK || !strings.Contains(res.Text, "hostname acme-lab") || strings.Contains(res.Text, "Building configuration...") {
			t.Fatalf("%s: ok %v, error %q, text %.200q", what, res.OK, res.Error, res.Text)
		}
		if len(res.Segments) == 0 {
			t.Errorf("%s: no transcript", what)
		}
		for _, seg := range res.Segments {
			if strings.Contains(seg.Text, password) || strings.Contains(seg.Text, enable) {
				t.Fatalf("%s: the transcript shows a password", what)
			}
		}
	}
	for method, addr := range map[string]string{"ssh": sim.SSHAddr(), "telnet": sim.TelnetAddr()} {
		res, err := platforms.RunTest(ctx, store, sealer, p, platforms.TestTarget{Host: "127.0.0.1", Port: portOf(addr),
			Method: method, Username: "netops", Password: password, EnablePassword: enable})
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		check(method, res)
	}

	// A stored device, with its own address and credential.
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "lab", Username: "netops",
		Password:       sealer.Seal(password, secret.PurposePassword),
		EnablePassword: sealer.Seal(enable, secret.PurposeEnablePassword)})
	if err != nil {
		t.Fatal(err)
	}
	group, err := store.CreateGroup(ctx, "Lab", nil)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := store.CreateDevice(ctx, db.Device{Name: "lab-telnet", Host: "127.0.0.1", Port: portOf(sim.TelnetAddr()),
		Platform: "cisco_ios", LoginMethod: "telnet", CredentialID: &cred.ID, GroupID: &group.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := platforms.RunTest(ctx, store, sealer, p, platforms.TestTarget{DeviceID: dev.ID, Scope: db.Scope{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	check("stored device", res)
	if res.Method != "telnet" || res.Host != "127.0.0.1" {
		t.Errorf("stored device: went by %s to %s", res.Method, res.Host)
	}

	// Refusals come before any session.
	other, err := store.CreateGroup(ctx, "Elsewhere", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		target platforms.TestTarget
		want   error
	}{
		{"no target", platforms.TestTarget{}, platforms.ErrTestNoTarget},
		{"unknown device", platforms.TestTarget{DeviceID: dev.ID + 100, Scope: db.Scope{All: true}}, platforms.ErrTestNoDevice},
		{"device of another group", platforms.TestTarget{DeviceID: dev.ID, Scope: db.Scope{GroupIDs: []int64{other.ID}}}, platforms.ErrTestNoDevice},
		{"bad host", platforms.TestTarget{Host: "http://x y"}, platforms.ErrTestHost},
		{"bad port", platforms.TestTarget{Host: "127.0.0.1", Port: 99999}, platforms.ErrTestPort},
	} {
		if _, err := platforms.RunTest(ctx, store, sealer, p, c.target); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	sshOnly := def
	sshOnly.Transports = []string{"ssh"}
	ps, _, err := platforms.TestPlatform(sshOnly)
	if err != nil {
		t.Fatal(err)
	}
	var transport *platforms.TestTransportError
	if _, err := platforms.RunTest(ctx, store, sealer, ps, platforms.TestTarget{Host: "127.0.0.1", Method: "telnet"}); !errors.As(err, &transport) {
		t.Errorf("telnet to an SSH-only platform: %v", err)
	}

	if list, _ := store.ListCustomPlatforms(ctx); len(list) != 0 {
		t.Fatalf("a test stored a platform: %+v", list)
	}
	if _, ok := driver.Lookup(p.ID); ok {
		t.Fatal("a test installed a platform")
	}
}

// A definition whose only fault is its ID still runs, under a
// placeholder, the fault said; any other fault stops it.
func TestTestPlatformNeedsNoID(t *testing.T) {
	def := valid()
	def.ID = "Not An ID"
	p, warnings, err := platforms.TestPlatform(def)
	if err != nil || len(warnings) != 1 || warnings[0].Field != "id" || p.ID == "" {
		t.Fatalf("bad ID: platform %q, warnings %v, %v", p.ID, warnings, err)
	}
	def.Prompt = "(("
	var errs platforms.Errors
	if _, _, err := platforms.TestPlatform(def); !errors.As(err, &errs) {
		t.Fatalf("a bad prompt and ID: %v, want the definition's errors", err)
	}
}
