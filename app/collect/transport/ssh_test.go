package transport

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func TestSSHPasswordShell(t *testing.T) {
	srv := startSSHServer(t, passwordConfig("s3cret"), echoShell)
	o := srv.options()
	o.Username, o.Password = "admin", "s3cret"

	c, hostKey, err := dialSSHGuarded(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if want := ed25519HostKey().PublicKey().Marshal(); !bytes.Equal(hostKey, want) {
		t.Errorf("returned host key is not the server's (trust on first use)")
	}
	select {
	case p := <-srv.ptys:
		if p.Term != "vt100" || p.Columns != DefaultTermWidth || p.Rows != 0 {
			t.Errorf("pty-req = %q %dx%d, want vt100 %dx0", p.Term, p.Columns, p.Rows, DefaultTermWidth)
		}
	default:
		t.Error("no PTY was requested before the shell")
	}
	readUntilT(t, c, `router# $`)
	if _, err := c.Write([]byte("show running-config\n")); err != nil {
		t.Fatal(err)
	}
	readUntilT(t, c, `show running-config\n`)
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := c.Read(make([]byte, 10)); err == nil {
		t.Error("Read after Close succeeded")
	}
}

func TestSSHTerminalSize(t *testing.T) {
	srv := startSSHServer(t, passwordConfig("pw"), echoShell)
	o := srv.options()
	o.Username, o.Password = "admin", "pw"
	o.TermWidth, o.TermHeight = 300, 1000
	if _, _, err := dialSSHGuarded(t, context.Background(), o); err != nil {
		t.Fatal(err)
	}
	p := <-srv.ptys
	if p.Columns != 300 || p.Rows != 1000 {
		t.Errorf("pty-req size = %dx%d, want 300x1000", p.Columns, p.Rows)
	}
}

func TestSSHWrongPassword(t *testing.T) {
	srv := startSSHServer(t, passwordConfig("right"), echoShell)
	o := srv.options()
	o.Username, o.Password = "admin", "wrong-Pa55"

	_, _, err := dialSSHGuarded(t, context.Background(), o)
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("err = %v, want ErrAuth", err)
	}
	if errors.Is(err, ErrConnect) {
		t.Errorf("an auth failure must not be retryable: %v", err)
	}
	if strings.Contains(err.Error(), o.Password) {
		t.Errorf("error leaks the password: %v", err)
	}
}

