package backup_test

import (
	"context"
	"strings"
	"testing"

	"backupd/app/backup"
	"backupd/app/collect/driver"
	"backupd/app/devsim"
	"backupd/app/platforms"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// A device on a platform an administrator defined is backed up by the
// engine like any other: the definition's dialogue logs in, raises
// privilege and pages, its cleanup rule drops the build banner, and the
// next backup of the unchanged device is not a change.
func TestEngineBacksUpACustomPlatform(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	t.Cleanup(func() { driver.SetCustom(nil) })
	def := platforms.Definition{
		Schema: platforms.Schema, ID: "custom_acme_ios", Name: "Acme IOS-like", Vendor: "Acme",
		Prompt:          `^[\w.-]{1,60}[>#]$`,
		Pager:           `(?i)--\s?more\s?--$`,
		PagingOff:       []string{"terminal length 0"},
		Enable:          &platforms.Enable{Command: "enable", Privileged: `#$`, Failed: `(?i)denied|bad secret`},
		DefaultCommands: []string{"show running-config"},
		Strip:           []string{`^Building configuration\.\.\.$`},
		Noise:           []string{`^! Last configuration change at `, `^! NVRAM config last updated at `, `^ntp clock-period \d+$`},
	}
	if _, err := platforms.Save(ctx, e.store, def, true); err != nil {
		t.Fatal(err)
	}
	ids := []int64{
		e.sim("acme-ssh", "cisco_ios", "ssh", devsim.Options{Seed: 11}),
		e.sim("acme-telnet", "cisco_ios", "telnet", devsim.Options{Seed: 12}),
	}
	for _, id := range ids {
		if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE devices SET platform = ? WHERE id = ?`, def.ID, id); err != nil {
			t.Fatal(err)
		}
	}
	eng := e.engine(backup.Options{Workers: 2, MaxAttempts: 1})
	jobs := e.run(eng, ids...)
	for _, id := range ids {
		j := jobs[id]
		if j.State != queue.JobSucceeded {
			t.Fatalf("device %d: %s %v", id, j.State, *j.Error)
		}
		text, err := e.store.SnapshotText(ctx, *e.backup(j).SnapshotHash)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := e.sims[id].LastOutput("show running-config")
		if !strings.Contains(raw, "Building configuration...") {
			t.Fatal("the simulator no longer prints the build banner this test strips")
		}
		want := backup.Normalise(strings.Replace(raw, "Building configuration...\n", "", 1))
		if text != want {
			t.Errorf("device %d: stored text is not the configuration without the build banner", id)
		}
	}
	again := e.run(eng, ids...)
	for _, id := range ids {
		if j := again[id]; j.State != queue.JobSucceeded || e.backup(j).Changed {
			t.Errorf("device %d second backup: %s, changed %v", id, j.State, e.backup(j).Changed)
		}
	}
}
