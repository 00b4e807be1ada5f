// Package frrplan works out what to type at an FRRouting router's vtysh
// to turn its running configuration into a stored one, the way FRR's
// own frr-reload.py does, but from the two texts alone: frr-reload
// needs a shell on the router, Python and root, while backupd only has
// vtysh over SSH. It is pure: no I/O, no clock, the same answer for the
// same texts.
//
// A configuration is read as a tree by its indentation, which is how
// show running-config writes it (one space per level, "exit" closing a
// context in FRR 8), so that commands this package has never heard of
// still land in the right context. Plan compares the trees context by
// context: a line only the device has is removed by its "no" form, a
// line only the target has is typed, a context only the device has
// goes whole. Some changes in FRR take other lines with them (deleting
// a neighbour's remote-as deletes the neighbour), and FRR prints some
// settings differently once another changed ("bgp default
// ipv4-unicast" decides which "activate" lines show); Converge applies,
// reads back and plans again until the device is Equal to the target,
// in a bounded number of passes.
//
// What FRR 8.4.4 does, as the tests against real FRR (internal/testfrr)
// show:
//
//   - Lines in a context may come back in another order: neighbours
//     print in the order they were made. Equal ignores order.
//   - "neighbor X remote-as N" typed over another remote-as changes it
//     in place; "no neighbor X remote-as N" deletes X and everything of
//     it, in every address family, as does "no neighbor X peer-group
//     PG" even when X has a remote-as of its own, so moving a neighbour
//     between peer-groups takes two passes.
//   - A "no" line FRR shows ("no bgp default ipv4-unicast", "no
//     neighbor X activate") is undone by typing it without "no".
//   - Some "no" forms refuse their arguments: "no password", "no enable
//     password", "no exec-timeout", "no description", "no on-match
//     goto", "no set as-path prepend" (for several ASes) stand for the
//     whole line. Each line of a configuration rich in BGP policy is
//     removed and put back in TestEveryLineRemovedRealFRR.
//   - "bgp default ipv4-unicast" decides which "activate" lines show:
//     FRR prints the ones that differ from it.
//   - "no line vty" does not exist; "no address-family" neither.
//   - hostname typed in vtysh changes that session's prompt and nothing
//     else: the daemons keep theirs (the machine's, or their start
//     file's), and vtysh.conf is never written. Plan leaves it alone.
//   - The last entry deleted from a prefix-list (or a community or
//     as-path list) deletes the list.
//   - At an interactive vtysh, "?" asks for help and is dropped from
//     the line (Keystrokes).
//   - "no router bgp N" deletes the default instance even with a "router
//     bgp M vrf V" beside it, unless that VRF instance leaks routes
//     through it (import/export vpn or vrf, EVPN advertisement, an L3
//     VNI; bgpd/bgp_vty.c): then FRR refuses, and a target that drops
//     the default instance but keeps such a VRF one cannot be reached.
package frrplan
