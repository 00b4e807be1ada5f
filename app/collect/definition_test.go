package collect

import (
	"strings"
	"testing"

	"backupd/app/devsim"
	"backupd/app/platforms"
)

// iosLike is a custom platform written the way an administrator would
// write one for a Cisco IOS-like device: prompt, pager, paging off,
// enable.
func iosLike(t *testing.T, pagingOff bool) platforms.Definition {
	t.Helper()
	d := platforms.Definition{
		Schema: platforms.Schema, ID: "custom_ios_like", Name: "IOS-like",
		Prompt:          `^[\w.-]{1,60}[>#]$`,
		Pager:           `(?i)--\s?more\s?--$`,
		Enable:          &platforms.Enable{Command: "enable", Privileged: `#$`, Failed: `(?i)denied|bad secret`},
		CommandError:    `^% ?(Invalid|Incomplete|Ambiguous)`,
		DefaultCommands: []string{"show running-config"},
	}
	if pagingOff {
		d.PagingOff = []string{"terminal length 0"}
	}
	return d
}

// A definition that is not in the registry collects like a built-in
// platform, and the transcript shows the session with both passwords
// masked: the telnet login password and the enable password are sent on
// the stream, so they would appear without the mask.
func TestCollectWithDefinitionAndTranscript(t *testing.T) {
	for _, c := range []struct {
		method    string
		pagingOff bool
	}{{"ssh", true}, {"telnet", true}, {"ssh", false}, {"telnet", false}} {
		name := c.method
		if !c.pagingOff {
			name += "/pager"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := startDevice(t, devsim.Options{Platform: "cisco_ios", EnablePassword: enablePassword, Seed: 3})
			def, err := iosLike(t, c.pagingOff).Platform()
			if err != nil {
				t.Fatal(err)
			}
			tg := target(t, d, c.method)
			tg.Platform = ""
			tg.Definition = &def
			tr := &Transcript{}
			tg.Transcript = tr
			res, err := collect(t, tg)
			if err != nil {
				t.Fatal(err)
			}
			if want := shown(t, d); res.Text != want {
				t.Fatalf("captured text differs from what the device showed: %s", firstDiff(res.Text, want))
			}
			segs, truncated := tr.Segments()
			var all, sent strings.Builder
			for _, s := range segs {
				all.WriteString(s.Text)
				if s.Kind == SegmentSent {
					sent.WriteString(s.Text)
				}
			}
			text := all.String()
			if truncated {
				t.Error("a short session was cut")
			}
			for _, secret := range []string{loginPassword, enablePassword} {
				if strings.Contains(text, secret) {
					t.Fatalf("the transcript shows a password")
				}
			}
			if !strings.Contains(sent.String(), "show running-config") || !strings.Contains(sent.String(), "enable") {
				t.Errorf("the commands sent are not in the transcript:\n%s", sent.String())
			}
			if c.pagingOff != strings.Contains(sent.String(), "terminal length 0") {
				t.Errorf("paging off sent: %v, want %v", !c.pagingOff, c.pagingOff)
			}
			// The enable password (and over telnet the login password)
			// was sent, masked.
			wantMasks := 1
			if c.method == "telnet" {
				wantMasks = 2
			}
			if n := strings.Count(sent.String(), Mask); n < wantMasks {
				t.Errorf("%d masked passwords in what was sent, want %d:\n%s", n, wantMasks, sent.String())
			}
			if !strings.Contains(text, strings.SplitN(res.Text, "\n", 2)[0]) {
				t.Error("the device's output is not in the transcript")
			}
		})
	}
}

// Exec platforms record each request and its output.
func TestCollectTranscriptExec(t *testing.T) {
	d := startDevice(t, devsim.Options{Platform: "juniper_junos"})
	def, err := platforms.Definition{
		Schema: platforms.Schema, ID: "custom_junos_like", Name: "Junos-like", Exec: true,
		Prompt: `^[\w.-]+@[\w.-]+[>#%]$`, DefaultCommands: []string{"show configuration | display set"},
	}.Platform()
	if err != nil {
		t.Fatal(err)
	}
	tg := target(t, d, "ssh")
	tg.Platform, tg.Definition = "", &def
	tr := &Transcript{Max: 4096}
	tg.Transcript = tr
	res, err := collect(t, tg)
	if err != nil {
		t.Fatal(err)
	}
	segs, truncated := tr.Segments()
	if len(segs) < 2 || segs[0].Kind != SegmentNote || !strings.Contains(segs[0].Text, "[exec] show configuration | display set") ||
		segs[1].Kind != SegmentReceived {
		t.Fatalf("transcript %+v", segs)
	}
	size := 0
	for _, s := range segs {
		size += len(s.Text)
	}
	// The configuration is larger than the bound: the transcript is cut
	// and says so, the capture is whole.
	if len(res.Text) <= 4096 || !truncated || size > 4096+64 {
		t.Fatalf("capture %d bytes, transcript %d bytes, truncated %v", len(res.Text), size, truncated)
	}
}

// A definition that does not compile is refused before any connection.
func TestCollectRefusesBadDefinition(t *testing.T) {
	def, _ := iosLike(t, true).Platform()
	def.Dialogue.Prompt = nil
	_, err := Collect(t.Context(), Target{Definition: &def, Host: "127.0.0.1", Port: 1})
	if err == nil || !strings.Contains(err.Error(), "no prompt pattern") {
		t.Fatalf("err = %v", err)
	}
}
