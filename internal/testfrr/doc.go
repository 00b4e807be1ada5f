// Package testfrr runs real FRRouting routers for one test each: FRR's
// bgpd with its configuration loaded, behind a real OpenSSH server on
// 127.0.0.1 whose every session is that router's vtysh. Backup, restore
// and push tests log in to it as backupd logs in to a router, so what
// they prove holds for FRR as FRR behaves, not as a simulator imagines
// it. Several routers run side by side (five in TestFiveRouters). Only
// tests import it.
//
//	r := testfrr.Start(t, testfrr.Options{Hostname: "r1"})
//	// SSH: r.Addr, r.User, r.PrivateKey, pin r.HostKey
//	r.Vtysh(t, "configure terminal", "router bgp 65001", "neighbor 192.0.2.9 remote-as 65009")
//	running := r.RunningConfig(t)
//
// It needs Debian 12's frr (8.4.4) and openssh-server packages and root;
// without them the test is skipped, and under CI=true it fails (.ci/run
// installs both and runs as root).
//
// # The processes of one router
//
// Everything lives in its own directory, Router.Dir (/tmp/testfrr-N, short
// because a unix socket path must stay under 108 bytes):
//
//	etc/frr.conf       the configuration (Options.Config), integrated form
//	etc/vtysh.conf     service integrated-vtysh-config, hostname
//	etc/bgpd.conf      "hostname NAME", read by bgpd itself at start
//	run/bgpd.vty       bgpd's vty socket; run/bgpd.pid
//	bgpd.log           bgpd's log
//	sshd_config, ssh_host_ed25519_key, authorized_keys, sshd.pid
//	vtysh.history      vtysh's readline history (kept out of /root)
//
// bgpd runs in the foreground, a child of the test binary:
//
//	/usr/lib/frr/bgpd -Z -S -p 0 -P 0 -f DIR/etc/bgpd.conf -i DIR/run/bgpd.pid
//	    --vty_socket DIR/run --log file:DIR/bgpd.log
//
// -Z: no zebra (nothing installs routes; bgpd then shows "bgp no-rib" in
// its configuration). -S: skip the switch to user frr and the capability
// checks, so root-owned temporary files stay readable (the frr user and
// the frr and frrvty groups, which the package creates, are not needed).
// -p 0: no BGP listener, so five bgpd do not fight over port 179. -P 0:
// no TCP vty (port 2605). -i and --vty_socket: with both given libfrr
// leaves /var/run/frr alone. bgpd still makes /var/tmp/frr/bgpd.PID for
// a crash log (lib/zlog.c) and removes it when it ends; Stop removes it
// after a SIGKILL too. bgpd also gets a network namespace of its own
// (CLONE_NEWNET), holding only a loopback that is down: its neighbours'
// addresses are unreachable there, so no BGP packet leaves the machine,
// while its vty socket, a path in the file system, stays reachable.
//
// Only bgpd runs. zebra would install routes into the kernel and learn
// its interfaces, which five instances would share unless each had its
// namespace with zebra, staticd and bgpd joined in it (-z for a zserv
// socket of their own); that is not done. So a configuration may hold
// what bgpd and FRR's library parse (router bgp, prefix-lists, as-path
// and community lists, route-maps…), while "ip route …" answers
// "staticd is not running".
//
// The configuration is loaded as FRR's own start does, vtysh -b:
//
//	vtysh --vty_socket DIR/run --config_dir DIR/etc -H DIR/vtysh.history -b
//
// and Start checks, through vtysh, that show running-config has the
// hostname and each "router bgp" of it.
//
// The hostname: FRR's "hostname" command is vtysh's own (lib/command.c is
// not scanned into vtysh's command table for the daemons), so a hostname
// line in frr.conf changes nothing in bgpd, which keeps the machine's name
// and reports "hostname <machine>" in show running-config next to
// vtysh's own hostname. Hence the hostname is given twice: to bgpd in its
// start file (-f etc/bgpd.conf, "hostname NAME") and to vtysh in
// vtysh.conf (the prompt "NAME# " comes from there); the two lines are
// the same and show running-config shows one. "hostname other" typed in
// a session changes that session's prompt only.
//
// sshd is Debian's OpenSSH 9.2p1, in the foreground, logging to a buffer:
//
//	/usr/sbin/sshd -D -e -f DIR/sshd_config
//
// with ListenAddress 127.0.0.1 on a free port (taken again if another
// process bound it first, at most three times), an ed25519 host key and an
// ed25519 client key made for the router, AuthenticationMethods publickey,
// PermitRootLogin prohibit-password, AllowUsers root, UsePAM no,
// StrictModes no, PrintMotd and PrintLastLog no (so nothing precedes
// vtysh's banner), no forwarding, no sftp subsystem, and
//
//	ForceCommand exec /usr/bin/vtysh --vty_socket DIR/run --config_dir DIR/etc -H DIR/vtysh.history
//
// so an SSH shell, and an exec request too, is that router's vtysh. sshd
// runs it with root's login shell (-c), which for bash also reads
// ~/.bashrc; Debian's prints nothing there. /run/sshd (privilege
// separation) is made if missing. sshd without PAM refuses an account
// whose password field in /etc/shadow starts with "!" ("account is
// locked"), even for a key: root must have "*" or a password there
// (this machine's root has "*"); Start says so when it happens. Start
// returns once a login with the router's key, the host key pinned,
// succeeds: the proof that this sshd, not another program on the port,
// answers.
//
// Every process is started with Pdeathsig SIGKILL, so a test binary that
// dies does not leave routers running (Go ends an OS thread only when a
// goroutine locked to it exits, which Start's callers do not do). Stop,
// run at the test's end, ends the SSH sessions deepest first (vtysh, then
// the sshd of the connection, each reaped by its parent), then sshd,
// then bgpd: SIGTERM, at most 5 s, then SIGKILL, and it reports any
// process still naming the router's directory. (sshd itself, when a
// client disconnects, leaves the session's vtysh to be reaped by init: a
// short-lived zombie, not a running process.)
//
// Timings on a shared 2-core machine: a router starts in about 0.2 s
// (bgpd listens in ~35 ms; vtysh -b and the check through vtysh take
// ~75-110 ms; sshd lets the key in after ~65-100 ms); five start one
// after the other in about 1 s; Stop takes ~50 ms. BenchmarkStart (one
// start and stop: ~0.22 s) and BenchmarkStartFive (~1.05 s) measure them.
//
// # vtysh over SSH, as observed
//
// frr_8.4.4_vtysh_ssh.yaml, among the driver's recordings of real devices
// in app/collect/driver/testdata/recordings (and in their format), is a
// session captured from the real thing (TestSessionOverSSH rewrites it
// with -update). With a PTY (vt100, xterm or dumb,
// any size) the dialogue is:
//
//   - Banner, then the prompt, in the enable node (vtysh runs as root and
//     goes to enable at once): "\r\nHello, this is FRRouting (version
//     8.4.4).\r\nCopyright 1996-2005 Kunihiro Ishiguro, et al.\r\n\r\nr1# ".
//   - Prompts: "r1# ", "r1(config)# ", "r1(config-router)# ",
//     "r1(config-router-af)# " (address-family), "r1(config-route-map)# ",
//     "r1(config-if)# "; the prompt starts a line and nothing follows it
//     until the next line arrives. A command of a parent
//     node typed in a child node runs there and leaves the child ("ip route"
//     in config-if answers from config).
//   - Echo: each line comes back as typed, then "\r\n". Lines end in
//     "\r\n" throughout.
//   - Errors, each on its own line before the prompt again:
//     "% Unknown command: foo bar", "% Command incomplete: sh",
//     "% Ambiguous command: show b", daemon errors such as "% Specify
//     remote-as or peer-group commands first", and some without "%":
//     "BGP is already running; AS is 65001" (router bgp with another AS),
//     "staticd is not running" (a command for a daemon that is absent).
//     Abbreviations are accepted where unique ("co" is configure).
//   - Paging: none by default. "terminal length 0" is accepted silently.
//     "terminal length N" (N > 0) prints "% The "terminal length" command
//     is deprecated and its value is ignored." and "% Please use "terminal
//     paginate" instead with OS TTY length handling." and turns the pager
//     ON (Debian builds vtysh with /usr/bin/pager, that is less): output
//     then goes through less, with its screen-control escapes and "(END)"
//     waits. "terminal paginate" does the same. Never send either.
//   - Escape codes: none seen, with vt100, xterm or dumb (no bracketed
//     paste from this readline). A line longer than the PTY is wide
//     (80 columns) echoes with a "\r" where it wraps; 511 columns avoid it.
//   - show running-config: "Building configuration...\r\n\r\nCurrent
//     configuration:\r\n!\r\nfrr version 8.4.4\r\nfrr defaults
//     traditional\r\nhostname r1\r\n…\r\nend\r\n"; blocks end with "exit"
//     (route-map, router bgp), address families with
//     "exit-address-family", and "!" separates them. "no-header" drops the
//     first four lines. FRR orders the output itself (router bgp before
//     prefix-lists; match lines sorted), whatever order they were typed in.
//   - write memory: "Note: this version of vtysh never writes
//     vtysh.conf\r\n\r\nWarning: attempting direct configuration write
//     without watchfrr.\r\nFile permissions and ownership may be incorrect,
//     or write may fail.\r\n\r\nBuilding Configuration...\r\nIntegrated
//     configuration saved to DIR/etc/frr.conf\r\n[OK]\r\n".
//   - "exit" in the enable node ends vtysh and the session (exit status
//     0); "end" goes back to enable from any config node.
//
// Without a PTY (an exec request, whatever its command: ForceCommand
// replaces it) vtysh prints the same banner and prompt with "\n" line
// ends, reads commands from stdin, prints each after the prompt as its
// echo, and ends at EOF: "exec show running-config" alone gets only the
// banner and "r1# ".
//
// Vtysh runs vtysh -c … on this machine: the commands run in order in one
// vtysh (in the enable node), output without "\r", and the first refused
// command makes vtysh exit with status 1 (Vtysh then fails the test).
package testfrr
