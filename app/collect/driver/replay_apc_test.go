package driver

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"backupd/app/devsim"
)

// The capture of a real APC AP9640 card in a Smart-UPS 750 (Oxidized's
// model test data; see testdata/recordings/README.md): the command-line
// answers (about, upsabout, detstatus -ss) and the file config.ini, which
// the card hands out over SCP or FTP. The card never pages.
func init() {
	addCaptures(capture{file: "apcos_SMT750IC_v2.5.0.8", platform: "apc_aos", scp: true, config: "config.ini",
		wantLines: []string{
			"; Network Management Card AOS v2.5.0.8",
			"[NetworkTCP/IP]",
			"HostName=APC-0007",
			"E4E04=ES,E[:::],T[:::::]",
		}})
}

// CollectForReplay is app/collect's Collect over SSH with the platform's
// default commands, returning the stored text. This package's tests cannot
// import app/collect (it imports this package), so the external test
// package sets it (replay_apc_collect_test.go).
var CollectForReplay func(ctx context.Context, platform, host string, port int, user, password string) (string, error)

// recordedFile is the file a capture recorded under name.
func recordedFile(t *testing.T, rec recording, name string) string {
	t.Helper()
	for _, st := range rec.steps {
		if st.sent == name {
			return st.reply
		}
	}
	t.Fatalf("the recording has no file %q", name)
	return ""
}

// scpReplayServer is a loopback SSH server (user backup, password
// replay-pw) that answers "scp -f <name>" exec requests with the SCP
// source protocol, serving files by name and refusing other names as
// OpenSSH does. It opens no shell. It runs until the test ends.
func scpReplayServer(t *testing.T, files map[string]string) (host string, port int) {
	t.Helper()
	return sshExecServer(t, func(cmd string) (func(ssh.Channel) uint32, bool) {
		name, ok := strings.CutPrefix(cmd, "scp -f ")
		if !ok {
			return nil, false
		}
		return func(ch ssh.Channel) uint32 {
			data, found := files[name]
			if err := devsim.SCPSource(ch, name, []byte(data), !found); err != nil || !found {
				return 1
			}
			return 0
		}, true
	})
}

// replaySCP serves a capture's recorded file over SCP and backs it up
// through app/collect with the platform's default commands: the stored
// text is the recorded file (ending in one newline, as every stored text
// does), and the default commands are that file.
func replaySCP(t *testing.T, c capture) {
	if CollectForReplay == nil {
		t.Fatal("CollectForReplay is not set: the external test package wires app/collect in")
	}
	if want := SCPPrefix + c.config; DefaultCommands(c.platform) != want {
		t.Errorf("default commands %q, want the recorded file %q", DefaultCommands(c.platform), want)
	}
	rec := loadRecording(t, c.file)
	file := recordedFile(t, rec, c.config)
	host, port := scpReplayServer(t, map[string]string{c.config: file})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := CollectForReplay(ctx, c.platform, host, port, "backup", "replay-pw")
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	if want := strings.TrimRight(file, "\n") + "\n"; got != want {
		t.Errorf("stored text differs from the recorded file\ngot:\n%s\nwant:\n%s", got, want)
	}
	lines := strings.Split(got, "\n")
	for _, want := range c.wantLines {
		if !slices.Contains(lines, want) {
			t.Errorf("configuration lacks the line %q", want)
		}
	}
}

// TestAPCNoiseOnCapture: of the real card's config.ini, the noise rules
// take exactly the header line that says when the file was generated, so
// a download an hour later compares equal and a changed setting does not.
func TestAPCNoiseOnCapture(t *testing.T) {
	file := recordedFile(t, loadRecording(t, "apcos_SMT750IC_v2.5.0.8"), "config.ini")
	rules := NoiseRules("apc_aos")
	noisy := func(l string) bool {
		return slices.ContainsFunc(rules, func(re *regexp.Regexp) bool { return re.MatchString(l) })
	}
	var hit []string
	for _, l := range strings.Split(file, "\n") {
		if noisy(l) {
			hit = append(hit, l)
		}
	}
	if want := []string{"; Configuration file, generated on 01/21/2026 at 16:08:12 by Administrator apc"}; !slices.Equal(hit, want) {
		t.Errorf("noise lines %q, want %q", hit, want)
	}
	stable := func(s string) string { return strings.Join(slices.DeleteFunc(strings.Split(s, "\n"), noisy), "\n") }
	later := strings.Replace(file, "01/21/2026 at 16:08:12", "01/21/2026 at 17:08:13", 1)
	changed := strings.Replace(file, "HostName=APC-0007", "HostName=APC-0008", 1)
	if stable(later) != stable(file) || stable(changed) == stable(file) || later == file || changed == file {
		t.Error("the noise rules do not separate a later download from a change")
	}
}
