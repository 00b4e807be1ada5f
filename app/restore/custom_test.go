package restore_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/platforms"
	"backupd/app/restore"
	"backupd/app/restore/frrplan"
	"backupd/app/secret"
	"backupd/db"
	"backupd/internal/testfrr"
)

// labFRR is a custom platform an administrator wrote for FRR's vtysh,
// from the format of docs/platforms.md: the built-in frr platform is not
// used. It saves with "write file" (the built-in says "write memory"),
// so the transcript shows whose declaration the restore followed.
const labFRR = `{
  "schema": "backupd.platform/v1",
  "id": "custom_lab_frr",
  "name": "Lab FRR",
  "vendor": "FRRouting",
  "transports": ["ssh"],
  "prompt": "^[\\w.\\-]+(\\([\\w.\\-]+\\))?#$",
  "paging_off": ["terminal length 0"],
  "command_error": "^% |\\bis not running$",
  "default_commands": ["show running-config"],
  "noise": ["^Building configuration\\.\\.\\.$", "^frr version "],
  "secrets": [{"name": "BGP neighbour password", "match": "^\\s*neighbor \\S+ password (?P<secret>\\S+)"}],
  "restore": {
    "method": "frr_vtysh",
    "config_enter": ["configure terminal"],
    "config_exit": ["end"],
    "save": ["write file"],
    "apply_error": "\\S"
  }
}`

// The "custom platforms can declare a method too", proven on a
// real FRR router: a device of a custom platform declaring frr_vtysh,
// installed the way serve installs stored platforms, is put back on
// yesterday's version after a change by hand, verified, and saved with
// the custom declaration's own command. The same platform without its
// restore object cannot be asked to restore at all.
func TestCustomPlatformRestoresRealFRR(t *testing.T) {
	router := testfrr.Start(t, testfrr.Options{Hostname: "edge7"})
	e := newEngineEnv(t)
	e.router = router
	ctx := context.Background()
	t.Cleanup(func() { driver.SetCustom(nil) })

	noRestore := strings.Replace(labFRR, `"custom_lab_frr"`, `"custom_lab_frr_ro"`, 1)
	noRestore = noRestore[:strings.Index(noRestore, `,
  "restore"`)] + "\n}"
	for id, doc := range map[string]string{"custom_lab_frr": labFRR, "custom_lab_frr_ro": noRestore} {
		if _, err := e.store.CreateCustomPlatform(ctx, id, doc); err != nil {
			t.Fatal(err)
		}
	}
	// As serve does after opening the store.
	if err := platforms.LoadStore(ctx, e.store); err != nil {
		t.Fatal(err)
	}
	pl, ok := driver.Lookup("custom_lab_frr")
	if !ok || !pl.Custom || pl.Restore.Method != "frr_vtysh" || pl.Restore.Save[0] != "write file" {
		t.Fatalf("the custom platform is not installed as declared: %+v", pl.Restore)
	}
	if ro, ok := driver.Lookup("custom_lab_frr_ro"); !ok || ro.CanRestore() {
		t.Fatalf("the platform without restore: installed %v, restores %v", ok, ro.CanRestore())
	}

	_, p, _ := net.SplitHostPort(router.Addr)
	port, _ := strconv.Atoi(p)
	cred := db.Credential{Name: "frr", Username: router.User, PrivateKey: e.sealer.Seal(string(router.PrivateKey), secret.PurposePrivateKey)}
	e.device = e.addDevice("edge7-ro", "custom_lab_frr_ro", port, cred)
	ro := e.backup()
	if _, err := e.svc.Request(ctx, e.admin, e.device, ro.ID, "", nil); !errors.Is(err, restore.ErrNotSupported) {
		t.Fatalf("a restore on the platform without restore: %v", err)
	}

	cred.Name = "frr-2"
	e.device = e.addDevice("edge7", "custom_lab_frr", port, cred)
	yesterday := e.backup()
	e.router.Vtysh(t, "configure terminal",
		"router bgp 65001", "neighbor 192.0.2.99 remote-as 65099", "neighbor 192.0.2.10 description renamed-by-hand", "exit",
		"no route-map RM-TRANSIT-OUT deny 20", "ip prefix-list PL-OWN seq 10 permit 198.51.100.0/24")
	if today := e.backup(); !today.Changed {
		t.Fatal("the change by hand was not seen")
	}

	r := e.restoreTo(yesterday)
	if r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s: %s (%s)\n%s", r.State, deref(r.Error), deref(r.ErrorReason), e.log.String())
	}
	want := e.text(*yesterday.SnapshotHash)
	got := e.router.RunningConfig(t)
	if !frrplan.Equal(got, want) || strings.Contains(got, "192.0.2.99") || strings.Contains(got, "renamed-by-hand") {
		t.Errorf("vtysh does not show yesterday's version:\n%s", strings.Join(frrplan.Diff(got, want), "\n"))
	}
	saved, err := os.ReadFile(filepath.Join(e.router.Dir, "etc", "frr.conf"))
	if err != nil || !frrplan.Equal(string(saved), want) {
		t.Errorf("the version was not saved (%v):\n%s", err, saved)
	}
	segs, _, err := e.store.RestoreTranscript(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var sent strings.Builder
	for _, s := range segs {
		sent.WriteString(s.Text)
	}
	if !strings.Contains(sent.String(), "write file") || strings.Contains(sent.String(), "write memory") {
		t.Errorf("the restore did not save with the custom declaration's command:\n%s", sent.String())
	}
	if strings.Contains(sent.String(), "s3cret-bgp") || strings.Contains(e.log.String(), "s3cret-bgp") {
		t.Error("the neighbour password reached the transcript or the log")
	}
}
