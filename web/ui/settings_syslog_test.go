package ui_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/backup"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/web/ui"
)

// withSyslog starts a real syslog listener on 127.0.0.1 for the web
// interface, as serve --syslog-listen does.
func withSyslog(t *testing.T, out **backup.SyslogTrigger) func(*db.Store, *backup.Engine, *ui.Deps) {
	return func(store *db.Store, engine *backup.Engine, deps *ui.Deps) {
		st, err := backup.StartSyslog(context.Background(), store, engine, backup.SyslogOptions{Addr: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		deps.Syslog, *out = st, st
	}
}

func storedSyslogPatterns(t *testing.T, e *env) []db.SyslogPattern {
	t.Helper()
	ps, err := e.store.SyslogPatterns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// waitSyslog waits (bounded) until the listener's counters satisfy ok.
func waitSyslog(t *testing.T, st *backup.SyslogTrigger, what string, ok func(backup.SyslogStats) bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !ok(st.Stats()); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %+v", what, st.Stats())
		}
	}
}

// The settings page shows the running listener and edits the user
// patterns: a refused pattern says which line and why (English and
// Chinese) and stores nothing; the form needs the CSRF token and
// settings.update; saved patterns apply to the running listener at once.
func TestSyslogPatternsForm(t *testing.T) {
	var st *backup.SyslogTrigger
	e := newEnv(t, withSyslog(t, &st))
	b := adminBrowser(t, e)

	p := b.get("/settings")
	expect(t, "settings", p, http.StatusOK, "")
	expectBody(t, "settings", p, "On, receiving on "+st.Addr()+" (UDP and TCP)", `id="syslog-form"`, "cisco-sys-config-i")

	// The message a user pattern is for, sent before it exists: read,
	// not recognised.
	const saved = "<189>Nov 25 14:00:00 sw1 cfgmgr: configuration saved by admin"
	send := func() {
		c, err := net.Dial("udp", st.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(saved)); err != nil {
			t.Fatal(err)
		}
	}
	send()
	waitSyslog(t, st, "the first message", func(s backup.SyslogStats) bool { return s.Received == 1 })
	if s := st.Stats(); s.Matched != 0 {
		t.Fatalf("matched with no user pattern: %+v", s)
	}

	refused := []struct {
		text, en, zh string
	}{
		{"ok: foo\nbad: (unclosed\n", "Line 2: not a valid regular expression (missing closing ): `(unclosed`).", "第 2 行：不是有效的正则表达式"},
		{"no colon here", "Line 1: write the pattern&#39;s name, a colon, then its regular expression.", "第 1 行：请写规则名称、冒号，然后是正则表达式。"},
		{"\n\ncisco-sys-config-i: foo", "Line 3: the name &#34;cisco-sys-config-i&#34; is already used, by a built-in pattern or an earlier line.", "第 3 行：名称"},
		{"everything: .*", "Line 1: the regular expression matches an empty message, so every message would trigger a backup.", "第 1 行：该正则表达式匹配空消息"},
		{": foo", "Line 1: the pattern needs a name before the colon.", "第 1 行：冒号前需要规则名称。"},
		{"empty:   ", "Line 1: the regular expression after the colon is empty.", "第 1 行：冒号后的正则表达式为空。"},
		{"long: " + strings.Repeat("a", 513), "Line 1: the regular expression is longer than 512 characters.", "第 1 行：正则表达式超过 512 个字符。"},
	}
	for _, c := range refused {
		b.get("/settings")
		p := b.post("/settings/syslog", url.Values{"patterns": {c.text}})
		expect(t, "refused patterns", p, http.StatusUnprocessableEntity, "")
		expectBody(t, "refused patterns", p, `id="syslog-error"`, c.en)
		zh := e.browser()
		zh.header.Set("Accept-Language", "zh-CN")
		zh.mustLogin("root", "root-password-1")
		zh.get("/settings")
		p = zh.post("/settings/syslog", url.Values{"patterns": {c.text}})
		expect(t, "refused patterns (zh)", p, http.StatusUnprocessableEntity, "")
		expectBody(t, "refused patterns (zh)", p, c.zh)
		if got := storedSyslogPatterns(t, e); len(got) != 0 {
			t.Fatalf("refused patterns stored: %v", got)
		}
	}

	// No token, no change.
	b.get("/settings")
	expect(t, "save without token", b.post("/settings/syslog", url.Values{"csrf": {""}, "patterns": {"x: y"}}), http.StatusForbidden, "")
	// An operator may look, not change.
	e.createUser("op", "op-password-12", auth.RoleOperator, true)
	op := e.browser()
	op.mustLogin("op", "op-password-12")
	expect(t, "operator sees settings", op.get("/settings"), http.StatusOK, "")
	expect(t, "operator saves", op.post("/settings/syslog", url.Values{"patterns": {"x: y"}}), http.StatusForbidden, "")
	if got := storedSyslogPatterns(t, e); len(got) != 0 {
		t.Fatalf("patterns stored without a valid token or permission: %v", got)
	}

	b.get("/settings")
	p = b.post("/settings/syslog", url.Values{"patterns": {"extreme-saved:  cfgmgr: .*saved\r\n\r\nhp-write: write mem\r\n"}})
	expect(t, "save", p, http.StatusSeeOther, "/settings?done=syslog_applied#syslog")
	want := []db.SyslogPattern{{Name: "extreme-saved", Pattern: "cfgmgr: .*saved"}, {Name: "hp-write", Pattern: "write mem"}}
	if got := storedSyslogPatterns(t, e); !reflect.DeepEqual(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	if a := lastAudit(t, e, "settings.update"); a.TargetID != db.SettingSyslogPatterns {
		t.Fatalf("audit %+v", a)
	}
	p = b.get("/settings?done=syslog_applied")
	expectBody(t, "after saving", p, "Syslog patterns saved and applied to the running listener.",
		"extreme-saved: cfgmgr: .*saved\nhp-write: write mem\n")

	// Applied without a restart: the same message is now recognised.
	send()
	waitSyslog(t, st, "the second message, recognised", func(s backup.SyslogStats) bool { return s.Received == 2 && s.Matched == 1 })
	expectBody(t, "counters", b.get("/settings"), `<dd data-field="matched">1</dd>`, `<dd data-field="unknown">1</dd>`, `<dd data-field="quiet">60 s</dd>`,
		`<dd data-field="dropped-changes">0</dd>`, `<dd data-field="dropped">0</dd>`, `<dd data-field="evicted">0</dd>`,
		"Change messages dropped (over their device&#39;s rate cap, or too many devices waiting)")
}

// Without a listener the page says how to turn it on, and saved patterns
// wait for it.
func TestSyslogPatternsWithoutListener(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	p := b.get("/settings")
	expectBody(t, "settings", p, "Off. Start the server with --syslog-listen 0.0.0.0:5514")
	p = b.post("/settings/syslog", url.Values{"patterns": {"extreme-saved: cfgmgr: .*saved"}})
	expect(t, "save", p, http.StatusSeeOther, "/settings?done=syslog_saved#syslog")
	expectBody(t, "saved", b.get("/settings?done=syslog_saved"), "they apply once the server runs with --syslog-listen")
	if got := storedSyslogPatterns(t, e); len(got) != 1 {
		t.Fatalf("stored %v", got)
	}
}

// A backup the device's own log triggered says so, in the device history
// and on the jobs page, in English and Chinese.
func TestSyslogTriggerShown(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	bk := f.version(t, e, f.coreDev, time.Hour, "hostname core-r1\n", false, "")
	if _, err := dbtest.Poke(t, e.store).ExecContext(context.Background(), `UPDATE backups SET trigger = ? WHERE id = ?`, queue.TriggerSyslog, bk.ID); err != nil {
		t.Fatal(err)
	}
	jobs, err := e.store.EnqueueJobs(context.Background(), []queue.JobRequest{{DeviceID: f.coreDev.ID, Trigger: queue.TriggerSyslog,
		NotBefore: time.Now().Add(time.Hour)}})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("queue: %v", err)
	}
	b := adminBrowser(t, e)
	row := regexp.MustCompile(`<td class="nowrap">([^<]*)</td>`)
	cells := func(p page) string { return fmt.Sprint(row.FindAllStringSubmatch(p.body, -1)) }
	p := b.get(devicePath(f.coreDev))
	if !strings.Contains(cells(p), "[<td class=\"nowrap\">syslog</td> syslog]") {
		t.Errorf("device history lacks the trigger syslog: %s", cells(p))
	}
	expectBody(t, "jobs", b.get("/jobs?view=queued"), `<td data-field="trigger">syslog</td>`)
	b.header.Set("Accept-Language", "zh-CN")
	expectBody(t, "device (zh)", b.get(devicePath(f.coreDev)), `<td class="nowrap">日志触发</td>`)
	expectBody(t, "jobs (zh)", b.get("/jobs?view=queued"), `<td data-field="trigger">日志触发</td>`)
}
