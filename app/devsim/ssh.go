package devsim

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// handshakeTimeout bounds the SSH handshake and authentication.
const handshakeTimeout = 30 * time.Second

var errAuth = errors.New("devsim: authentication failed")

func (d *Device) sshConfig() *ssh.ServerConfig {
	d.mu.Lock()
	signer := d.signer
	d.mu.Unlock()
	version := d.p.SSHVersion
	if !strings.HasPrefix(version, "SSH-2.0-") {
		version = "SSH-2.0-devsim"
	}
	cfg := &ssh.ServerConfig{
		ServerVersion: version,
		MaxAuthTries:  6,
		PasswordCallback: func(cm ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if d.p.ShellLogin {
				// Anyone gets in; the command line checks the login.
				return nil, nil
			}
			if d.checkLogin(cm.User(), string(pw)) {
				return nil, nil
			}
			return nil, errAuth
		},
		KeyboardInteractiveCallback: func(cm ssh.ConnMetadata, challenge ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			answers, err := challenge("", "", []string{"Password: "}, []bool{false})
			if err != nil {
				return nil, err
			}
			if len(answers) == 1 && d.checkLogin(cm.User(), answers[0]) {
				return nil, nil
			}
			return nil, errAuth
		},
	}
	if banner := d.p.Banner; banner != "" {
		text := strings.ReplaceAll(strings.ReplaceAll(banner, "{host}", d.opts.Hostname), "\n", "\r\n")
		cfg.BannerCallback = func(ssh.ConnMetadata) string { return text }
	}
	if d.has(FailLegacyAlgorithms) {
		cfg.KeyExchanges = []string{ssh.InsecureKeyExchangeDH1SHA1}
		cfg.Ciphers = []string{ssh.InsecureCipherAES128CBC, ssh.InsecureCipherTripleDESCBC}
		cfg.MACs = []string{ssh.HMACSHA1}
	}
	cfg.AddHostKey(signer)
	return cfg
}

// serveSSH runs one SSH connection: handshake, then session channels with
// pty, shell and exec requests.
func (d *Device) serveSSH(ctx context.Context, c net.Conn) {
	if d.has(FailHangBeforeBanner) {
		d.waitClose(c)
		return
	}
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	sconn, chans, reqs, err := ssh.NewServerConn(c, d.sshConfig())
	if err != nil {
		d.log.Debug("ssh handshake failed", "remote", c.RemoteAddr().String(), "err", err.Error())
		return
	}
	c.SetDeadline(time.Time{})
	c.SetReadDeadline(time.Now().Add(d.opts.IdleTimeout))
	connCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.goOwned(func() {
		sconn.Wait()
		cancel()
	})
	d.goOwned(func() { ssh.DiscardRequests(reqs) })
	var shells sync.WaitGroup
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		shells.Add(1)
		d.goOwned(func() {
			defer shells.Done()
			d.serveChannel(connCtx, sconn, c, ch, creqs)
		})
	}
	shells.Wait()
}

// serveChannel answers the requests of one session channel; the shell or
// exec runs on its own goroutine so window-change requests keep flowing.
func (d *Device) serveChannel(ctx context.Context, sconn *ssh.ServerConn, c net.Conn, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	pty, started := false, false
	var work sync.WaitGroup
	defer work.Wait()
	start := func(run func(s *session) error) {
		started = true
		s := d.newSession(ctx, ch, ch, c, func() { <-ctx.Done() })
		s.user = d.loginName(sconn.User())
		work.Add(1)
		d.goOwned(func() {
			defer work.Done()
			err := run(s)
			switch {
			case errors.Is(err, errDisconnect):
				sconn.Close()
				return
			case errors.Is(err, errHung):
				return
			}
			status := uint32(0)
			if errors.Is(err, errUnknownCommand) {
				status = 1
			}
			ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
			ch.Close()
		})
	}
	for req := range reqs {
		switch req.Type {
		case "pty-req":
			pty = true
			req.Reply(true, nil)
		case "env", "window-change":
			req.Reply(true, nil)
		case "shell":
			if started {
				req.Reply(false, nil)
				continue
			}
			req.Reply(true, nil)
			start(func(s *session) error {
				if d.p.ShellLogin {
					// The command line asks for the credentials again.
					if ok, err := s.loginDialogue(); !ok || err != nil {
						return errQuit
					}
				}
				return s.runShell()
			})
		case "exec":
			var payload struct{ Command string }
			if started || ssh.Unmarshal(req.Payload, &payload) != nil {
				req.Reply(false, nil)
				continue
			}
			req.Reply(true, nil)
			if name, ok := scpSourcePath(payload.Command); ok {
				start(func(s *session) error { return s.serveSCP(name) })
				continue
			}
			if target, ok := scpSinkPath(payload.Command); ok {
				start(func(s *session) error { return s.receiveSCP(target) })
				continue
			}
			lf := d.p.ExecLF && !pty
			start(func(s *session) error {
				// Exec requests run at the account's full privilege, as
				// on devices that allow them at all.
				s.isExec, s.priv = true, true
				if lf {
					s.nl = "\n"
				}
				s.d.commands.Add(1)
				return s.exec(strings.TrimSpace(payload.Command))
			})
		default:
			req.Reply(false, nil)
		}
	}
}
