package devsim

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

const rosPrompt = "[admin@MikroTik] > "

// An import adds under the menus, a set replaces the item's; the next
// import stops at its first failing line and keeps what ran before it.
func TestRouterOSImport(t *testing.T) {
	d := startDevice(t, Options{Platform: "mikrotik_routeros", ConfigSize: MinConfigSize})
	before := d.RunningConfig()
	c := openCLI(t, d, rosPrompt)
	d.PutFile("add.rsc", []byte("# a comment\n/ip address\nadd address=198.51.100.1/24 interface=ether2 \\\n    network=198.51.100.0\n/system identity\nset name=renamed\n"))
	out := c.run("/import file-name=add.rsc", rosPrompt)
	if !strings.Contains(out, "Opening script file add.rsc\r\n\r\nScript file loaded and executed successfully") {
		t.Errorf("import: %q", out)
	}
	got := d.RunningConfig()
	want := strings.Replace(before, "/ip firewall filter\n", "add address=198.51.100.1/24 interface=ether2 \\\n    network=198.51.100.0\n/ip firewall filter\n", 1)
	want = strings.Replace(want, "set name=MikroTik\n", "set name=renamed\n", 1)
	if got != want || want == before || lastCommit(d).Kind != CommitImport {
		t.Fatalf("after the import (%s):\n%s", lastCommit(d).Kind, got)
	}
	d.PutFile("again.rsc", []byte("/system identity\nset name=again\n/ip address\nadd address=198.51.100.1/24 interface=ether2 network=198.51.100.0\nadd address=203.0.113.1/24 interface=ether3 network=203.0.113.0\n"))
	out = c.run("import again.rsc", rosPrompt)
	if !strings.Contains(out, "Script Error: failure: already have such entry (/ip/address/add; line 4)") {
		t.Errorf("failing import: %q", out)
	}
	got = d.RunningConfig()
	if !strings.Contains(got, "set name=again\n") || strings.Contains(got, "203.0.113.1") {
		t.Errorf("the failing import did not stop at its failing line:\n%s", got)
	}
	if out := c.run("/import file-name=missing.rsc", rosPrompt); !strings.Contains(out, "Cannot open import file, file does not exist") {
		t.Errorf("missing file: %q", out)
	}
	if out := c.run("/import file-name=add.rsc dry-run", rosPrompt); !strings.Contains(out, "expected end of command (line 1 column 27)") {
		t.Errorf("dry-run without verbose: %q", out)
	}
}

// A line the router does not take is a syntax error: a dry run says so,
// an import without verbose runs nothing, one with verbose the lines
// before it.
func TestRouterOSSyntaxError(t *testing.T) {
	d := startDevice(t, Options{Platform: "mikrotik_routeros", ConfigSize: MinConfigSize, RejectLines: regexp.MustCompile(`^set name=bad$`)})
	before := d.RunningConfig()
	commits := len(d.Commits())
	c := openCLI(t, d, rosPrompt)
	d.PutFile("bad.rsc", []byte("/system identity\nset name=good\n/system identity\nset name=bad\n"))
	for _, cmd := range []string{"/import file-name=bad.rsc verbose=yes dry-run", "/import bad.rsc"} {
		if out := c.run(cmd, rosPrompt); !strings.Contains(out, "Script Error: syntax error (line 4 column 1)") {
			t.Errorf("%s: %q", cmd, out)
		}
		if d.RunningConfig() != before || len(d.Commits()) != commits {
			t.Fatalf("%s changed the configuration", cmd)
		}
	}
	if out := c.run("/import bad.rsc verbose=yes", rosPrompt); !strings.Contains(out, "Script Error: syntax error (line 4 column 1)") {
		t.Errorf("verbose import: %q", out)
	}
	if !strings.Contains(d.RunningConfig(), "set name=good\n") {
		t.Error("a verbose import did not run the lines before the error")
	}
	d.PutFile("good.rsc", []byte("/system identity\nset name=fine\n"))
	if out := c.run("/import file-name=good.rsc verbose=yes dry-run", rosPrompt); !strings.Contains(out, "Script file loaded and executed successfully") {
		t.Errorf("clean dry run: %q", out)
	}
	if strings.Contains(d.RunningConfig(), "fine") {
		t.Error("a dry run changed the configuration")
	}
}

