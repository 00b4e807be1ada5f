package ui_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"backupd/db"
	"backupd/internal/dbtest"
)

// The settings page lists the nodes serving the store with their role:
// the leader, a follower, one stopped and one silent, in both languages.
func TestSettingsShowsNodes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b := adminBrowser(t, e)
	p := b.get("/settings")
	expect(t, "settings", p, http.StatusOK, "")
	expectBody(t, "settings without nodes", p, `id="nodes-title"`, "No node has reported yet.")

	start := time.Now().Add(-time.Hour)
	since := time.Now().Add(-time.Minute)
	for _, n := range []db.Node{
		{ID: "aaaaaaaa-lead", Hostname: "node-a", Version: "1.2.3", StartedAt: start, Leader: true, LeaderSince: &since},
		{ID: "bbbbbbbb-follow", Hostname: "node-b", Version: "1.2.3", StartedAt: start},
		{ID: "cccccccc-stop", Hostname: "node-c", Version: "1.2.2", StartedAt: start},
		{ID: "dddddddd-silent", Hostname: "node-d", Version: "1.2.3", StartedAt: start},
	} {
		if err := e.store.Heartbeat(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.store.NodeStopped(ctx, "cccccccc-stop"); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute).UTC().Format(db.TimeFormat)
	if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE nodes SET heartbeat_at = ? WHERE id = 'dddddddd-silent'`, old); err != nil {
		t.Fatal(err)
	}
	p = b.get("/settings")
	expect(t, "settings", p, http.StatusOK, "")
	expectBody(t, "settings with nodes", p, `id="nodes"`,
		`data-node="aaaaaaaa-lead"`, "node-a", "<td>Leader</td>",
		"node-b", "<td>Follower</td>", "node-c", "<td>Stopped</td>", "node-d", "<td>Not responding</td>", "1.2.2")

	zh := e.browser()
	zh.header.Set("Accept-Language", "zh-CN")
	zh.mustLogin("root", "root-password-1")
	p = zh.get("/settings")
	expectBody(t, "settings in Chinese", p, "节点", "<td>主节点</td>", "<td>从节点</td>", "<td>已停止</td>", "<td>无响应</td>")
}
