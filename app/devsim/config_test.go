package devsim

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"backupd/app/collect/driver"
)

// Every collector platform has a personality whose configuration commands
// include the driver's defaults, so the collector can back up every
// simulated device with its default template.
func TestPersonalitiesCoverDriverPlatforms(t *testing.T) {
	for _, id := range driver.IDs() {
		p, ok := Lookup(id)
		if !ok {
			t.Errorf("no personality for platform %s", id)
			continue
		}
		for _, cmd := range strings.Split(driver.DefaultCommands(id), "\n") {
			if _, ok := findCommand(&p, cmd, p.ConfigCommands); !ok {
				t.Errorf("%s: default command %q is not a configuration command of the personality", id, cmd)
			}
		}
		if p.UserPrompt == "" || p.InvalidInput == "" {
			t.Errorf("%s: prompt or error text missing", id)
		}
	}
	for _, id := range Platforms() {
		if _, ok := driver.Lookup(id); !ok {
			t.Errorf("personality %s is not a collector platform", id)
		}
	}
}

// perShowVolatile are the platforms whose configuration output carries a
// line that changes at every show (a timestamp, a re-encrypted secret).
var perShowVolatile = map[string]bool{
	"cisco_ios": true, "cisco_xe": true, "cisco_nxos": true, "cisco_asa": true,
	"dell_os10": true, "fortinet": true, "mikrotik_routeros": true,
}

func showAll(t *testing.T, d *Device) string {
	t.Helper()
	var b strings.Builder
	for _, cmd := range d.Personality().ConfigCommands {
		text, ok := d.Show(cmd)
		if !ok {
			t.Fatalf("%s: Show(%q) not answered", d.Platform(), cmd)
		}
		b.WriteString(text)
		if d.Platform() != "linux" {
			break
		}
	}
	return b.String()
}

func lineSet(s string) map[string]int {
	m := map[string]int{}
	for _, l := range strings.Split(s, "\n") {
		m[l]++
	}
	return m
}

// linesOnlyIn counts lines of a missing from b.
func linesOnlyIn(a, b string) int {
	bs := lineSet(b)
	n := 0
	for _, l := range strings.Split(a, "\n") {
		if bs[l] > 0 {
			bs[l]--
		} else {
			n++
		}
	}
	return n
}

func TestGeneratedConfigurations(t *testing.T) {
	for _, platform := range Platforms() {
		t.Run(platform, func(t *testing.T) {
			for _, size := range []int{MinConfigSize, 60 << 10} {
				opts := Options{Platform: platform, ConfigSize: size, Seed: 7, Hostname: "dev-" + platform}
				d := startDevice(t, opts)
				first := showAll(t, d)
				if got := len(first); got < size*85/100 || got > size*115/100 {
					t.Errorf("size %d: got %d bytes", size, got)
				}
				if !utf8.ValidString(first) {
					t.Error("configuration is not valid UTF-8")
				}
				if !strings.Contains(first, "dev-"+platform) {
					t.Error("configuration lacks the hostname")
				}

				// Same identity, same content: only volatile lines differ.
				twin := startDevice(t, opts)
				twinText := showAll(t, twin)
				second := showAll(t, d)
				if volatile := linesOnlyIn(second, first); perShowVolatile[platform] && volatile == 0 {
					t.Error("two shows are identical; the platform prints volatile lines")
				} else if !perShowVolatile[platform] && volatile != 0 {
					t.Errorf("two shows differ in %d lines; the platform prints none that change per show", volatile)
				} else if volatile > 3 {
					t.Errorf("%d volatile lines per show; want a few", volatile)
				}
				if n := linesOnlyIn(twinText, second); n > 3 {
					t.Errorf("same seed differs in %d lines", n)
				}
				last, ok := d.LastOutput(d.Personality().ConfigCommands[0])
				if !ok || (platform != "linux" && last != second) {
					t.Error("LastOutput is not the last shown text")
				}

				other := startDevice(t, Options{Platform: platform, ConfigSize: size, Seed: 8, Hostname: "dev-" + platform})
				if n := linesOnlyIn(showAll(t, other), second); n < 10 {
					t.Errorf("another seed changes only %d lines", n)
				}

				// A mutation changes a few lines for good.
				d.Mutate(42)
				mutated := showAll(t, d)
				changed := linesOnlyIn(mutated, second)
				if changed < 2 || changed > 15 {
					t.Errorf("Mutate changed %d lines; want a few", changed)
				}
				again := showAll(t, d)
				if n := linesOnlyIn(again, mutated); n > 3 {
					t.Errorf("mutation did not stick: %d lines differ on the next show", n)
				}
			}
		})
	}
}

func TestConfigSizeBounds(t *testing.T) {
	for _, size := range []int{MinConfigSize - 1, MaxConfigSize + 1, -5} {
		if _, err := NewDevice(Options{Platform: "cisco_ios", ConfigSize: size}); err == nil {
			t.Errorf("size %d accepted", size)
		}
	}
	d := startDevice(t, Options{Platform: "huawei_vrp", ConfigSize: MaxConfigSize})
	text := showAll(t, d)
	if len(text) < MaxConfigSize*9/10 || len(text) > MaxConfigSize*11/10 {
		t.Errorf("max size: got %d bytes", len(text))
	}
}

func TestRefusesNonLoopbackListen(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "[::]:0", "example.com:0", "10.0.0.1:22", "nonsense"} {
		for _, opts := range []Options{
			{Platform: "cisco_ios", SSHAddr: addr},
			{Platform: "cisco_ios", TelnetAddr: addr},
			{Platform: "cisco_ios", SSHAddr: "127.0.0.1:0", TelnetAddr: addr},
		} {
			d, err := NewDevice(opts)
			if err == nil {
				d.Close()
				t.Errorf("listen on %q accepted", addr)
				continue
			}
			if addr != "nonsense" && !errors.Is(err, ErrNotLoopback) {
				t.Errorf("%q: error %v is not ErrNotLoopback", addr, err)
			}
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "127.0.0.2:0"} {
		d := startDevice(t, Options{Platform: "cisco_ios", SSHAddr: addr})
		if !strings.HasPrefix(d.SSHAddr(), "127.") {
			t.Errorf("%q: listening on %s", addr, d.SSHAddr())
		}
	}
}

func TestUnknownOptionsRejected(t *testing.T) {
	for name, opts := range map[string]Options{
		"platform": {Platform: "cisco_catos"},
		"failure":  {Platform: "cisco_ios", Failures: []Failure{"sometimes"}},
		"encoding": {Platform: "cisco_ios", Encoding: "ebcdic"},
	} {
		if d, err := NewDevice(opts); err == nil {
			d.Close()
			t.Errorf("%s: accepted", name)
		}
	}
}
