package devsim

import (
	"testing"
	"time"

	"backupd/app/syslog"
)

// Every platform's change message is recognised by the syslog
// listener's built-in patterns and names the device in its header.
func TestChangeLogsAreRecognised(t *testing.T) {
	m, err := syslog.NewMatcher(nil)
	if err != nil {
		t.Fatal(err)
	}
	for platform := range changeLogs {
		t.Run(platform, func(t *testing.T) {
			d, err := NewDevice(Options{Platform: platform, Hostname: "lab-" + platform, Username: "netops", Password: "x"})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			text, ok := d.ChangeLog(time.Now())
			if !ok {
				t.Fatal("no change message")
			}
			msg := syslog.Parse([]byte(text))
			if msg.Hostname != "lab-"+platform {
				t.Errorf("hostname %q in %q", msg.Hostname, text)
			}
			if name, ok := m.Match(&msg); !ok {
				t.Errorf("no built-in pattern matches %q", text)
			} else {
				t.Logf("%s: %s", name, text)
			}
		})
	}
	d, err := NewDevice(Options{Platform: "vyos", Password: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, ok := d.ChangeLog(time.Now()); ok {
		t.Error("vyos logs no change the listener knows, yet has a change message")
	}
}
