package cli_test

import (
	"context"
	"strings"
	"testing"

	"backupd/db"
)

// Secrets of the config commands' test device, in forms the Cisco rules
// mask; the second version rotates the community.
const (
	cliEnable    = "$9$cliSaltSalt$cliEnableHash0123456789abcdef"
	cliCommunity = "CliC0mmOld"
	cliRotated   = "CliC0mmNew"
)

func cliSecretConfig(community string) string {
	return "hostname sec1\nenable secret 9 " + cliEnable + "\nsnmp-server community " + community + " RO\nend\n"
}

// config show, diff and search print masked secrets, search finds none
// by its value, and --reveal (the data directory's owner, audited)
// prints them; with masking off for views they print the stored text.
func TestConfigSecretsMasked(t *testing.T) {
	f := newConfigFleet(t)
	ctx := context.Background()
	d, err := f.store.CreateDevice(ctx, db.Device{Name: "sec1", Host: "192.0.2.9", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	addBackup(t, f.store, d.ID, day(20), cliSecretConfig(cliCommunity), "")
	addBackup(t, f.store, d.ID, day(21), cliSecretConfig(cliRotated), "")
	store := []string{"--data", f.data, "--db", f.db}
	leaks := func(what, out string) {
		t.Helper()
		for _, s := range []string{cliEnable, "cliSaltSalt", cliCommunity, cliRotated} {
			if strings.Contains(out, s) {
				t.Errorf("%s prints the secret %q:\n%s", what, s, out)
			}
		}
		if !strings.Contains(out, "<secret:") {
			t.Errorf("%s prints no marker:\n%s", what, out)
		}
	}
	r := mustRun(t, call{}, append([]string{"config", "show", "sec1"}, store...)...)
	leaks("show", r.stdout)
	if strings.Count(r.stdout, "\n") != strings.Count(cliSecretConfig(cliRotated), "\n") {
		t.Errorf("show changed the lines:\n%s", r.stdout)
	}
	r = run(t, call{}, append([]string{"config", "diff", "--color", "never", "sec1"}, store...)...)
	if r.code != 1 {
		t.Fatalf("diff: %s", r)
	}
	leaks("diff", r.stdout)
	if !strings.Contains(r.stdout, "-snmp-server community <secret:") || !strings.Contains(r.stdout, "+snmp-server community <secret:") {
		t.Errorf("the rotated community is not a changed masked line:\n%s", r.stdout)
	}
	if r = run(t, call{}, append([]string{"config", "search", "-F", cliRotated}, store...)...); r.code != 1 || r.stdout != "" {
		t.Errorf("searching a secret's value finds it:\n%s", r)
	}
	r = mustRun(t, call{}, append([]string{"config", "search", "snmp-server community"}, store...)...)
	leaks("search", r.stdout)
	if n := countCLIReveals(t, f.store); n != 0 {
		t.Fatalf("%d reveals audited before any", n)
	}

	r = mustRun(t, call{}, append([]string{"config", "show", "--reveal", "sec1"}, store...)...)
	if r.stdout != cliSecretConfig(cliRotated) || !strings.Contains(r.stderr, "audit log") {
		t.Errorf("show --reveal:\n%s", r)
	}
	if n := countCLIReveals(t, f.store); n != 1 {
		t.Errorf("%d reveals audited, want 1", n)
	}

	if err := f.store.PutSetting(ctx, db.SettingSecretMasking, db.SecretMasking{Git: true}); err != nil {
		t.Fatal(err)
	}
	if r = mustRun(t, call{}, append([]string{"config", "show", "sec1"}, store...)...); r.stdout != cliSecretConfig(cliRotated) {
		t.Errorf("with masking off for views, show masks:\n%s", r)
	}
}

func countCLIReveals(t *testing.T, store *db.Store) int {
	t.Helper()
	entries, _, err := store.ListAudit(context.Background(), 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Action == "config.reveal" && e.Interface == "cli" && strings.HasPrefix(e.Username, "os:") {
			n++
		}
	}
	return n
}
