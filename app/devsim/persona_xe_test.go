package devsim

import (
	"crypto/md5"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
	"time"
)

const xePrompt = "CSR1#"

// xeTarget is the device's configuration, as a restore uploads it (no
// show header), with one line changed and one added.
func xeTarget(t *testing.T, d *Device) string {
	t.Helper()
	body := d.RunningConfig()
	target := strings.Replace(body, "snmp-server contact noc@example.net\n", "snmp-server contact restore@example.net\nsnmp-server chassis-id restored\n", 1)
	if target == body {
		t.Fatal("target configuration did not change")
	}
	return target
}

func xeCLI(t *testing.T, d *Device) *cli {
	c := openCLI(t, d, xePrompt)
	c.run("terminal length 0", xePrompt)
	return c
}

// The restore path: configure replace with list and time, the question
// answered, the timer shown, confirmed, saved; the next backup is the
// new configuration behind a fresh header.
func TestXEReplaceConfirm(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_xe"})
	target := xeTarget(t, d)
	d.PutFile("flash:restore.cfg", []byte(target))
	c := xeCLI(t, d)
	out := c.run("configure replace flash:/restore.cfg list time 5", "? [no]: ")
	if !strings.HasSuffix(out, "configuration. Enter Y if you are sure you want to proceed. ? [no]: ") {
		t.Errorf("question: %q", out)
	}
	out = c.run("Y", xePrompt)
	for _, want := range []string{
		"Rollback Confirmed Change: Backing up current running config to flash:archive-",
		"!Pass 1\r\n!List of Commands:\r\nno snmp-server contact noc@example.net\r\nsnmp-server contact restore@example.net\r\nsnmp-server chassis-id restored\r\nend\r\n",
		"Total number of passes: 1\r\nRollback Done\r\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("replace output lacks %q:\n%s", want, out)
		}
	}
	if d.RunningConfig() != target {
		t.Fatal("running configuration is not the file")
	}
	out = c.run("show archive config rollback timer", xePrompt)
	if !strings.Contains(out, "Timer value: 5 min\r\n") || !strings.Contains(out, "User: admin\r\n") {
		t.Errorf("timer: %q", out)
	}
	if out := c.run("show archive", xePrompt); !strings.Contains(out, "There are currently 1 archive configurations saved.") || !strings.Contains(out, "<- Most Recent") {
		t.Errorf("show archive: %q", out)
	}
	c.run("configure confirm", xePrompt)
	if out := c.run("show archive config rollback timer", xePrompt); !strings.Contains(out, "%No Rollback Confirmed Change pending") {
		t.Errorf("timer after confirm: %q", out)
	}
	if out := c.run("configure confirm", xePrompt); !strings.Contains(out, "%No Rollback Confirmed Change pending") {
		t.Errorf("second confirm: %q", out)
	}
	if d.StartupConfig() == target {
		t.Error("startup configuration saved before write memory")
	}
	if out := c.run("write memory", xePrompt); !strings.Contains(out, "Building configuration...\r\n[OK]") {
		t.Errorf("write memory: %q", out)
	}
	if d.StartupConfig() != target {
		t.Error("write memory did not save")
	}

	shown := c.run("show running-config", xePrompt)
	for _, want := range []string{"Building configuration...\r\n\r\nCurrent configuration : ", "! Last configuration change at ", crlf(target)} {
		if !strings.Contains(shown, want) {
			t.Errorf("show running-config lacks %q", tail(want))
		}
	}
	if last := lastCommit(d); last.Kind != CommitReplace || last.Text != target {
		t.Errorf("history ends with %s", last.Kind)
	}
	// Replacing with the same file again changes nothing.
	if out := c.run("configure replace flash:restore.cfg force", xePrompt); !strings.Contains(out, "Total number of passes: 0\r\nRollback Done") {
		t.Errorf("no-op replace: %q", out)
	}
}

