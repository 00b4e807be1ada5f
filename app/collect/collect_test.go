package collect

import (
	"bytes"
	"context"
	"errors"
	"net"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"backupd/app/collect/driver"
	"backupd/app/devsim"
)

// hangGuard is how long a test waits before declaring Collect hung. It is
// a safety net far above every timeout under test, not a timing claim:
// the job timeout in these tests is longer still, so a return before the
// guard proves that the stage timeout under test ended the collection.
const hangGuard = 30 * time.Second

// Credentials of the simulated devices; distinct from every word of the
// messages under test, so a leak is visible.
const (
	loginPassword  = "L0gin-Secr3t"
	enablePassword = "En4ble-Secr3t"
)

func startDevice(t *testing.T, opts devsim.Options) *devsim.Device {
	t.Helper()
	if opts.Password == "" {
		opts.Password = loginPassword
	}
	if opts.SSHAddr == "" && opts.TelnetAddr == "" {
		opts.SSHAddr, opts.TelnetAddr = "127.0.0.1:0", "127.0.0.1:0"
	}
	d, err := devsim.NewDevice(opts)
	if err != nil {
		t.Fatalf("NewDevice(%s): %v", opts.Platform, err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("device close: %v", err)
		}
	})
	return d
}

// target points at a device's SSH or telnet port with its credentials.
func target(t *testing.T, d *devsim.Device, method string) Target {
	t.Helper()
	addr := d.SSHAddr()
	if method == "telnet" {
		addr = d.TelnetAddr()
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return Target{
		Platform:       d.Platform(),
		Host:           host,
		Port:           p,
		Method:         method,
		Username:       d.Username(),
		Password:       d.Password(),
		EnablePassword: d.EnablePassword(),
		Timeouts:       Timeouts{Connect: 5 * time.Second, Login: 15 * time.Second, Command: 20 * time.Second, Job: time.Minute},
	}
}

type outcome struct {
	res     Result
	err     error
	elapsed time.Duration
}

// collect runs Collect and fails the test if it does not return within
// hangGuard.
func collect(t *testing.T, tg Target) (Result, error) {
	t.Helper()
	done := make(chan outcome, 1)
	go func() {
		start := time.Now()
		res, err := Collect(context.Background(), tg)
		done <- outcome{res, err, time.Since(start)}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(hangGuard):
		t.Fatalf("Collect(%s %s) did not return within %s: a stage is unbounded", tg.Platform, tg.Method, hangGuard)
		return Result{}, nil
	}
}

// shown is what the device printed for the platform's default commands
// the last time it answered them, joined the way Collect joins outputs:
// each line without its trailing spaces, each output without trailing
// blank lines and ending in one newline (see Result.Text).
func shown(t *testing.T, d *devsim.Device) string {
	t.Helper()
	var b strings.Builder
	for _, cmd := range strings.Split(driver.DefaultCommands(d.Platform()), "\n") {
		text, ok := d.LastOutput(cmd)
		if !ok {
			t.Fatalf("%s: the device never answered %q", d.Platform(), cmd)
		}
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimRight(l, " \t")
		}
		if text = strings.TrimRight(strings.Join(lines, "\n"), "\n"); text != "" {
			b.WriteString(text + "\n")
		}
	}
	return b.String()
}

// firstDiff describes where two texts part, by line number only.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < min(len(g), len(w)); i++ {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ": got " + strconv.Quote(g[i]) + ", want " + strconv.Quote(w[i])
		}
	}
	return "got " + strconv.Itoa(len(g)) + " lines, want " + strconv.Itoa(len(w))
}

