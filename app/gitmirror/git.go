package gitmirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrNoGit is returned when the git program cannot be found. Only the
// mirror needs it: backups never do.
var ErrNoGit = errors.New("git mirror: the git program is not installed: apt install git")

// gitTimeout bounds one local git command; pushes and backfills have
// their own, longer bounds.
const gitTimeout = 2 * time.Minute

// runner runs the git program with a clean environment: no system or
// user configuration, HOME in the data directory, never a prompt.
type runner struct {
	bin  string
	repo string
	home string
}

func newRunner(root string) (*runner, error) {
	bin, err := lookPath("git")
	if err != nil {
		return nil, ErrNoGit
	}
	home := filepath.Join(root, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("git mirror: %w", err)
	}
	return &runner{bin: bin, repo: filepath.Join(root, "mirror"), home: home}, nil
}

// env is the whole environment of a git process: nothing is inherited
// but PATH (to find git's helpers and ssh).
func (r *runner) env(extra []string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + r.home,
		"XDG_CONFIG_HOME=" + r.home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
		"LC_ALL=C",
	}
	// A later entry replaces an earlier one of the same name: the
	// process would see only the first.
	for _, kv := range extra {
		name, _, _ := strings.Cut(kv, "=")
		for i, e := range env {
			if strings.HasPrefix(e, name+"=") {
				env = append(env[:i], env[i+1:]...)
				break
			}
		}
		env = append(env, kv)
	}
	return env
}

// run runs git in the mirror with args; the output is returned, the
// error names the command and carries at most 500 bytes of git's
// message (git never prints file contents on the commands used here).
func (r *runner) run(ctx context.Context, timeout time.Duration, stdin io.Reader, extra []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	full := append([]string{"-C", r.repo, "-c", "core.autocrlf=false", "-c", "core.safecrlf=false",
		"-c", "commit.gpgsign=false", "-c", "core.hooksPath=" + os.DevNull, "-c", "credential.helper=",
		"-c", "core.quotepath=false", "-c", "gc.auto=0"}, args...)
	var out, errb bytes.Buffer
	if err := runProcess(ctx, r.bin, full, r.env(extra), stdin, &out, &limited{buf: &errb, n: 4096}); err != nil {
		msg := gitMessage(errb.String())
		if ctx.Err() != nil {
			return out.String(), fmt.Errorf("git %s: timed out after %s", args[0], timeout)
		}
		if msg == "" {
			return out.String(), fmt.Errorf("git %s: %w", args[0], err)
		}
		return out.String(), fmt.Errorf("git %s: %s", args[0], msg)
	}
	return out.String(), nil
}

// limited keeps the first n bytes written to it.
type limited struct {
	buf *bytes.Buffer
	n   int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// gitMessage shortens what git (or ssh) printed on failure to its last
// 500 bytes, where the reason is, without ssh's banner of '@' lines; a
// host key that is not the pinned one is said plainly.
func gitMessage(stderr string) string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "@") {
			lines = append(lines, l)
		}
	}
	msg := strings.Join(lines, "; ")
	switch {
	case strings.Contains(msg, "Identity file") && strings.Contains(msg, "not accessible"):
		return "ssh could not read the deploy key file it was given (" + sshLine(lines, "Identity file") + ")"
	case strings.Contains(msg, "host key is known for"):
		// ssh found no pinned key for this host at all: the known_hosts
		// file is missing, or its line names another host or port.
		return "no pinned host key names this remote's host and port (" + sshLine(lines, "host key is known for") + ")"
	case strings.Contains(msg, "Host key verification failed"):
		return "the SSH remote's host key is not the pinned one (Host key verification failed)"
	}
	if len(msg) > 500 {
		msg = "…" + strings.ToValidUTF8(msg[len(msg)-500:], "")
	}
	return msg
}

// sshLine is the first of lines that holds substr, cut to 200 bytes.
func sshLine(lines []string, substr string) string {
	for _, l := range lines {
		if strings.Contains(l, substr) {
			if len(l) > 200 {
				l = strings.ToValidUTF8(l[:200], "") + "…"
			}
			return l
		}
	}
	return ""
}