// A refused line: with revert trigger error nothing changes; without it
// IOS keeps what it could apply, and configure revert now puts the
// original back.
func TestXEReplaceRejectedLine(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_xe", RejectLines: regexp.MustCompile(`^snmp-server chassis-id`)})
	before := d.RunningConfig()
	target := xeTarget(t, d)
	d.PutFile("bootflash:restore.cfg", []byte(target))
	c := xeCLI(t, d)
	out := c.run("configure replace flash:restore.cfg force revert trigger error", xePrompt)
	if !strings.Contains(out, "Failed to apply command snmp-server chassis-id restored\r\nAborting Rollback.\r\nRollback failed.Reverting back to the original configuration: flash:archive-") ||
		!strings.Contains(out, "Total number of passes: 1\r\nRollback Done") {
		t.Errorf("revert on error printed %q", out)
	}
	if d.RunningConfig() != before || len(d.Commits()) != 1 {
		t.Fatal("configuration changed after revert trigger error")
	}

	out = c.run("configure replace flash:restore.cfg force time 5", xePrompt)
	if !strings.Contains(out, "!List of Rollback Commands:\r\nsnmp-server chassis-id restored\r\nend\r\n") ||
		!strings.Contains(out, "Rollback aborted after 5 passes\r\nThe following commands are failed to apply to the IOS image.\r\n********\r\nsnmp-server chassis-id restored\r\n********") {
		t.Errorf("aborted replace printed %q", out)
	}
	partial := d.RunningConfig()
	if !strings.Contains(partial, "snmp-server contact restore@example.net") || strings.Contains(partial, "chassis-id") {
		t.Error("the lines IOS could apply are not applied")
	}
	c.run("configure revert now", xePrompt)
	if d.RunningConfig() != before {
		t.Error("configure revert now did not restore the original")
	}
	if got := kinds(d.Commits()); len(got) != 3 || got[1] != CommitReplace || got[2] != CommitRevert {
		t.Errorf("history: %v", got)
	}

	// A whole show output as the file: IOS refuses its header lines.
	d.PutFile("flash:full.cfg", []byte(showText(t, d)))
	if out := c.run("configure replace flash:full.cfg force", xePrompt); !strings.Contains(out, "failed to apply to the IOS image.\r\n********\r\nBuilding configuration...\r\nCurrent configuration : ") {
		t.Errorf("header lines: %q", out)
	}
	d.PutFile("flash:empty.cfg", []byte("!\n\n"))
	if out := c.run("configure replace flash:empty.cfg force", xePrompt); !strings.Contains(out, "%The input file is not a valid config file.") {
		t.Errorf("empty file: %q", out)
	}
	if out := c.run("configure replace flash:nothere.cfg force", xePrompt); !strings.Contains(out, "%Error opening flash:nothere.cfg (No such file or directory)") {
		t.Errorf("missing file: %q", out)
	}
}

func showText(t *testing.T, d *Device) string {
	t.Helper()
	text, ok := d.Show("show running-config")
	if !ok {
		t.Fatal("no show running-config")
	}
	return text
}

// No configure confirm: the timer puts the old configuration back.
func TestXEConfirmTimerRollsBack(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_xe", Minute: 400 * time.Millisecond})
	before := d.RunningConfig()
	target := xeTarget(t, d)
	d.PutFile("flash:restore.cfg", []byte(target))
	c := xeCLI(t, d)
	c.run("configure replace flash:restore.cfg force time 1", "Rollback Done")
	if d.RunningConfig() != target {
		t.Fatal("replace did not apply")
	}
	waitFor(t, "rollback", wait, func() bool { return d.Rollbacks() == 1 })
	if d.RunningConfig() != before {
		t.Error("timer did not restore the configuration")
	}
	if got := kinds(d.Commits()); len(got) != 3 || got[2] != CommitRollback {
		t.Errorf("history: %v", got)
	}
	shown := sshExec(t, d, "show running-config")
	if !strings.Contains(shown, crlf(before)) || strings.Contains(shown, "chassis-id") {
		t.Error("backup after the rollback is not the old configuration")
	}
}

// The session drops right after configure replace: the timer still rolls
// back.
func TestXESessionLostBeforeConfirm(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_xe", Minute: 150 * time.Millisecond, DisconnectAfter: regexp.MustCompile(`^configure replace`)})
	before := d.RunningConfig()
	d.PutFile("flash:restore.cfg", []byte(xeTarget(t, d)))
	c := xeCLI(t, d)
	send(t, c.w, "configure replace flash:restore.cfg force time 2\n")
	c.e.must(t, "Rollback Done")
	if _, err := c.e.waitEnd(wait); err != nil {
		t.Fatalf("session not dropped: %v", err)
	}
	waitFor(t, "rollback", wait, func() bool { return d.Rollbacks() == 1 })
	if d.RunningConfig() != before {
		t.Error("timer did not restore the configuration")
	}
}

// configure confirm within the time keeps the change.
func TestXEConfirmInTime(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_xe", Minute: 100 * time.Millisecond})
	target := xeTarget(t, d)
	d.PutFile("flash:restore.cfg", []byte(target))
	c := xeCLI(t, d)
	c.run("configure replace flash:restore.cfg force time 5", xePrompt)
	c.run("configure revert timer 6", xePrompt)
	deadline, pending := d.ConfirmPending()
	if !pending {
		t.Fatal("no confirm pending")
	}
	c.run("configure confirm", xePrompt)
	time.Sleep(time.Until(deadline.Add(200 * time.Millisecond)))
	if d.Rollbacks() != 0 || d.RunningConfig() != target {
		t.Error("a confirmed replace rolled back")
	}
	if out := c.run("configure revert now", xePrompt); !strings.Contains(out, "%No Rollback Confirmed Change pending") {
		t.Errorf("revert without a pending change: %q", out)
	}
}

