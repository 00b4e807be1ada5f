package transport

import (
	"context"
	"slices"
	"testing"

	"golang.org/x/crypto/ssh"
)

// A CPU without AES-GCM instructions offers ChaCha20-Poly1305 first; one
// with them keeps x/crypto's order (AES-GCM first). Either way every
// cipher stays offered, the insecure ones old gear needs last.
func TestCipherOrderFollowsAESHardware(t *testing.T) {
	defer func(v bool) { aesGCMHardware = v }(aesGCMHardware)
	all := append(ssh.SupportedAlgorithms().Ciphers, ssh.InsecureAlgorithms().Ciphers...)
	for _, hw := range []bool{true, false} {
		aesGCMHardware = hw
		got := sshAlgorithms().Ciphers
		want := ssh.CipherAES128GCM
		if !hw {
			want = ssh.CipherChaCha20Poly1305
		}
		if got[0] != want {
			t.Errorf("AES hardware %v: first cipher %s, want %s", hw, got[0], want)
		}
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(all))) {
			t.Errorf("AES hardware %v: offered %v, want all of %v", hw, got, all)
		}
		if insecure := ssh.InsecureAlgorithms().Ciphers; !slices.Equal(got[len(got)-len(insecure):], insecure) {
			t.Errorf("AES hardware %v: offered %v, want the insecure ciphers last", hw, got)
		}
		// Peers that speak only one of them still get a shell.
		for _, only := range []string{ssh.CipherAES128GCM, ssh.CipherChaCha20Poly1305, ssh.CipherAES128CTR} {
			cfg := passwordConfig("pw")
			cfg.Ciphers = []string{only}
			srv := startSSHServer(t, cfg, echoShell)
			o := srv.options()
			o.Username, o.Password = "admin", "pw"
			c, _, err := dialSSHGuarded(t, context.Background(), o)
			if err != nil {
				t.Fatalf("AES hardware %v, peer with %s only: %v", hw, only, err)
			}
			readUntilT(t, c, `router# $`)
			c.Close()
		}
	}
}