// TestCollectEveryPlatform backs up every platform over SSH and telnet
// with paging on and an enable password where the platform has one, and
// once more with a device that ignores the paging-off commands, so the
// pager is answered; the text must be exactly what the device printed.
func TestCollectEveryPlatform(t *testing.T) {
	for _, id := range driver.IDs() {
		pl, _ := driver.Lookup(id)
		for _, method := range pl.TransportList() {
			for _, pager := range []bool{false, true} {
				name := id + "/" + method
				if pager {
					name += "/pager"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					p, ok := devsim.Lookup(id)
					if !ok {
						t.Fatalf("no simulator for %s", id)
					}
					opts := devsim.Options{Platform: id, Seed: 7}
					if p.EnableCommand != "" {
						opts.EnablePassword = enablePassword
					}
					if pager {
						p.PagingOff = nil // the device answers them but keeps paging
						opts.Personality = &p
					}
					d := startDevice(t, opts)
					res, err := collect(t, target(t, d, method))
					if err != nil {
						t.Fatalf("Collect: %v (reason %s)", err, Reason(err))
					}
					if want := shown(t, d); res.Text != want {
						t.Errorf("collected text differs from the device's configuration: %s", firstDiff(res.Text, want))
					}
					if !strings.HasSuffix(res.Text, "\n") || strings.HasSuffix(res.Text, "\n\n") {
						t.Errorf("text does not end in exactly one newline")
					}
					switch {
					case method == "ssh" && !bytes.Equal(res.HostKey, d.HostKey().Marshal()):
						t.Errorf("host key returned is not the device's")
					case method == "telnet" && res.HostKey != nil:
						t.Errorf("telnet returned a host key")
					}
				})
			}
		}
	}
}

// checkMessage asserts an error message names no secret and quotes no
// configuration line of the device.
func checkMessage(t *testing.T, err error, d *devsim.Device) {
	t.Helper()
	msg := err.Error()
	for _, secret := range []string{loginPassword, enablePassword} {
		if strings.Contains(msg, secret) {
			t.Errorf("message leaks a password: %s", msg)
		}
	}
	var config string
	for _, cmd := range d.Personality().ConfigCommands {
		if text, ok := d.LastOutput(cmd); ok {
			config += text
		}
	}
	for _, line := range strings.Split(config, "\n") {
		if line = strings.TrimSpace(line); len(line) >= 8 && strings.Contains(msg, line) {
			t.Errorf("message quotes the configuration line %q: %s", line, msg)
		}
	}
	if strings.ContainsAny(msg, "\r\n\x1b") {
		t.Errorf("message holds control characters: %q", msg)
	}
}

// short are the timeouts of the failure tests.
var short = Timeouts{Connect: 2 * time.Second, Login: 3 * time.Second, Command: 2 * time.Second, Job: time.Minute}

func TestCollectWrongPassword(t *testing.T) {
	d := startDevice(t, devsim.Options{Platform: "cisco_ios", Failures: []devsim.Failure{devsim.FailWrongPassword}})
	for _, method := range []string{"ssh", "telnet"} {
		t.Run(method, func(t *testing.T) {
			tg := target(t, d, method)
			tg.Timeouts = short
			_, err := collect(t, tg)
			if Reason(err) != ReasonAuth || Retryable(err) {
				t.Fatalf("err = %v, reason %q, retryable %v; want auth, not retryable", err, Reason(err), Retryable(err))
			}
			if !strings.Contains(err.Error(), "authentication failed for user admin") {
				t.Errorf("message does not say what failed: %s", err)
			}
			checkMessage(t, err, d)
		})
	}
}

func TestCollectConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	for _, method := range []string{"ssh", "telnet"} {
		t.Run(method, func(t *testing.T) {
			_, err := collect(t, Target{Platform: "cisco_ios", Host: "127.0.0.1", Port: port, Method: method,
				Username: "admin", Password: loginPassword, Timeouts: short})
			if Reason(err) != ReasonConnect || !Retryable(err) {
				t.Fatalf("err = %v, reason %q; want connect, retryable", err, Reason(err))
			}
			want := "connect 127.0.0.1:" + strconv.Itoa(port) + ": connection refused"
			if err.Error() != want {
				t.Errorf("message %q, want %q", err, want)
			}
		})
	}
}

// failing starts a device with one failure mode and collects from it.
func failing(t *testing.T, opts devsim.Options, method string, tweak func(*Target)) (*devsim.Device, Result, error) {
	t.Helper()
	d := startDevice(t, opts)
	tg := target(t, d, method)
	tg.Timeouts = short
	if tweak != nil {
		tweak(&tg)
	}
	res, err := collect(t, tg)
	if err == nil {
		t.Fatalf("Collect succeeded against a device with %v", opts.Failures)
	}
	t.Logf("message: %s", err)
	checkMessage(t, err, d)
	return d, res, err
}

