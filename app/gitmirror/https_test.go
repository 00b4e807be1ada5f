package gitmirror_test

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
)

// A push over HTTP(S) with a token: the real git http-backend behind
// basic authentication; the token reaches the server, never the URL, the
// mirror's files or the log.
func TestPushWithToken(t *testing.T) {
	const token = "glpat-t0ken-not-in-logs"
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	bare := bareRepo(t)
	git(t, bare, "config", "http.receivepack", "true")
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(bare), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1"}}
	var refused atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ci-bot" || p != token {
			refused.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	defer srv.Close()
	url := srv.URL + "/" + filepath.Base(bare)
	gm := db.GitMirror{Enabled: true, RemoteURL: url, HTTPSUsername: "ci-bot",
		HTTPSToken: e.sealer.Seal(token, secret.PurposeGitToken)}
	e.pushRun(gm, bare, r1, "r1", "over HTTP")
	// A wrong token: refused, reported, and the token is nowhere.
	gm.HTTPSToken = e.sealer.Seal("wrong-"+token, secret.PurposeGitToken)
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, gm); err != nil {
		t.Fatal(err)
	}
	e.sims[r1].Mutate(2)
	e.run(queue.TriggerSchedule)
	e.sync()
	err = e.mirror.Push(e.ctx)
	if err == nil {
		t.Fatal("push with a wrong token succeeded")
	}
	st, _ := e.mirror.PushStatus(e.ctx)
	for _, where := range []string{err.Error(), st.Error, e.log.String(), git(t, e.mirror.Dir(), "config", "--list", "--local")} {
		if strings.Contains(where, token) {
			t.Fatalf("the token leaked: %s", where)
		}
	}
}
