package backup_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"backupd/app/backup"
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
func TestRunPlatformTestAgainstADevice(t *testing.T) {
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

	// A definition equivalent to the built-in Cisco IOS dialogue, its ID
	// not chosen yet: a test needs none.
	def := platforms.Definition{
		Schema: platforms.Schema, Name: "Acme OS", Vendor: "Acme",
		Prompt:          `^[\w.-]{1,60}[>#]$`,
		Pager:           `(?i)--\s?more\s?--$`,
		PagingOff:       []string{"terminal length 0"},
		Enable:          &platforms.Enable{Command: "enable", PasswordPrompt: `(?i)password ?:$`, Privileged: `#$`, Failed: `(?i)denied|bad secret`},
		PreLogin:        []platforms.Answer{{Match: `(?i)press any key`, Send: `\n`}},
		CommandError:    `^% Invalid`,
		DefaultCommands: []string{"show running-config"},
		Strip:           []string{`^Building configuration\.\.\.$`},
		Noise:           []string{`^! Last configuration change at `},
	}
	p, warnings, err := platforms.TestPlatform(def)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("TestPlatform: %v, warnings %v", err, warnings)
	}
	check := func(what string, res backup.PlatformTestResult) {
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
		res, err := backup.RunPlatformTest(ctx, store, sealer, p, backup.PlatformTestTarget{Host: "127.0.0.1", Port: portOf(addr),
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
	res, err := backup.RunPlatformTest(ctx, store, sealer, p, backup.PlatformTestTarget{DeviceID: dev.ID, Scope: db.Scope{All: true}})
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
		target backup.PlatformTestTarget
		want   error
	}{
		{"no target", backup.PlatformTestTarget{}, backup.ErrPlatformTestNoTarget},
		{"unknown device", backup.PlatformTestTarget{DeviceID: dev.ID + 100, Scope: db.Scope{All: true}}, backup.ErrPlatformTestNoDevice},
		{"device of another group", backup.PlatformTestTarget{DeviceID: dev.ID, Scope: db.Scope{GroupIDs: []int64{other.ID}}}, backup.ErrPlatformTestNoDevice},
		{"bad host", backup.PlatformTestTarget{Host: "http://x y"}, backup.ErrPlatformTestHost},
		{"bad port", backup.PlatformTestTarget{Host: "127.0.0.1", Port: 99999}, backup.ErrPlatformTestPort},
	} {
		if _, err := backup.RunPlatformTest(ctx, store, sealer, p, c.target); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	sshOnly := def
	sshOnly.Transports = []string{"ssh"}
	ps, _, err := platforms.TestPlatform(sshOnly)
	if err != nil {
		t.Fatal(err)
	}
	var transport *backup.PlatformTestTransportError
	if _, err := backup.RunPlatformTest(ctx, store, sealer, ps, backup.PlatformTestTarget{Host: "127.0.0.1", Method: "telnet"}); !errors.As(err, &transport) {
		t.Errorf("telnet to an SSH-only platform: %v", err)
	}

	if list, _ := store.ListCustomPlatforms(ctx); len(list) != 0 {
		t.Fatalf("a test stored a platform: %+v", list)
	}
	if _, ok := driver.Lookup(p.ID); ok {
		t.Fatal("a test installed a platform")
	}
}