// Without the archive, timed and reverting replaces are refused; a plain
// replace still works.
func TestXENoArchive(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_xe", NoArchive: true})
	before := d.RunningConfig()
	target := xeTarget(t, d)
	d.PutFile("flash:restore.cfg", []byte(target))
	c := xeCLI(t, d)
	if out := c.run("configure replace flash:restore.cfg force time 5", xePrompt); !strings.Contains(out, "%Turn config archive on before using Rollback Confirmed Change") {
		t.Errorf("time without archive: %q", out)
	}
	if out := c.run("configure replace flash:restore.cfg force revert trigger error", xePrompt); !strings.Contains(out, "%Please turn config archive on") {
		t.Errorf("revert without archive: %q", out)
	}
	if out := c.run("show archive", xePrompt); !strings.Contains(out, "Archive feature not enabled") {
		t.Errorf("show archive: %q", out)
	}
	if d.RunningConfig() != before {
		t.Fatal("a refused replace changed the configuration")
	}
	c.run("configure replace flash:restore.cfg force", "Rollback Done")
	if d.RunningConfig() != target {
		t.Error("plain replace without archive did not apply")
	}
}

// The syntax order rules of configure replace, and answers other than Y.
func TestXEReplaceSyntax(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_xe"})
	before := d.RunningConfig()
	d.PutFile("flash:restore.cfg", []byte(xeTarget(t, d)))
	c := xeCLI(t, d)
	for _, tc := range []struct{ cmd, bad string }{
		{"configure replace flash:restore.cfg force list", "list"},
		{"configure replace flash:restore.cfg time 5 force", "force"},
		{"configure replace flash:restore.cfg time 500", "500"},
	} {
		out := c.run(tc.cmd, xePrompt)
		caret := strings.Repeat(" ", len(xePrompt)+strings.LastIndex(tc.cmd, tc.bad)) + "^"
		if !strings.Contains(out, "\r\n"+caret+"\r\n% Invalid input detected at '^' marker.") {
			t.Errorf("%s: %q", tc.cmd, out)
		}
	}
	if out := c.run("configure replace", xePrompt); !strings.Contains(out, "% Incomplete command.") {
		t.Errorf("no URL: %q", out)
	}
	c.run("configure replace flash:restore.cfg", "? [no]: ")
	c.run("n", xePrompt)
	if d.RunningConfig() != before {
		t.Error("answering no applied the file")
	}
}

// dir, verify /md5, copy and delete work on the stored files.
func TestXEFiles(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_xe", RejectLines: regexp.MustCompile(`^bogus`)})
	data := []byte("ntp server 192.0.2.55\ninterface Loopback0\n description merged\nbogus command\n")
	d.PutFile("flash:/merge.cfg", data)
	c := xeCLI(t, d)
	if out := c.run("dir flash:", xePrompt); !strings.Contains(out, "Directory of flash:/\r\n") || !strings.Contains(out, " merge.cfg\r\n") || !strings.Contains(out, "bytes free)") {
		t.Errorf("dir: %q", out)
	}
	sum := md5.Sum(data)
	if out := c.run("verify /md5 flash:/merge.cfg", xePrompt); !strings.Contains(out, "verify /md5 (flash:/merge.cfg) = "+hex.EncodeToString(sum[:])) {
		t.Errorf("verify: %q", out)
	}
	if out := c.run("dir flash:/gone.cfg", xePrompt); !strings.Contains(out, "%Error opening flash:/gone.cfg (No such file or directory)") {
		t.Errorf("dir of a missing file: %q", out)
	}
	c.run("copy flash:merge.cfg running-config", "Destination filename [running-config]? ")
	if out := c.run("", xePrompt); !strings.Contains(out, "% Invalid input detected") || !strings.Contains(out, "bytes copied in") {
		t.Errorf("copy to running-config: %q", out)
	}
	r := d.RunningConfig()
	if !strings.Contains(r, "ntp server 192.0.2.55\n") || !strings.Contains(r, "interface Loopback0\n ip address") || !strings.Contains(r, " description merged\n") || strings.Contains(r, "bogus") || !strings.HasSuffix(r, "\nend\n") {
		t.Errorf("merge result wrong:\n%s", tail(r))
	}
	c.run("copy running-config flash:saved.cfg", "Destination filename [saved.cfg]? ")
	c.run("", xePrompt)
	if saved, ok := d.File("flash:saved.cfg"); !ok || !strings.Contains(string(saved), "ntp server 192.0.2.55") {
		t.Error("copy running-config to flash did not save it")
	}
	c.run("delete flash:saved.cfg", "Delete filename [saved.cfg]? ")
	c.run("", "[confirm]")
	c.run("", xePrompt)
	if _, ok := d.File("flash:saved.cfg"); ok {
		t.Error("delete kept the file")
	}
	c.run("delete /force flash:merge.cfg", xePrompt)
	c.run("configure terminal", "CSR1(config)#")
	if out := c.run("bogus command", "CSR1(config)#"); !strings.Contains(out, "% Invalid input detected at '^' marker.") {
		t.Errorf("refused line in configuration mode: %q", out)
	}
	c.run("end", xePrompt)
	if len(d.Files()) != 0 {
		t.Errorf("files left: %v", d.Files())
	}
}
