package devsim

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// A configuration set by hand is what every configuration command prints,
// behind the header the device renders fresh at each show; until then
// the generated one is.
func TestSetRunningConfigKeepsHeaderFresh(t *testing.T) {
	for _, tc := range []struct {
		platform, header string
		volatile         bool
	}{
		{"cisco_xe", "Building configuration...\n\nCurrent configuration : ", true},
		{"juniper_junos", "## Last commit: ", false},
	} {
		t.Run(tc.platform, func(t *testing.T) {
			d := startDevice(t, Options{Platform: tc.platform, ConfigSize: MinConfigSize})
			cmd := d.Personality().ConfigCommands[0]
			generated, _ := d.Show(cmd)
			if !strings.HasSuffix(generated, d.RunningConfig()) {
				t.Fatal("RunningConfig is not the tail of the generated show")
			}
			if len(d.Commits()) != 1 || d.Commits()[0].Kind != CommitInitial {
				t.Errorf("fresh device history: %v", kinds(d.Commits()))
			}
			body := "version 1.0;\nsystem {\n    host-name by-hand;\n}\n"
			if tc.platform == "cisco_xe" {
				body = "version 17.9\nhostname by-hand\n!\nend\n"
			}
			// The sender's own header lines are not kept.
			d.SetRunningConfig(strings.ReplaceAll(generated[:len(generated)-len(d.RunningConfig())]+body, "\n", "\r\n"))
			if d.RunningConfig() != body {
				t.Fatalf("RunningConfig %q, want %q", d.RunningConfig(), body)
			}
			first, _ := d.Show(cmd)
			second, _ := d.Show(cmd)
			if !strings.HasPrefix(first, tc.header) || !strings.HasSuffix(first, body) {
				t.Errorf("show after SetRunningConfig:\n%s", first)
			}
			if _, after, ok := strings.Cut(first, "Current configuration : "); ok {
				size, rest, _ := strings.Cut(after, " bytes\n")
				if size != strconv.Itoa(len(rest)) {
					t.Errorf("size line says %s bytes, %d follow", size, len(rest))
				}
			}
			if (first != second) != tc.volatile {
				t.Errorf("two shows identical=%v; the platform's header volatile=%v", first == second, tc.volatile)
			}
			if len(d.Commits()) != 2 || lastCommit(d).Kind != CommitManual {
				t.Errorf("history after SetRunningConfig: %v", kinds(d.Commits()))
			}

			// Mutate makes the generated model the configuration again.
			d.Mutate(9)
			if d.RunningConfig() == body || !strings.Contains(d.RunningConfig(), "version ") {
				t.Error("Mutate did not bring back the generated configuration")
			}
			if len(d.Commits()) != 3 {
				t.Errorf("Mutate not recorded: %v", kinds(d.Commits()))
			}
		})
	}
}

func TestFiles(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_xe"})
	data := []byte("hostname x\n")
	if !d.PutFile("bootflash:/restore.cfg", data) {
		t.Fatal("PutFile refused a small file")
	}
	data[0] = 'X'
	got, ok := d.File("flash:restore.cfg")
	if !ok || string(got) != "hostname x\n" {
		t.Errorf("File: %q %v (flash: and bootflash: are one file system; data is copied)", got, ok)
	}
	got[0] = 'Y'
	if again, _ := d.File("flash:/restore.cfg"); string(again) != "hostname x\n" {
		t.Error("File returned the stored slice")
	}
	if d.PutFile("/var/tmp/big", make([]byte, maxFileSize+1)) {
		t.Error("PutFile took a file over the bound")
	}
	d.PutFile("/var/tmp//a/../restore.conf", []byte("x"))
	if _, ok := d.File("/var/tmp/restore.conf"); !ok {
		t.Error("Unix paths are not cleaned")
	}
	if fmt.Sprint(d.Files()) != "[/var/tmp/restore.conf flash:restore.cfg]" {
		t.Errorf("Files: %v", d.Files())
	}
}

// History keeps the last 50 versions.
func TestHistoryBounded(t *testing.T) {
	d := startDevice(t, Options{Platform: "juniper_junos", ConfigSize: MinConfigSize})
	for i := 0; i < maxHistory+5; i++ {
		d.SetRunningConfig(fmt.Sprintf("version %d;\n", i))
	}
	h := d.Commits()
	if len(h) != maxHistory || h[len(h)-1].Seq != maxHistory+6 || h[len(h)-1].Text != fmt.Sprintf("version %d;\n", maxHistory+4) {
		t.Errorf("history: %d versions, last seq %d", len(h), h[len(h)-1].Seq)
	}
}
