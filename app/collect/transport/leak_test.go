package transport

import (
	"context"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// TestNoGoroutineLeaks opens and closes shells, fails logins and times out
// handshakes, then checks that the goroutine count comes back to where it
// was once the servers have seen the connections go.
func TestNoGoroutineLeaks(t *testing.T) {
	good := startSSHServer(t, passwordConfig("pw"), echoShell)
	silent := silentServer(t)
	telnet, _ := scriptedServer(t, []step{{"Password: ", "pw"}, {"\r\nsw>", ""}}, true)

	base := runtime.NumGoroutine()
	for range 3 {
		o := good.options()
		o.Username, o.Password = "admin", "pw"
		c, _, err := DialSSH(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		readUntilT(t, c, `router# $`)
		c.Close()

		o.Password = "wrong"
		if _, _, err := DialSSH(context.Background(), o); err == nil {
			t.Fatal("wrong password accepted")
		}

		o = silent.options()
		o.LoginTimeout = 100 * time.Millisecond
		if _, _, err := DialSSH(context.Background(), o); err == nil {
			t.Fatal("silent server: dial succeeded")
		}

		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		tc, err := DialTelnet(ctx, telnet.options())
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if err := TelnetLogin(ctx, tc, "admin", "pw"); err != nil {
			t.Fatal(err)
		}
		tc.Close()
		cancel()
	}

	// Bounded poll: the servers notice the closed connections on their own
	// schedule. This waits for that, it does not measure time.
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
