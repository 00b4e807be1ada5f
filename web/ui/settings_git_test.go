package ui_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"backupd/app/auth"
	"backupd/app/secret"
	"backupd/db"
	"backupd/internal/dbtest"
)

func gitForm(remote, knownHosts, key, token string) url.Values {
	return url.Values{"enabled": {"1"}, "groups": {"1"}, "author_name": {"Net Team"}, "author_email": {"net@example.com"},
		"remote_url": {remote}, "branch": {"configs"}, "known_hosts": {knownHosts}, "ssh_key": {key},
		"https_username": {"ci"}, "https_token": {token}}
}

// The settings page edits the git mirror: refused settings say why (in
// English and Chinese) and store nothing; the deploy key and the token
// are sealed and never shown again; the form needs the CSRF token and
// settings.update; the last push's outcome is shown.
func TestGitMirrorSettingsForm(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	ctx := context.Background()
	p := b.get("/settings")
	expect(t, "settings", p, http.StatusOK, "")
	expectBody(t, "settings", p, `id="git-form"`, "Git mirror", "None yet")

	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(block))
	signer, _ := ssh.NewSignerFromKey(priv)
	hosts := "[git.example.com]:2222 " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	const remote = "ssh://git@git.example.com:2222/net.git"

	refused := []struct {
		form   url.Values
		en, zh string
	}{
		{gitForm(remote, "", keyPEM, ""), "An SSH remote needs its host key pinned", "SSH 远程需要固定主机密钥"},
		{gitForm(remote, "not a key", keyPEM, ""), "An SSH remote needs its host key pinned", "SSH 远程需要固定主机密钥"},
		{gitForm(remote, hosts, "", ""), "An SSH remote needs a deploy key.", "SSH 远程需要部署密钥。"},
		{gitForm(remote, hosts, "-----BEGIN nonsense", ""), "The deploy key is not an unencrypted SSH private key.", "部署密钥不是未加密的 SSH 私钥。"},
		{gitForm("https://ci:tok@git.example.com/net.git", "", "", ""), "Put no password or token in the remote URL", "远程 URL 中不能包含密码或令牌"},
		{gitForm("ftp://git.example.com/net.git", "", "", ""), "The remote is not a URL backupd can push to", "backupd 无法推送到该远程地址"},
		{gitForm("-oProxyCommand=touch /tmp/x", "", "", ""), "The remote is not a URL backupd can push to", "backupd 无法推送到该远程地址"},
		{gitForm("ext::/tmp/run-me", hosts, keyPEM, ""), "Remote helpers such as ext:: and fd:: are not taken", "不接受 ext::、fd:: 等远程助手"},
		{gitForm("fd::7", hosts, keyPEM, ""), "Remote helpers such as ext:: and fd:: are not taken", "不接受 ext::、fd:: 等远程助手"},
		{gitForm("file:///srv/net.git", "", "", ""), "only when the server runs with --git-allow-local-remote", "仅在服务器以 --git-allow-local-remote"},
		{gitForm("/srv/net.git", "", "", ""), "only when the server runs with --git-allow-local-remote", "仅在服务器以 --git-allow-local-remote"},
		{gitForm("https://169.254.169.254/net.git", "", "", ""), "link-local or cloud metadata address", "链路本地地址或云元数据地址"},
		{gitForm("git@[fd00:ec2::254]:net.git", hosts, keyPEM, ""), "link-local or cloud metadata address", "链路本地地址或云元数据地址"},
	}
	zhBrowser := func() *browser {
		zh := e.browser()
		zh.header.Set("Accept-Language", "zh-CN")
		zh.mustLogin("root", "root-password-1")
		return zh
	}
	for _, c := range refused {
		b.get("/settings")
		p := b.post("/settings/git", cloneForm(c.form))
		expect(t, "refused git settings", p, http.StatusUnprocessableEntity, "")
		expectBody(t, "refused git settings", p, `id="git-error"`, c.en)
		if strings.Contains(p.body, "PRIVATE KEY") {
			t.Fatal("a refused form shows the deploy key again")
		}
		zh := zhBrowser()
		zh.get("/settings")
		expectBody(t, "refused git settings (zh)", zh.post("/settings/git", cloneForm(c.form)), c.zh)
		if gm, err := e.store.GitMirrorSettings(ctx); err != nil || gm.RemoteURL != "" || gm.Enabled {
			t.Fatalf("refused settings stored: %+v %v", gm, err)
		}
	}

	// No token, no change; an operator may look, not change.
	b.get("/settings")
	f := gitForm(remote, hosts, keyPEM, "")
	f.Set("csrf", "")
	expect(t, "save without token", b.post("/settings/git", f), http.StatusForbidden, "")
	e.createUser("op", "op-password-12", auth.RoleOperator, true)
	op := e.browser()
	op.mustLogin("op", "op-password-12")
	expect(t, "operator sees settings", op.get("/settings"), http.StatusOK, "")
	expect(t, "operator saves", op.post("/settings/git", gitForm(remote, hosts, keyPEM, "")), http.StatusForbidden, "")
	if gm, _ := e.store.GitMirrorSettings(ctx); gm.RemoteURL != "" {
		t.Fatalf("settings stored without a valid token or permission: %+v", gm)
	}

	b.get("/settings")
	expect(t, "save", b.post("/settings/git", gitForm(remote, hosts, keyPEM, "s3cret-token")), http.StatusSeeOther, "/settings?done=git_saved#git")
	gm, err := e.store.GitMirrorSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !gm.Enabled || !gm.Groups || gm.RemoteURL != remote || gm.KnownHosts != hosts || gm.Branch != "configs" ||
		gm.AuthorName != "Net Team" || gm.AuthorEmail != "net@example.com" || gm.HTTPSUsername != "ci" {
		t.Fatalf("stored: %+v", gm)
	}
	if k, err := e.sealer.Open(gm.SSHKey, secret.PurposeGitKey); err != nil || strings.TrimSpace(k) != strings.TrimSpace(keyPEM) {
		t.Fatalf("deploy key not sealed as typed: %v", err)
	}
	if tok, err := e.sealer.Open(gm.HTTPSToken, secret.PurposeGitToken); err != nil || tok != "s3cret-token" {
		t.Fatalf("token not sealed as typed: %v", err)
	}
	var raw string
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT value FROM settings WHERE key = ?`, db.SettingGitMirror).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "PRIVATE KEY") || strings.Contains(raw, "s3cret-token") {
		t.Fatal("a secret is stored in the clear")
	}
	p = b.get("/settings?done=git_saved")
	expectBody(t, "saved", p, "Git mirror settings saved.", "Stored (sealed, never shown again)", `id="git-clear-key"`, `id="git-clear-token"`, remote)
	if strings.Contains(p.body, "PRIVATE KEY") || strings.Contains(p.body, "s3cret-token") {
		t.Fatal("the page shows a secret")
	}

	// Saving again with the secrets left empty keeps them; clearing the
	// token removes it.
	f = gitForm(remote, hosts, "", "")
	f.Set("clear_https_token", "1")
	expect(t, "save again", b.post("/settings/git", f), http.StatusSeeOther, "/settings?done=git_saved#git")
	if gm2, _ := e.store.GitMirrorSettings(ctx); string(gm2.SSHKey) != string(gm.SSHKey) || gm2.HTTPSToken != nil {
		t.Fatalf("after saving with empty secrets: key kept %v, token %v", string(gm2.SSHKey) == string(gm.SSHKey), gm2.HTTPSToken)
	}

	// The last push's outcome.
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	if err := e.store.PutSetting(ctx, db.SettingGitPush, db.GitPushStatus{At: at, Error: "the SSH remote's host key is not the pinned one"}); err != nil {
		t.Fatal(err)
	}
	expectBody(t, "push failed", b.get("/settings"), `id="git-push-error"`, "host key is not the pinned one", "Failed")
	expectBody(t, "push failed (zh)", zhBrowser().get("/settings"), "失败", "Git 镜像")

	// A push refused for a commit backupd did not write says which, and
	// what to do; its text is escaped.
	foreign := db.GitPushStatus{At: at, Error: "git mirror: the remote branch main has commit 1a2b3c4d5e6f …",
		Foreign: &db.GitForeignCommit{Where: "remote", Commit: "1a2b3c4d5e6f", Author: "Alice <alice@example.com>",
			Subject: "<b>add README.hand</b>", Count: 1, Base: "9f8e7d6c5b4a"}}
	if err := e.store.PutSetting(ctx, db.SettingGitPush, foreign); err != nil {
		t.Fatal(err)
	}
	p = b.get("/settings")
	expectBody(t, "foreign commit", p, `id="git-foreign"`, "1a2b3c4d5e6f", "Alice &lt;alice@example.com&gt;",
		"&lt;b&gt;add README.hand&lt;/b&gt;", "did not write", "9f8e7d6c5b4a", "another branch or remote")
	if strings.Contains(p.body, "<b>add README") {
		t.Fatal("the commit's subject is not escaped")
	}
	expectBody(t, "foreign commit (zh)", zhBrowser().get("/settings"), `id="git-foreign"`, "推送被拒绝", "1a2b3c4d5e6f")
	foreign.Foreign.Where = "clone"
	if err := e.store.PutSetting(ctx, db.SettingGitPush, foreign); err != nil {
		t.Fatal(err)
	}
	expectBody(t, "foreign commit in the clone", b.get("/settings"), "its clone on this server", "git reset --hard 9f8e7d6c5b4a")
	foreign.OK, foreign.Error = true, ""
	if err := e.store.PutSetting(ctx, db.SettingGitPush, foreign); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/settings"); strings.Contains(p.body, `id="git-foreign"`) {
		t.Fatal("a good push still shows the refusal")
	}
}
