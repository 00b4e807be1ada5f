package devsim

import (
	"regexp"
	"strings"
	"testing"
)

// Lines typed in IOS configuration mode change the running
// configuration at once, in their submode: a new line at the end of its
// block, a single-valued setting replacing the one there, a known line
// changing nothing; a refused line prints IOS's error and is not
// stored; write memory saves.
func TestIOSConfigurationMode(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_ios", RejectLines: regexp.MustCompile(`^bogus`)})
	before := d.RunningConfig()
	c := openCLI(t, d, "R1#")
	c.run("terminal length 0", "R1#")
	c.run("configure terminal", "R1(config)#")
	if out := c.run("interface Loopback0", ")#"); !strings.HasSuffix(out, "R1(config-if)#") {
		t.Errorf("prompt in an interface: %q", tail(out))
	}
	c.run(" description set-by-merge", "R1(config-if)#")
	c.run("hostname R1", "R1(config)#") // the same hostname: no change
	if out := c.run("bogus line", "R1(config)#"); !strings.Contains(out, "% Invalid input detected at '^' marker.") {
		t.Errorf("a refused line printed %q", out)
	}
	c.run("snmp-server location DC9", "R1(config)#")
	c.run("end", "R1#")
	run := d.RunningConfig()
	if !strings.Contains(run, "interface Loopback0\n ip address ") || !strings.Contains(run, " description set-by-merge\n!\n") {
		t.Errorf("the description is not under its interface:\n%s", run)
	}
	if strings.Contains(run, "bogus") || strings.Count(run, "snmp-server location") != 1 || !strings.Contains(run, "snmp-server location DC9\n") {
		t.Errorf("refused or single-valued lines:\n%s", run)
	}
	if d.StartupConfig() != before {
		t.Error("saved before write memory")
	}
	if out := c.run("write memory", "R1#"); !strings.Contains(out, "Building configuration...\r\n[OK]") {
		t.Errorf("write memory printed %q", out)
	}
	if d.StartupConfig() != run {
		t.Error("write memory did not save")
	}
}
