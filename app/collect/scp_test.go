package collect

import (
	"strings"
	"testing"
	"time"

	"backupd/app/devsim"
)

// TestCollectFileFailures: a file fetched over SCP fails clearly, within
// its bounds, never quoting the file or a password: missing on the device
// (its own SCP message), larger than the output limit, a device that
// stalls or hangs up mid-file, a telnet login, a path that cannot be sent.
func TestCollectFileFailures(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    devsim.Options
		method  string
		reason  string
		mention string
		tweak   func(*Target)
	}{
		{"missing", devsim.Options{Platform: "apc_aos"}, "ssh", ReasonProtocol,
			"`scp:nothing.ini`: the device refused the file: scp: nothing.ini: No such file or directory",
			func(tg *Target) { tg.Commands = []string{"scp:nothing.ini"} }},
		{"too large", devsim.Options{Platform: "apc_aos", ConfigSize: 64 << 10}, "ssh", ReasonOutputTooLarge,
			"the file of `scp:config.ini` exceeds the limit of 16384 bytes", func(tg *Target) { tg.MaxOutput = 16 << 10 }},
		{"hang mid file", devsim.Options{Platform: "apc_aos", Failures: []devsim.Failure{devsim.FailHangMidOutput}}, "ssh", ReasonTimeout,
			"timed out fetching `scp:config.ini` over SCP: the command timeout (2s) ran out", nil},
		{"disconnect mid file", devsim.Options{Platform: "apc_aos", Failures: []devsim.Failure{devsim.FailDisconnectMidOutput}}, "ssh", ReasonProtocol,
			"the device closed the connection during `scp:config.ini`; the file is incomplete", nil},
		{"telnet", devsim.Options{Platform: "cisco_ios"}, "telnet", ReasonProtocol,
			"`scp:config.ini`: scp: needs ssh", func(tg *Target) { tg.Commands = []string{"show running-config", "scp:config.ini"} }},
		{"path with a space", devsim.Options{Platform: "apc_aos"}, "ssh", ReasonProtocol,
			"`scp:config.ini reboot`: unusable scp path", func(tg *Target) { tg.Commands = []string{"scp:config.ini reboot"} }},
		{"path with a quote", devsim.Options{Platform: "apc_aos"}, "ssh", ReasonProtocol,
			"unusable scp path", func(tg *Target) { tg.Commands = []string{`scp:config.ini"`} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d, _, err := failing(t, c.opts, c.method, c.tweak)
			if Reason(err) != c.reason || Retryable(err) {
				t.Fatalf("err = %v; reason %q, want %q", err, Reason(err), c.reason)
			}
			if !strings.Contains(err.Error(), c.mention) {
				t.Errorf("message %q does not say %q", err, c.mention)
			}
			if c.method == "telnet" || strings.HasPrefix(c.name, "path") {
				if n := d.Stats().Connections; n != 0 {
					t.Errorf("%d connections: the target should be refused before connecting", n)
				}
			}
		})
	}
}

// TestCollectFileBesideCommands: commands typed at an interactive SSH
// command line and a file fetched over SCP on a second channel of the same
// login, in the order given; and the same beside an exec dialogue
// (Junos), whose file comes over its own exec request. The transcript
// notes the fetch without the file.
func TestCollectFileBesideCommands(t *testing.T) {
	t.Run("shell", func(t *testing.T) {
		d := startDevice(t, devsim.Options{Platform: "apc_aos", Seed: 5})
		tg := target(t, d, "ssh")
		tg.Commands = []string{"about", "scp:config.ini", "upsabout"}
		tg.Transcript = &Transcript{}
		res, err := collect(t, tg)
		if err != nil {
			t.Fatal(err)
		}
		file, _ := d.LastOutput("scp:config.ini")
		parts := strings.SplitN(res.Text, strings.TrimRight(file, "\n")+"\n", 2)
		if len(parts) != 2 || !strings.HasPrefix(parts[0], "E000: Success\nHardware Factory\n") ||
			!strings.HasPrefix(parts[1], "E000: Success\nModel: Smart-UPS 750\n") {
			t.Errorf("collected text is not about, the file, upsabout in order:\n%s", res.Text)
		}
		segs, _ := tg.Transcript.Segments()
		var notes []string
		for _, s := range segs {
			if s.Kind == SegmentNote {
				notes = append(notes, s.Text)
			}
			if strings.Contains(s.Text, "[NetworkTCP/IP]") {
				t.Errorf("the transcript holds the file")
			}
		}
		if all := strings.Join(notes, ""); !strings.Contains(all, "interactive shell") || !strings.Contains(all, "[scp] scp -f config.ini\n[scp] received ") {
			t.Errorf("transcript notes %q", all)
		}
	})
	t.Run("exec", func(t *testing.T) {
		p, _ := devsim.Lookup("juniper_junos")
		p.ConfigCommands = append(p.ConfigCommands, "scp:juniper.conf")
		d := startDevice(t, devsim.Options{Platform: "juniper_junos", Personality: &p})
		tg := target(t, d, "ssh")
		tg.Commands = []string{"show configuration | display omit", "scp:juniper.conf"}
		res, err := collect(t, tg)
		if err != nil {
			t.Fatal(err)
		}
		cli, _ := d.LastOutput("show configuration | display omit")
		file, _ := d.LastOutput("scp:juniper.conf")
		if want := strings.TrimRight(cli, "\n") + "\n" + strings.TrimRight(file, "\n") + "\n"; res.Text != want || file == "" {
			t.Errorf("collected text differs: %s", firstDiff(res.Text, want))
		}
	})
}

// A collection of files only opens no shell: the device sees one SCP
// request and prints nothing on a terminal.
func TestCollectFilesOnlyNoShell(t *testing.T) {
	d := startDevice(t, devsim.Options{Platform: "apc_aos"})
	tg := target(t, d, "ssh")
	tg.Timeouts.Command = 10 * time.Second
	if _, err := collect(t, tg); err != nil {
		t.Fatal(err)
	}
	// The shell would have printed its banner and prompt (terminal
	// writes); the SCP transfer is no terminal output.
	if st := d.Stats(); st.Commands != 1 || st.Writes != 0 {
		t.Errorf("%d requests and %d terminal writes, want the one SCP request and none", st.Commands, st.Writes)
	}
}
