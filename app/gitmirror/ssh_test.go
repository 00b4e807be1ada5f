package gitmirror_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"log/slog"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"backupd/app/gitmirror"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
)

// gitSSHServer is an SSH server on 127.0.0.1 that serves git pushes and
// fetches by running the real git receive-pack/upload-pack with the
// channel as stdio. Only clientKey may log in.
type gitSSHServer struct {
	addr    string
	hostKey ssh.PublicKey
	logins  int
	mu      sync.Mutex
}

func newKey(t *testing.T) (ssh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer, string(pem.EncodeToMemory(block))
}

func startGitSSH(t *testing.T, clientKey ssh.PublicKey) *gitSSHServer {
	t.Helper()
	host, _ := newKey(t)
	s := &gitSSHServer{hostKey: host.PublicKey()}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if string(k.Marshal()) != string(clientKey.Marshal()) {
			return nil, &ssh.PartialSuccessError{}
		}
		s.mu.Lock()
		s.logins++
		s.mu.Unlock()
		return nil, nil
	}}
	cfg.AddHostKey(host)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); s.serve(c, cfg) }()
		}
	}()
	return s
}

func (s *gitSSHServer) serve(c net.Conn, cfg *ssh.ServerConfig) {
	defer c.Close()
	conn, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer conn.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for req := range creqs {
				if req.Type != "exec" {
					req.Reply(req.Type == "env", nil)
					continue
				}
				var p struct{ Command string }
				if ssh.Unmarshal(req.Payload, &p) != nil {
					req.Reply(false, nil)
					return
				}
				// git-receive-pack '/path' or git-upload-pack '/path'
				verb, arg, _ := strings.Cut(p.Command, " ")
				arg = strings.Trim(arg, "'")
				if verb != "git-receive-pack" && verb != "git-upload-pack" {
					req.Reply(false, nil)
					return
				}
				req.Reply(true, nil)
				cmd := exec.Command("git", strings.TrimPrefix(verb, "git-"), arg)
				cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
				code := 0
				if err := cmd.Run(); err != nil {
					code = 1
				}
				status := make([]byte, 4)
				binary.BigEndian.PutUint32(status, uint32(code))
				ch.SendRequest("exit-status", false, status)
				return
			}
		}()
	}
}

func (s *gitSSHServer) knownHosts() string {
	return "[127.0.0.1]:" + strings.Split(s.addr, ":")[1] + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.hostKey)))
}

func TestPushOverSSH(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("ssh is not installed")
	}
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	client, clientPEM := newKey(t)
	srv := startGitSSH(t, client.PublicKey())
	bare := bareRepo(t)
	url := "ssh://git@" + srv.addr + bare
	gm := db.GitMirror{Enabled: true, RemoteURL: url, KnownHosts: srv.knownHosts(),
		SSHKey: e.sealer.Seal(clientPEM, secret.PurposeGitKey)}
	e.pushRun(gm, bare, r1, "r1", "over SSH")

	// Another server at the same address pins nothing: a wrong host key is
	// refused before any login, and reported.
	other := startGitSSH(t, client.PublicKey())
	gm.RemoteURL = "ssh://git@" + other.addr + bare
	gm.KnownHosts = "[127.0.0.1]:" + strings.Split(other.addr, ":")[1] + " " +
		strings.TrimSpace(string(ssh.MarshalAuthorizedKey(srv.hostKey))) // the first server's key
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, gm); err != nil {
		t.Fatal(err)
	}
	e.sims[r1].Mutate(3)
	e.run(queue.TriggerSchedule)
	second := e.sync() // backups and commits go on
	if second.Commit == "" {
		t.Fatal("no commit for the change")
	}
	err := e.mirror.Push(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "Host key verification failed") {
		t.Fatalf("push to a server with another host key: %v", err)
	}
	if other.logins != 0 {
		t.Fatal("the client logged in to a server whose host key is not the pinned one")
	}
	st, _ := e.mirror.PushStatus(e.ctx)
	if st.OK || !strings.Contains(st.Error, "Host key verification failed") || strings.Contains(st.Error, "PRIVATE KEY") {
		t.Fatalf("push status: %+v", st)
	}
	if strings.Contains(e.log.String(), "PRIVATE KEY") {
		t.Fatal("the deploy key is in the log")
	}
	// The deploy key is on disk only during a push.
	if out, _ := exec.Command("find", e.dir+"/git", "-name", "deploy_key").Output(); len(out) != 0 {
		t.Fatalf("deploy key left on disk: %s", out)
	}
}

