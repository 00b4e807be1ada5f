package collect

import (
	"strings"
	"testing"

	"backupd/app/devsim"
)

// A command line that asks for the credentials after the SSH login
// (AireOS lets any SSH client in) and refuses them fails as an
// authentication failure, not retried, after one try, with no password in
// the message.
func TestCollectShellLoginRefused(t *testing.T) {
	for _, platform := range []string{"cisco_wlc", "cisco_smb"} {
		t.Run(platform, func(t *testing.T) {
			d := startDevice(t, devsim.Options{Platform: platform, Failures: []devsim.Failure{devsim.FailWrongPassword}})
			tg := target(t, d, "ssh")
			tg.Timeouts = short
			_, err := collect(t, tg)
			if Reason(err) != ReasonAuth || Retryable(err) {
				t.Fatalf("err = %v, reason %q, retryable %v; want auth, not retryable", err, Reason(err), Retryable(err))
			}
			if !strings.Contains(err.Error(), "authentication failed for user admin") {
				t.Errorf("message does not say what failed: %s", err)
			}
			if n := d.Stats().FailedLogins; n != 1 {
				t.Errorf("%d failed logins on the device, want 1 (the password is given once)", n)
			}
			checkMessage(t, err, d)
		})
	}
}