// reset-configuration with run-after-reset reboots the router, which
// comes back after its boot time running exactly the script.
func TestRouterOSResetRunsScript(t *testing.T) {
	d := startDevice(t, Options{Platform: "mikrotik_routeros", ConfigSize: MinConfigSize, BootTime: 400 * time.Millisecond,
		DropLines: regexp.MustCompile(`^add address=192\.0\.2\.123$`)})
	before := d.RunningConfig()
	target := strings.Replace(before, "set name=MikroTik\n", "set name=restored\n", 1)
	d.PutFile("target.rsc", []byte("# 2024-10-25 06:08:35 by RouterOS 7.10.1\n#\n"+target))
	c := openCLI(t, d, rosPrompt)
	other := openCLI(t, d, rosPrompt)
	out := c.run("/system reset-configuration no-defaults=yes skip-backup=yes keep-users=yes run-after-reset=target.rsc", "[y/N]: ")
	if !strings.Contains(out, "Dangerous! Reset anyway? [y/N]: ") {
		t.Fatalf("question: %q", out)
	}
	send(t, c.w, "y\n")
	for _, x := range []*cli{c, other} {
		if _, err := x.e.waitEnd(wait); err != nil {
			t.Fatalf("a login survived the reboot: %v", err)
		}
	}
	if _, err := ssh.Dial("tcp", d.SSHAddr(), clientConfig(d, "admin", "admin")); err == nil {
		t.Error("the router answered while booting")
	}
	// The menu left empty is not exported.
	want := strings.Replace(target, "/system ntp client servers\nadd address=192.0.2.123\n", "", 1)
	if want == target {
		t.Fatal("nothing to drop")
	}
	if got := d.RunningConfig(); got != want || lastCommit(d).Kind != CommitReset {
		t.Fatalf("after the reset (%s):\n%s", lastCommit(d).Kind, got)
	}
	var shown string
	waitFor(t, "the router back", wait, func() bool {
		client, err := ssh.Dial("tcp", d.SSHAddr(), clientConfig(d, "admin", "admin"))
		if err != nil {
			return false
		}
		client.Close()
		shown = sshExec(t, d, "/export show-sensitive")
		return true
	})
	if !strings.HasSuffix(shown, want) || !strings.HasPrefix(shown, "# ") {
		t.Errorf("export after the reset:\n%s", shown)
	}
}

// Without keep-users=yes only admin without a password is left; "n"
// keeps everything.
func TestRouterOSResetUsers(t *testing.T) {
	d := startDevice(t, Options{Platform: "mikrotik_routeros", ConfigSize: MinConfigSize, Username: "netops", Password: "secret-pw"})
	before := d.RunningConfig()
	prompt := "[netops@MikroTik] > "
	c := openCLI(t, d, prompt)
	c.run("/system/reset-configuration no-defaults=yes", "[y/N]: ")
	c.run("n", prompt)
	if d.RunningConfig() != before {
		t.Fatal("a refused reset changed the configuration")
	}
	if out := c.run("/system reset-configuration bogus=yes", prompt); !strings.Contains(out, "expected end of command") {
		t.Errorf("unknown argument: %q", out)
	}
	c.run("/system reset-configuration no-defaults=yes skip-backup=yes", "[y/N]: ")
	send(t, c.w, "y\n")
	if _, err := c.e.waitEnd(wait); err != nil {
		t.Fatal(err)
	}
	if d.RunningConfig() != "" {
		t.Errorf("a reset without a script left:\n%s", d.RunningConfig())
	}
	if _, err := ssh.Dial("tcp", d.SSHAddr(), clientConfig(d, "netops", "secret-pw")); err == nil {
		t.Error("the account survived a reset without keep-users=yes")
	}
	client, err := ssh.Dial("tcp", d.SSHAddr(), clientConfig(d, "admin", ""))
	if err != nil {
		t.Fatalf("no default account after the reset: %v", err)
	}
	client.Close()
}

// The folder probe a restore makes, and removing a file.
func TestRouterOSFiles(t *testing.T) {
	d := startDevice(t, Options{Platform: "mikrotik_routeros", ConfigSize: MinConfigSize})
	c := openCLI(t, d, rosPrompt)
	probe := `:put [:len [/file find name="flash"]]`
	if out := c.run(probe, rosPrompt); !strings.Contains(out, "\r\n0\r\n") {
		t.Errorf("probe without flash: %q", out)
	}
	d.PutFile("flash/x.rsc", []byte("/system identity\nset name=x\n"))
	if out := c.run(probe, rosPrompt); !strings.Contains(out, "\r\n1\r\n") {
		t.Errorf("probe with flash: %q", out)
	}
	if out := c.run("/file remove flash/x.rsc", rosPrompt); strings.Contains(out, "no such item") {
		t.Errorf("remove: %q", out)
	}
	if _, ok := d.File("flash/x.rsc"); ok {
		t.Error("the file is still there")
	}
	if out := c.run(`/file/remove "flash/x.rsc"`, rosPrompt); !strings.Contains(out, "no such item") {
		t.Errorf("second remove: %q", out)
	}
}