// A remote that accepts the connection and never answers: the push is
// cut off at its timeout (git and the ssh it started), reported, and the
// mirror stays usable.
func TestPushTimesOut(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("ssh is not installed")
	}
	e := newEnv(t)
	e.sim("r1", "cisco_ios", 1, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // silent until the test ends
		}
	}()
	client, clientPEM := newKey(t)
	port := strings.Split(ln.Addr().String(), ":")[1]
	gm := db.GitMirror{Enabled: true, RemoteURL: "ssh://git@" + ln.Addr().String() + "/net.git",
		KnownHosts: "[127.0.0.1]:" + port + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(client.PublicKey()))),
		SSHKey:     e.sealer.Seal(clientPEM, secret.PurposeGitKey)}
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, gm); err != nil {
		t.Fatal(err)
	}
	e.mirror.PushTimeout, e.mirror.PushAttempts = 500*time.Millisecond, 1
	e.run(queue.TriggerManual)
	e.sync()
	err = e.mirror.Push(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("push to a silent server: %v", err)
	}
	if res := e.sync(); res.Commit != "" {
		t.Fatalf("sync after a timed-out push: %+v", res)
	}
}

// A relative data directory (the default is ./data) pushes over SSH as an
// absolute one does: git runs inside DATA/git/mirror, so the deploy key
// and the pinned known_hosts must reach ssh as absolute paths.
func TestPushOverSSHFromRelativeDataDir(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("ssh is not installed")
	}
	e := newEnv(t)
	t.Chdir(filepath.Dir(e.dir))
	e.mirror = gitmirror.New(e.store, e.sealer, slog.New(slog.NewTextHandler(e.log, nil)), filepath.Base(e.dir))
	e.mirror.PushBackoff = 10 * time.Millisecond
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	client, clientPEM := newKey(t)
	srv := startGitSSH(t, client.PublicKey())
	bare := bareRepo(t)
	gm := db.GitMirror{Enabled: true, RemoteURL: "ssh://git@" + srv.addr + bare, KnownHosts: srv.knownHosts(),
		SSHKey: e.sealer.Seal(clientPEM, secret.PurposeGitKey)}
	e.pushRun(gm, bare, r1, "r1", "over SSH from a relative data directory")
}

// A pinned key that names another host or port is reported as such, not
// as a changed host key.
func TestPushSaysWhenNoPinNamesTheRemote(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("ssh is not installed")
	}
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	client, clientPEM := newKey(t)
	srv := startGitSSH(t, client.PublicKey())
	bare := bareRepo(t)
	gm := db.GitMirror{Enabled: true, RemoteURL: "ssh://git@" + srv.addr + bare,
		KnownHosts: "[127.0.0.1]:1 " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(srv.hostKey))),
		SSHKey:     e.sealer.Seal(clientPEM, secret.PurposeGitKey)}
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, gm); err != nil {
		t.Fatal(err)
	}
	e.sims[r1].Mutate(1)
	e.run(queue.TriggerManual)
	e.sync()
	err := e.mirror.Push(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "no pinned host key names this remote's host and port") {
		t.Fatalf("push with a pin for another port: %v", err)
	}
	if srv.logins != 0 {
		t.Fatal("logged in without a pinned host key")
	}
}