func TestCollectFailures(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    devsim.Options
		method  string
		reason  string
		retry   bool
		mention string // the message must contain this
		tweak   func(*Target)
	}{
		{"hang before banner/ssh", devsim.Options{Platform: "juniper_junos", Failures: []devsim.Failure{devsim.FailHangBeforeBanner}},
			"ssh", ReasonConnect, true, "the SSH login did not complete within 3s", nil},
		{"hang before banner/telnet", devsim.Options{Platform: "cisco_ios", Failures: []devsim.Failure{devsim.FailHangBeforeBanner}},
			"telnet", ReasonConnect, true, "the telnet login did not complete within 3s", nil},
		{"hang mid output/ssh", devsim.Options{Platform: "cisco_ios", EnablePassword: enablePassword, Failures: []devsim.Failure{devsim.FailHangMidOutput}},
			"ssh", ReasonTimeout, false, "timed out waiting for the prompt after `show running-config`", nil},
		{"hang mid output/exec", devsim.Options{Platform: "juniper_junos", Failures: []devsim.Failure{devsim.FailHangMidOutput}},
			"ssh", ReasonTimeout, false, "timed out waiting for `show configuration | display omit` to finish", nil},
		{"hang mid output/telnet", devsim.Options{Platform: "huawei_vrp", EnablePassword: enablePassword, Failures: []devsim.Failure{devsim.FailHangMidOutput}},
			"telnet", ReasonTimeout, false, "timed out waiting for the prompt after `display current-configuration`", nil},
		{"disconnect mid output/ssh", devsim.Options{Platform: "huawei_vrp", Failures: []devsim.Failure{devsim.FailDisconnectMidOutput}},
			"ssh", ReasonProtocol, false, "closed the connection during `display current-configuration`", nil},
		{"disconnect mid output/exec", devsim.Options{Platform: "mikrotik_routeros", Failures: []devsim.Failure{devsim.FailDisconnectMidOutput}},
			"ssh", ReasonProtocol, false, "closed the connection during `/export show-sensitive`", nil},
		{"disconnect mid output/telnet", devsim.Options{Platform: "fortinet", Failures: []devsim.Failure{devsim.FailDisconnectMidOutput}},
			"telnet", ReasonProtocol, false, "closed the connection during `show`", nil},
		{"endless pager/timeout", devsim.Options{Platform: "cisco_nxos", EndlessPages: 1 << 30, Failures: []devsim.Failure{devsim.FailEndlessPager}},
			"ssh", ReasonTimeout, false, "pager prompts answered", func(tg *Target) { tg.MaxOutput = 1 << 30 }},
		{"endless pager/size", devsim.Options{Platform: "huawei_vrp", EndlessPages: 1 << 30, Failures: []devsim.Failure{devsim.FailEndlessPager}},
			"telnet", ReasonOutputTooLarge, false, "the output of `display current-configuration` exceeds the limit of 1 MiB",
			func(tg *Target) { tg.MaxOutput, tg.Timeouts.Command = 1<<20, time.Minute }},
		{"endless pager/hang-up", devsim.Options{Platform: "fortinet", EndlessPages: 50, Failures: []devsim.Failure{devsim.FailEndlessPager}},
			"ssh", ReasonProtocol, false, "closed the connection during `show`", nil},
		{"slow drip", devsim.Options{Platform: "arista_eos", Failures: []devsim.Failure{devsim.FailSlowDrip},
			DripDelay: 10 * time.Millisecond, DripChunk: 8},
			"ssh", ReasonTimeout, false, "timed out waiting for the prompt after `show running-config`", nil},
		{"garbage", devsim.Options{Platform: "cisco_ios", Failures: []devsim.Failure{devsim.FailGarbage}},
			"ssh", ReasonProtocol, false, "binary control bytes", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := failing(t, c.opts, c.method, c.tweak)
			if Reason(err) != c.reason || Retryable(err) != c.retry {
				t.Fatalf("err = %v; reason %q retryable %v, want %q %v", err, Reason(err), Retryable(err), c.reason, c.retry)
			}
			if !strings.Contains(err.Error(), c.mention) {
				t.Errorf("message %q does not say %q", err, c.mention)
			}
		})
	}
}

