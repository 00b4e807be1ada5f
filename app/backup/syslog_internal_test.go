package backup

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"testing"

	"backupd/db"
	"backupd/internal/testkit"
)

func senderFixture(t testing.TB, devices ...db.Device) (*senderIndex, []int64) {
	t.Helper()
	store, _, _ := testkit.OpenData(t)
	var ids []int64
	for _, d := range devices {
		d.Port, d.Platform, d.LoginMethod, d.Encoding, d.Enabled = 22, "cisco_ios", "ssh", "utf-8", true
		created, err := store.CreateDevice(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, created.ID)
	}
	return newSenderIndex(store, slog.New(slog.NewTextHandler(io.Discard, nil))), ids
}

// The sender's address names the device when exactly one device has it;
// otherwise the message's hostname does, matched against names and
// hosts without regard to case. Addresses compare in canonical form.
func TestSenderLookup(t *testing.T) {
	x, ids := senderFixture(t,
		db.Device{Name: "core-r1", Host: "192.0.2.1"},
		db.Device{Name: "lab-a", Host: "127.0.0.1"},
		db.Device{Name: "lab-b", Host: "127.0.0.1"},
		db.Device{Name: "v6-edge", Host: "2001:DB8:0:0::1"},
		db.Device{Name: "by-fqdn", Host: "Sw9.Example.NET"},
	)
	core, labA, labB, v6, fqdn := ids[0], ids[1], ids[2], ids[3], ids[4]
	for _, c := range []struct {
		addr, hostname string
		want           int64
		ok             bool
	}{
		{"192.0.2.1", "", core, true},
		{"192.0.2.1", "lab-b", core, true}, // one device at the address: the address wins
		{"::ffff:192.0.2.1", "-", core, true},
		{"127.0.0.1", "LAB-B", labB, true}, // two at the address: the hostname decides
		{"127.0.0.1", "lab-a", labA, true},
		{"127.0.0.1", "", 0, false}, // two at the address, no hostname
		{"127.0.0.1", "nobody", 0, false},
		{"2001:db8::1", "", v6, true},
		{"198.51.100.7", "sw9.example.net", fqdn, true}, // a relay: the device's host named in the header
		{"198.51.100.7", "CORE-R1", core, true},
		{"198.51.100.7", "", 0, false},
	} {
		got, ok := x.resolve(netip.MustParseAddr(c.addr), c.hostname)
		if got != c.want || ok != c.ok {
			t.Errorf("resolve(%s, %q) = %d, %v; want %d, %v", c.addr, c.hostname, got, ok, c.want, c.ok)
		}
	}
}

// BenchmarkSenderLookup resolves senders over 10,000 devices: known ones
// by address and by hostname, and unknown ones, which after the first
// miss read the devices at most once per senderMissTTL.
func BenchmarkSenderLookup(b *testing.B) {
	const n = 10000
	store, _, _ := testkit.OpenData(b)
	devices := make([]db.Device, n)
	for i := range devices {
		devices[i] = db.Device{Name: fmt.Sprintf("sw-%05d", i), Host: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255),
			Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true}
	}
	if err := store.ImportDevices(context.Background(), devices); err != nil {
		b.Fatal(err)
	}
	x := newSenderIndex(store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	addrs, names := make([]netip.Addr, n), make([]string, n)
	for i, d := range devices {
		addrs[i], names[i] = netip.MustParseAddr(d.Host), d.Name
	}
	unknown := netip.MustParseAddr("203.0.113.9")
	x.resolve(unknown, "")
	for i := 0; b.Loop(); i++ {
		var ok bool
		switch j := i % n; i % 3 {
		case 0:
			_, ok = x.resolve(addrs[j], "")
		case 1:
			_, ok = x.resolve(unknown, names[j])
		default:
			_, ok = x.resolve(unknown, "stranger")
			ok = !ok
		}
		if !ok {
			b.Fatalf("lookup %d went wrong", i)
		}
	}
}
