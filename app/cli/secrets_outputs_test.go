package cli_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/demo"
	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/outbox"
)

// One simulated device of every platform is backed up by the real
// binary, twice, its passwords and communities rotated in between; then
// no output a configuration goes to holds any of its secrets: the git
// mirror's files and history, the webhook bodies with diffs, the version,
// raw and diff pages a viewer reads, and config show and diff. config
// show prints the stored text but for the lines that hold a secret.
func TestSecretsNeverLeaveAnyOutput(t *testing.T) {
	t.Parallel() // see runTests
	ctx := context.Background()
	data := storeDir(t)
	sealer, err := secret.LoadOrCreate(data)
	if err != nil {
		t.Fatal(err)
	}
	store := openStore(t, data)
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "lab", Username: simUser,
		Password:       sealer.Seal(simPassword, secret.PurposePassword),
		EnablePassword: sealer.Seal(simEnable, secret.PurposeEnablePassword)})
	if err != nil {
		t.Fatal(err)
	}
	type device struct {
		id   int64
		name string
		sim  *devsim.Device
	}
	var devices []device
	for i, platform := range devsim.Platforms() {
		p, _ := driver.Lookup(platform)
		o := devsim.Options{Platform: platform, Hostname: "sec-" + strings.ReplaceAll(platform, "_", "-"), Seed: int64(500 + i),
			Username: simUser, Password: simPassword}
		if per, ok := devsim.Lookup(platform); ok && per.EnableCommand != "" {
			o.EnablePassword = simEnable
		}
		method := "ssh"
		if !p.OffersTransport("ssh") {
			method, o.TelnetAddr = "telnet", "127.0.0.1:0"
		} else {
			o.SSHAddr = "127.0.0.1:0"
		}
		sim, err := devsim.NewDevice(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sim.Close() })
		addr := sim.SSHAddr()
		if method == "telnet" {
			addr = sim.TelnetAddr()
		}
		_, port, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(port)
		d, err := store.CreateDevice(ctx, db.Device{Name: o.Hostname, Host: "127.0.0.1", Port: n, Platform: platform,
			LoginMethod: method, CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		devices = append(devices, device{id: d.ID, name: d.Name, sim: sim})
	}
	hook := &bodyRecorder{}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	webhookRule(t, store, sealer, "scan", hs.URL+"/hook", []byte("scan-key"), true, outbox.EventConfigChanged)

	mustRun(t, call{}, "backup", "run", "--all", "--data", data)
	for _, d := range devices {
		for _, name := range demo.Rotated {
			d.sim.RotateSecret(name)
		}
	}
	mustRun(t, call{}, "backup", "run", "--all", "--data", data)
	mustRun(t, call{}, "export", "git", "--no-push", "--data", data)
	mustRun(t, call{stdin: "viewer-password-1\n"}, "user", "create", "--data", data, "vera", "--role", "Viewer", "--all-groups", "--password-stdin")
	srv := startServe(t, data, "--notify-window", "1s")
	viewer := viewerClient(t, srv.url, "vera", "viewer-password-1")

	repo := filepath.Join(data, "git", "mirror")
	history := gitOut(t, repo, "log", "-p", "--all")
	marker := regexp.MustCompile(`<secret:[0-9a-f]{6}>`)
	for _, d := range devices {
		t.Run(d.sim.Platform(), func(t *testing.T) {
			secrets := d.sim.Secrets()
			leaks := func(where, text string) {
				t.Helper()
				lower := strings.ToLower(text)
				for _, s := range secrets {
					if strings.Contains(lower, strings.ToLower(s)) {
						t.Errorf("%s holds the secret %q", where, s)
					}
				}
			}
			page, err := store.DeviceHistory(ctx, d.id, db.HistoryQuery{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var good []db.Backup
			for _, b := range page.Items {
				if b.SnapshotHash != nil {
					good = append(good, b)
				}
			}
			if len(good) != 2 {
				t.Fatalf("%d good versions, want 2 (the rotation a change)", len(good))
			}
			stored, err := store.SnapshotText(ctx, *good[0].SnapshotHash)
			if err != nil {
				t.Fatal(err)
			}
			show := mustRun(t, call{}, "config", "show", "--data", data, "--name", d.name).stdout
			leaks("config show", show)
			if len(secrets) > 0 && !marker.MatchString(show) {
				t.Errorf("config show prints no marker")
			}
			before, after := strings.Split(stored, "\n"), strings.Split(show, "\n")
			if len(before) != len(after) {
				t.Fatalf("config show prints %d lines of %d", len(after), len(before))
			}
			for i := range before {
				if before[i] != after[i] && !marker.MatchString(after[i]) {
					t.Errorf("config show changed a line without masking a secret:\n  %s\n→ %s", before[i], after[i])
				}
			}
			leaks("config diff", run(t, call{}, "config", "diff", "--color", "never", "--data", data, "--name", d.name).stdout)
			file, err := os.ReadFile(filepath.Join(repo, d.name))
			if err != nil {
				t.Fatal(err)
			}
			leaks("the git mirror's file", string(file))
			base := fmt.Sprintf("%s/devices/%d", srv.url, d.id)
			for _, path := range []string{
				"/versions/" + good[0].ID, "/versions/" + good[0].ID + "/raw",
				"/diff?" + url.Values{"from": {good[1].ID}, "to": {good[0].ID}}.Encode(),
				"/diff/raw?" + url.Values{"from": {good[1].ID}, "to": {good[0].ID}}.Encode(),
			} {
				res, err := viewer.Get(base + path)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: %s", path, res.Status)
				}
				leaks("page "+path, strings.NewReplacer(`<mark class="diff-char">`, "", "</mark>", "").Replace(string(body)))
			}
		})
	}
	for _, d := range devices {
		lower := strings.ToLower(history)
		for _, s := range d.sim.Secrets() {
			if strings.Contains(lower, strings.ToLower(s)) {
				t.Errorf("the git history holds a secret of %s: %q", d.name, s)
			}
		}
	}
	waitFor(t, srv, "the webhook gets the changes", func() bool { return strings.Contains(strings.Join(hook.all(), ""), "config.changed") })
	bodies := strings.ToLower(strings.Join(hook.all(), "\n"))
	for _, d := range devices {
		for _, s := range d.sim.Secrets() {
			if strings.Contains(bodies, strings.ToLower(s)) {
				t.Errorf("a webhook body holds a secret of %s: %q", d.name, s)
			}
		}
	}
}