func TestCollectEnable(t *testing.T) {
	for _, c := range []struct {
		name, platform, method, enable, mention string
	}{
		{"wrong enable password", "cisco_ios", "ssh", "Wr0ng-Enable", "the enable password was rejected"},
		{"no enable password", "arista_eos", "telnet", "", "none is set"},
		{"wrong super password", "h3c_comware", "ssh", "Wr0ng-Super", "the enable password was rejected"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := startDevice(t, devsim.Options{Platform: c.platform, EnablePassword: enablePassword})
			tg := target(t, d, c.method)
			tg.EnablePassword, tg.Timeouts = c.enable, short
			_, err := collect(t, tg)
			if Reason(err) != ReasonEnable || Retryable(err) {
				t.Fatalf("err = %v (reason %q), want enable, not retryable", err, Reason(err))
			}
			if !strings.Contains(err.Error(), c.mention) || (c.enable != "" && strings.Contains(err.Error(), c.enable)) {
				t.Errorf("message %q: want %q and no password", err, c.mention)
			}
			checkMessage(t, err, d)
		})
	}
}

// TestCollectTemplateCommands runs a template's own commands, in order,
// and fails on one the device rejects instead of storing its error.
func TestCollectTemplateCommands(t *testing.T) {
	d := startDevice(t, devsim.Options{Platform: "cisco_ios", EnablePassword: enablePassword})
	tg := target(t, d, "ssh")
	tg.Commands = []string{"show version", "  ", "show startup-config"}
	res, err := collect(t, tg)
	if err != nil {
		t.Fatal(err)
	}
	startup, _ := d.LastOutput("show startup-config")
	if !strings.HasPrefix(res.Text, "Cisco IOS Software") || !strings.HasSuffix(res.Text, strings.TrimRight(startup, "\n")+"\n") {
		t.Errorf("text is not show version then the startup configuration: %.60q … %.60q", res.Text, res.Text[max(0, len(res.Text)-60):])
	}

	tg.Commands = []string{"show running-config", "show bogus-thing"}
	_, err = collect(t, tg)
	if Reason(err) != ReasonProtocol || !strings.Contains(err.Error(), "the device rejected `show bogus-thing`") {
		t.Errorf("rejected command: %v (reason %q)", err, Reason(err))
	}
	checkMessage(t, err, d)
}

func TestCollectLegacyAlgorithms(t *testing.T) {
	d := startDevice(t, devsim.Options{Platform: "cisco_ios", EnablePassword: enablePassword, Failures: []devsim.Failure{devsim.FailLegacyAlgorithms}})
	res, err := collect(t, target(t, d, "ssh"))
	if err != nil {
		t.Fatalf("a device with only legacy algorithms: %v", err)
	}
	if want := shown(t, d); res.Text != want {
		t.Errorf("text differs: %s", firstDiff(res.Text, want))
	}
}