func TestSSHKeyboardInteractive(t *testing.T) {
	// A device that offers only keyboard-interactive and asks two
	// questions; loop=true keeps asking after wrong answers.
	config := func(loop bool) *ssh.ServerConfig {
		cfg := &ssh.ServerConfig{
			KeyboardInteractiveCallback: func(m ssh.ConnMetadata, ask ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
				for range 10 {
					ans, err := ask("", "", []string{"Password: ", "Token: "}, []bool{false, false})
					if err != nil {
						return nil, err
					}
					if len(ans) == 2 && ans[0] == "kbd-pw" && ans[1] == "kbd-pw" {
						return nil, nil
					}
					if !loop {
						break
					}
				}
				return nil, errors.New("denied")
			},
		}
		cfg.AddHostKey(ed25519HostKey())
		return cfg
	}
	tests := []struct {
		name, password string
		loop           bool
		wantAuthErr    bool
	}{
		{"accepted", "kbd-pw", false, false},
		{"rejected", "nope", false, true},
		{"device keeps asking", "nope", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startSSHServer(t, config(tt.loop), echoShell)
			o := srv.options()
			o.Username, o.Password = "admin", tt.password
			c, _, err := dialSSHGuarded(t, context.Background(), o)
			if tt.wantAuthErr {
				if !errors.Is(err, ErrAuth) {
					t.Fatalf("err = %v, want ErrAuth", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			readUntilT(t, c, `router# $`)
		})
	}
}

func TestSSHPublicKey(t *testing.T) {
	_, userRaw, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	userKey, err := ssh.NewSignerFromKey(userRaw)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(m ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
			if bytes.Equal(k.Marshal(), userKey.PublicKey().Marshal()) {
				return nil, nil
			}
			return nil, errors.New("unknown key")
		},
	}
	cfg.AddHostKey(ed25519HostKey())
	srv := startSSHServer(t, cfg, echoShell)

	plain, err := ssh.MarshalPrivateKey(userRaw, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("accepted", func(t *testing.T) {
		o := srv.options()
		o.Username, o.PrivateKey = "admin", pem.EncodeToMemory(plain)
		c, _, err := dialSSHGuarded(t, context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		readUntilT(t, c, `router# $`)
	})
	t.Run("unknown key", func(t *testing.T) {
		_, otherRaw, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		other, err := ssh.MarshalPrivateKey(otherRaw, "")
		if err != nil {
			t.Fatal(err)
		}
		o := srv.options()
		o.Username, o.PrivateKey = "admin", pem.EncodeToMemory(other)
		if _, _, err := dialSSHGuarded(t, context.Background(), o); !errors.Is(err, ErrAuth) {
			t.Fatalf("err = %v, want ErrAuth", err)
		}
	})
	t.Run("encrypted key", func(t *testing.T) {
		enc, err := ssh.MarshalPrivateKeyWithPassphrase(userRaw, "", []byte("phrase"))
		if err != nil {
			t.Fatal(err)
		}
		o := srv.options()
		o.Username, o.PrivateKey = "admin", pem.EncodeToMemory(enc)
		if _, _, err := dialSSHGuarded(t, context.Background(), o); !errors.Is(err, ErrAuth) ||
			!strings.Contains(err.Error(), "encrypted") {
			t.Fatalf("without passphrase: err = %v, want ErrAuth saying the key is encrypted", err)
		}
		o.PrivateKeyPassphrase = []byte("phrase")
		if _, _, err := dialSSHGuarded(t, context.Background(), o); err != nil {
			t.Fatalf("with passphrase: %v", err)
		}
	})
}

func TestSSHLegacyAlgorithms(t *testing.T) {
	legacyRSA, err := ssh.NewSignerWithAlgorithms(rsaHostKey().(ssh.AlgorithmSigner), []string{ssh.KeyAlgoRSA})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ kex, cipher, mac string }{
		{ssh.InsecureKeyExchangeDH1SHA1, ssh.InsecureCipherAES128CBC, ssh.HMACSHA1},
		{ssh.InsecureKeyExchangeDH14SHA1, ssh.InsecureCipherTripleDESCBC, ssh.InsecureHMACSHA196},
	}
	for _, tt := range tests {
		t.Run(tt.kex+"/"+tt.cipher, func(t *testing.T) {
			cfg := passwordConfig("pw", legacyRSA)
			cfg.KeyExchanges = []string{tt.kex}
			cfg.Ciphers = []string{tt.cipher}
			cfg.MACs = []string{tt.mac}
			srv := startSSHServer(t, cfg, echoShell)
			o := srv.options()
			o.Username, o.Password = "admin", "pw"

			// The server really is legacy-only: stock x/crypto defaults fail.
			stock := &ssh.ClientConfig{User: "admin", Auth: []ssh.AuthMethod{ssh.Password("pw")},
				HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second}
			if cl, err := ssh.Dial("tcp", o.addr(), stock); err == nil {
				cl.Close()
				t.Fatal("stock client connected: the server is not legacy-only")
			}

			c, hostKey, err := dialSSHGuarded(t, context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			k, err := ssh.ParsePublicKey(hostKey)
			if err != nil || k.Type() != ssh.KeyAlgoRSA {
				t.Fatalf("host key type = %v (%v), want ssh-rsa", k, err)
			}
			readUntilT(t, c, `router# $`)

			// Pinning that ssh-rsa key restricts negotiation to RSA
			// signature algorithms, including plain ssh-rsa.
			o.PinnedHostKey = hostKey
			if _, _, err := dialSSHGuarded(t, context.Background(), o); err != nil {
				t.Fatalf("pinned ssh-rsa: %v", err)
			}
		})
	}
}

// silentServer accepts TCP and never sends a byte (no SSH banner, no telnet
// prompt); it reads and discards until the test ends.
func silentServer(t *testing.T) *tcpServer {
	return startTCPServer(t, func(s *tcpServer, c net.Conn) {
		_, _ = io.Copy(io.Discard, c)
	})
}

func TestSSHNoBanner(t *testing.T) {
	srv := silentServer(t)

	t.Run("context deadline", func(t *testing.T) {
		o := srv.options()
		o.LoginTimeout = time.Hour
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, _, err := dialSSHGuarded(t, ctx, o)
		if !errors.Is(err, ErrConnect) {
			t.Fatalf("err = %v, want ErrConnect", err)
		}
	})
	t.Run("login timeout", func(t *testing.T) {
		o := srv.options()
		o.LoginTimeout = 300 * time.Millisecond
		_, _, err := dialSSHGuarded(t, context.Background(), o)
		if !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), "timeout") {
			t.Fatalf("err = %v, want ErrConnect mentioning the timeout", err)
		}
	})
	t.Run("context cancelled", func(t *testing.T) {
		o := srv.options()
		o.LoginTimeout = time.Hour
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-srv.accepted // the TCP connect is done: cancel mid-handshake
			cancel()
		}()
		_, _, err := dialSSHGuarded(t, ctx, o)
		if !errors.Is(err, ErrConnect) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want ErrConnect wrapping context.Canceled", err)
		}
	})
}

func TestSSHConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close()
	_, _, err = dialSSHGuarded(t, context.Background(), Options{Host: "127.0.0.1", Port: addr.Port, Password: "x"})
	if !errors.Is(err, ErrConnect) {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
}

func TestSSHReadDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := startSSHServer(t, passwordConfig("pw"), func(s *tcpServer, ch ssh.Channel) {
		if _, err := ch.Write([]byte("part one\r\n")); err != nil {
			return
		}
		select { // stall mid-output
		case <-release:
		case <-s.done:
			return
		}
		if _, err := ch.Write([]byte("part two\r\n")); err != nil {
			return
		}
		<-s.done
	})
	o := srv.options()
	o.Username, o.Password = "admin", "pw"
	c, _, err := dialSSHGuarded(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	readUntilT(t, c, `part one\r\n`)

	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	n, err := c.Read(make([]byte, 100))
	var ne net.Error
	if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read on a stalled device = %d, %v; want a timeout error", n, err)
	}

	// A deadline already in the past fails at once, too.
	c.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := c.Read(make([]byte, 100)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read with a past deadline: %v", err)
	}

	// The stream survives the timeout: clear the deadline and read on.
	c.SetReadDeadline(time.Time{})
	close(release)
	readUntilT(t, c, `part two\r\n`)
}

func TestSSHRemoteClose(t *testing.T) {
	srv := startSSHServer(t, passwordConfig("pw"), func(s *tcpServer, ch ssh.Channel) {
		ch.Write([]byte("bye\r\n"))
	})
	o := srv.options()
	o.Username, o.Password = "admin", "pw"
	c, _, err := dialSSHGuarded(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(hangGuard))
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "bye\r\n" {
		t.Fatalf("ReadAll = %q, %v; want the output then EOF", got, err)
	}
}

func TestSSHHostKeyPinning(t *testing.T) {
	ed := ed25519HostKey()
	srv := startSSHServer(t, passwordConfig("pw", ed), echoShell)
	both := startSSHServer(t, passwordConfig("pw", rsaHostKey(), ed), echoShell)
	opts := func(s *sshServer, pinned []byte) Options {
		o := s.options()
		o.Username, o.Password, o.PinnedHostKey = "admin", "pw", pinned
		return o
	}

	t.Run("same key", func(t *testing.T) {
		_, k, err := dialSSHGuarded(t, context.Background(), opts(srv, ed.PublicKey().Marshal()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(k, ed.PublicKey().Marshal()) {
			t.Error("returned key differs from the pinned one")
		}
	})
	t.Run("authorized_keys form", func(t *testing.T) {
		if _, _, err := dialSSHGuarded(t, context.Background(), opts(srv, ssh.MarshalAuthorizedKey(ed.PublicKey()))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("other key of the same type", func(t *testing.T) {
		_, _, err := dialSSHGuarded(t, context.Background(), opts(srv, newEd25519Signer().PublicKey().Marshal()))
		if !errors.Is(err, ErrHostKeyChanged) || !strings.Contains(err.Error(), "host key changed") {
			t.Fatalf("err = %v, want ErrHostKeyChanged saying \"host key changed\"", err)
		}
		if errors.Is(err, ErrConnect) || errors.Is(err, ErrAuth) {
			t.Errorf("a changed key must not be classed as connect or auth: %v", err)
		}
	})
	t.Run("device lost the pinned key type", func(t *testing.T) {
		_, _, err := dialSSHGuarded(t, context.Background(), opts(srv, rsaHostKey().PublicKey().Marshal()))
		if !errors.Is(err, ErrHostKeyChanged) || !strings.Contains(err.Error(), "host key changed") {
			t.Fatalf("err = %v, want ErrHostKeyChanged", err)
		}
	})
	t.Run("device with several keys presents the pinned type", func(t *testing.T) {
		// Unpinned, the RSA key is preferred; pinned to ed25519, that key
		// must be negotiated instead of failing as "changed".
		_, k, err := dialSSHGuarded(t, context.Background(), opts(both, nil))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(k, ed.PublicKey().Marshal()) {
			t.Fatal("test premise: unpinned negotiation was expected to pick RSA")
		}
		_, k, err = dialSSHGuarded(t, context.Background(), opts(both, ed.PublicKey().Marshal()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(k, ed.PublicKey().Marshal()) {
			t.Error("pinned ed25519 but another key was accepted")
		}
	})
	t.Run("garbage pin", func(t *testing.T) {
		if _, _, err := dialSSHGuarded(t, context.Background(), opts(srv, []byte("nonsense"))); err == nil {
			t.Fatal("an unparsable pinned key was accepted")
		}
	})
}
