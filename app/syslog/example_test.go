package syslog_test

import (
	"context"
	"fmt"
	"net/netip"

	"backupd/app/syslog"
)

// How serve wires the listener: Resolve looks the sender up in an
// in-memory copy of the inventory (address first, then the hostname the
// message names), Trigger queues a backup with trigger "syslog", and
// Stats feeds the metrics.
func ExampleListen() {
	devicesByAddr := map[netip.Addr]int64{netip.MustParseAddr("192.0.2.10"): 42}
	devicesByName := map[string]int64{"core-sw1": 42}

	extra, err := syslog.CompilePattern("extreme-saved", `cfgmgr: .*saved`)
	if err != nil {
		fmt.Println(err)
		return
	}
	l, err := syslog.Listen(syslog.Config{
		Addr: "127.0.0.1:0", // serve --syslog-listen 0.0.0.0:5514
		Resolve: func(addr netip.Addr, hostname string) (int64, bool) {
			if id, ok := devicesByAddr[addr]; ok {
				return id, true
			}
			id, ok := devicesByName[hostname]
			return id, ok
		},
		Trigger: func(ctx context.Context, deviceID int64) {
			// queue a backup job for deviceID with trigger "syslog"
		},
		Patterns: []syslog.Pattern{extra},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	s := l.Stats()
	fmt.Println(s.Received, s.Matched, len(s.Dropped))
	// Output: 0 0 4
}