func TestCollectHostKey(t *testing.T) {
	d := startDevice(t, devsim.Options{Platform: "cisco_xr"})
	first, err := collect(t, target(t, d, "ssh"))
	if err != nil {
		t.Fatal(err)
	}
	tg := target(t, d, "ssh")
	tg.PinnedHostKey = first.HostKey
	if _, err := collect(t, tg); err != nil {
		t.Fatalf("pinned to the key presented on first use: %v", err)
	}
	if err := d.RotateHostKey(); err != nil {
		t.Fatal(err)
	}
	res, err := collect(t, tg)
	if Reason(err) != ReasonHostKeyChanged || Retryable(err) {
		t.Fatalf("err = %v (reason %q), want host_key_changed, not retryable", err, Reason(err))
	}
	checkMessage(t, err, d)
	if !bytes.Equal(res.HostKey, d.HostKey().Marshal()) {
		t.Error("the new key is not returned with the error")
	}
	newFP, oldFP := fingerprint(res.HostKey), fingerprint(first.HostKey)
	for _, want := range []string{"host key changed", "presented " + newFP, oldFP + " is pinned", "backupd device accept-hostkey"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

func TestCollectEncodings(t *testing.T) {
	for _, c := range []struct {
		name     string
		opts     devsim.Options
		encoding string
	}{
		{"gbk device", devsim.Options{Platform: "huawei_vrp", Encoding: "gbk"}, "gbk"},
		{"non-utf8 failure mode read as latin-1", devsim.Options{Platform: "cisco_ios", Failures: []devsim.Failure{devsim.FailNonUTF8}}, "latin-1"},
		{"shift_jis device", devsim.Options{Platform: "mikrotik_routeros", Encoding: "shift_jis"}, "shift_jis"},
	} {
		for _, method := range []string{"ssh", "telnet"} {
			t.Run(c.name+"/"+method, func(t *testing.T) {
				t.Parallel()
				d := startDevice(t, c.opts)
				tg := target(t, d, method)
				tg.Encoding = c.encoding
				res, err := collect(t, tg)
				if err != nil {
					t.Fatal(err)
				}
				want := shown(t, d)
				if res.Text != want {
					t.Errorf("decoded text differs: %s", firstDiff(res.Text, want))
				}
				if utf8.ValidString(want) && strings.IndexFunc(want, func(r rune) bool { return r > 0x7f }) < 0 {
					t.Error("test premise: the configuration has no non-ASCII text")
				}

				// The same bytes read as UTF-8 are kept, bad bytes replaced.
				tg.Encoding = ""
				res, err = collect(t, tg)
				if err != nil {
					t.Fatalf("as utf-8: %v", err)
				}
				if !utf8.ValidString(res.Text) || !strings.ContainsRune(res.Text, utf8.RuneError) {
					t.Error("undecoded bytes were not replaced")
				}
			})
		}
	}
}

func TestCollectRejectsBadTargets(t *testing.T) {
	for _, c := range []struct {
		name string
		tg   Target
		want string
	}{
		{"platform", Target{Platform: "acme_unknown_os", Host: "127.0.0.1"}, `unknown platform "acme_unknown_os"`},
		{"method", Target{Platform: "cisco_ios", Host: "127.0.0.1", Method: "rlogin"}, `unknown login method "rlogin"`},
		{"encoding", Target{Platform: "cisco_ios", Host: "127.0.0.1", Encoding: "ebcdic"}, `unknown encoding "ebcdic"`},
		{"host", Target{Platform: "cisco_ios"}, "no host given"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Collect(context.Background(), c.tg)
			if err == nil || !strings.Contains(err.Error(), c.want) || Reason(err) != ReasonProtocol {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestReason(t *testing.T) {
	if Reason(nil) != "" || Retryable(nil) {
		t.Error("nil error classified")
	}
	if Reason(errors.New("x")) != ReasonProtocol {
		t.Error("unknown errors are protocol errors")
	}
	wrapped := errors.Join(errors.New("context"), &Error{Reason: ReasonConnect, msg: "m"})
	if Reason(wrapped) != ReasonConnect || !Retryable(wrapped) {
		t.Error("wrapped Error not classified")
	}
}

// TestCollectNoGoroutineLeaks runs successful and failing collections and
// checks that, once the devices are closed, the goroutine count comes back
// to where it was.
func TestCollectNoGoroutineLeaks(t *testing.T) {
	base := runtime.NumGoroutine()
	func() {
		ok := startDevice(t, devsim.Options{Platform: "cisco_ios", EnablePassword: enablePassword})
		exec := startDevice(t, devsim.Options{Platform: "juniper_junos"})
		hang := startDevice(t, devsim.Options{Platform: "cisco_ios", Failures: []devsim.Failure{devsim.FailHangMidOutput}})
		for _, tg := range []Target{target(t, ok, "ssh"), target(t, ok, "telnet"), target(t, exec, "ssh"), target(t, hang, "ssh"), target(t, hang, "telnet")} {
			tg.Timeouts.Command = time.Second
			collect(t, tg)
		}
		for _, d := range []*devsim.Device{ok, exec, hang} {
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}()
	// Bounded poll: closed sockets are noticed on their own schedule.
	deadline := time.Now().Add(hangGuard)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		var sb strings.Builder
		pprof.Lookup("goroutine").WriteTo(&sb, 1)
		t.Fatalf("%d goroutines, %d before:\n%s", n, base, sb.String())
	}
}
