package ui_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/app/notify"
	"backupd/app/redact"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/internal/dbtest"
)

// healthFixture is a store with a failing webhook (a real receiver that
// answers 500), a working one and an e-mail channel never tried, a rule
// on four named groups and one on all devices, and a device that went
// unreachable, its events delivered (or not) by a real worker pass.
type healthFixture struct {
	failing, working, mail int64
	groups                 []int64
}

func newHealthFixture(t *testing.T, e *env) healthFixture {
	t.Helper()
	ctx := context.Background()
	var f healthFixture
	for _, name := range []string{"Tokyo", "Berlin", "São Paulo", "Paris"} {
		g, err := e.store.CreateGroup(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.groups = append(f.groups, g.ID)
	}
	dev, err := e.store.CreateDevice(ctx, db.Device{Name: "edge-r1", Host: "192.0.2.7", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: true, GroupID: &f.groups[1]})
	if err != nil {
		t.Fatal(err)
	}
	down := newHookReceiver(t, "k", http.StatusInternalServerError)
	up := newHookReceiver(t, "k", http.StatusOK)
	channel := func(ch notify.Channel) int64 {
		cfg, sealed, err := notify.ChannelToStore(ch, notify.Sealer(e.sealer))
		if err != nil {
			t.Fatal(err)
		}
		row, err := e.store.CreateNotificationChannel(ctx, db.NotificationChannel{Name: ch.Name, Type: ch.Type, Enabled: true,
			Config: cfg, Secret: sealed, Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		return row.ID
	}
	f.failing = channel(notify.Channel{Type: notify.TypeWebhook, Name: "noc hook", Secret: []byte("k"),
		Webhook: &notify.WebhookConfig{URL: down.srv.URL + "/hook?token=tok-HEALTH-1"}})
	f.working = channel(notify.Channel{Type: notify.TypeWebhook, Name: "ops hook", Secret: []byte("k"),
		Webhook: &notify.WebhookConfig{URL: up.srv.URL + "/hook"}})
	f.mail = channel(notify.Channel{Type: notify.TypeEmail, Name: "ops mail",
		Email: &notify.EmailConfig{Host: "127.0.0.1", Port: 2525, Security: notify.SecurityNone, From: "backupd@example.com", To: []string{"ops@example.com"}}})
	if _, err := e.store.CreateNotificationRule(ctx, db.NotificationRule{Name: "sites", Enabled: true, Scope: db.RuleScopeGroups,
		GroupIDs: f.groups, Events: []outbox.EventKind{outbox.EventDeviceUnreachable}, ChannelIDs: []int64{f.failing, f.working}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateNotificationRule(ctx, db.NotificationRule{Name: "everything", Enabled: true, Scope: db.RuleScopeAll,
		Events: outbox.EventKinds, ChannelIDs: []int64{f.mail}, IncludeDiff: true, FailureThreshold: 3}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.RecordReachability(ctx, dev.ID, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The e-mail channel's delivery waits (its server is never asked):
	// only the webhooks are sent.
	if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE deliveries SET next_attempt_at = ? WHERE channel_id = ?`,
		time.Now().Add(time.Hour).UTC().Format(db.BackupTimeFormat), f.mail); err != nil {
		t.Fatal(err)
	}
	w := notify.NewWorker(e.store, notify.Opener(e.sealer), notify.WorkerOptions{Window: time.Nanosecond, Secrets: redact.NewKeyring(e.sealer)})
	if n, err := w.Pass(ctx); err != nil || n != 2 {
		t.Fatalf("worker pass claimed %d: %v", n, err)
	}
	return f
}

// The channel list says how each channel's deliveries go (working, or
// failing since when, with the error and the next retry), a rule on groups
// names them (to a user who sees them all), and a failed delivery in a
// channel's log says when it is tried again. No URL token on any page.
func TestNotificationHealth(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	f := newHealthFixture(t, e)

	p := b.get("/notifications")
	expect(t, "list", p, http.StatusOK, "")
	row := func(name string) string {
		t.Helper()
		i := strings.Index(p.body, `">`+name+`</a>`)
		if i < 0 {
			t.Fatalf("no row of %s", name)
		}
		r := p.body[i:]
		return r[:strings.Index(r, "</tr>")]
	}
	for _, c := range []struct{ name, health, want string }{
		{"noc hook", "failing", "Failing since"},
		{"ops hook", "ok", "Working"},
		{"ops mail", "", "Nothing tried yet"},
	} {
		r := row(c.name)
		if !strings.Contains(r, `data-health="`+c.health+`"`) || !strings.Contains(r, c.want) {
			t.Errorf("%s: health cell %s", c.name, r)
		}
	}
	failing := row("noc hook")
	for _, want := range []string{"answered 500 Internal Server Error", "receiver says no thanks", "next retry", `class="meta notif-retry"`} {
		if !strings.Contains(failing, want) {
			t.Errorf("failing channel's row lacks %q: %s", want, failing)
		}
	}
	if strings.Contains(p.body, "tok-HEALTH-1") {
		t.Error("the list shows a URL token")
	}
	expectBody(t, "rule on groups", p, "Berlin, Paris, São Paulo and 1 more, with subgroups")

	// A user limited to one of the groups sees how many, not their names.
	e.createUser("scoped", "scoped-password-1", auth.RoleOperator, false, f.groups[1])
	s := e.browser()
	s.mustLogin("scoped", "scoped-password-1")
	p = s.get("/notifications")
	expectBody(t, "scoped list", p, "4 groups with subgroups")
	if strings.Contains(p.body, "São Paulo") {
		t.Error("a scoped user sees the names of groups outside its scope")
	}

	p = b.get("/notifications/channels/" + strconv.FormatInt(f.failing, 10))
	expectBody(t, "delivery log", p, `class="meta notif-retry"`, "retries", `id="ch-skip-warning" hidden`)
	if strings.Contains(p.body, "tok-HEALTH-1") {
		t.Error("the channel page shows the URL token")
	}
}

// lineCheck is JavaScript that lists the table cells (of selector) whose
// text does not sit on one line (header cells) or wraps to fewer than two
// characters per line (body cells: a short word such as 已启用 broken in
// two), measured as rendered: the distinct line boxes of the cell's text.
const lineCheck = `(function (selector) {
  function lines(cell) {
    var r = document.createRange();
    r.selectNodeContents(cell);
    var tops = new Set();
    Array.from(r.getClientRects()).forEach(function (b) { if (b.width > 0) tops.add(Math.round(b.top)); });
    return tops.size;
  }
  var bad = [];
  document.querySelectorAll(selector).forEach(function (cell) {
    var text = cell.innerText.trim();
    var n = lines(cell);
    var chars = Array.from(text.replace(/\s+/g, "")).length;
    if (cell.closest("thead") ? n > 1 : (chars >= 2 && n * 2 > chars)) {
      bad.push(text.slice(0, 30) + " (" + n + " lines, " + Math.round(cell.getBoundingClientRect().width) + "px)");
    }
  });
  return bad.join("; ");
})`

// The Notifications pages in Chinese at 1366×768 in Chromium: every
// column header on one line and no column squeezed to a character per
// line; the warning of skipping TLS verification shows only while the box
// is ticked.
func TestNotificationPagesAt1366InChromium(t *testing.T) {
	e := newEnv(t)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	f := newHealthFixture(t, e)
	b := newTab(t, e, 90*time.Second, 1366, 768)
	b.login("root", "root-password-1")
	b.open("/notifications")
	b.setLang("zh")
	if got := b.eval(`document.querySelector("main h1").textContent`); got != "通知" {
		t.Fatalf("Chinese heading %q", got)
	}
	if w := b.eval(`String(window.innerWidth)`); w != "1366" {
		t.Fatalf("window %s px wide", w)
	}
	b.shot("notifications-zh-1366")
	if bad := b.eval(lineCheck + `("table th, table td")`); bad != "" {
		t.Errorf("/notifications at 1366 px: cells that wrap: %s", bad)
	}
	if got := b.eval(`document.querySelector('#channels-table td[data-health="failing"]').innerText`); !strings.Contains(got, "失败始于") ||
		!strings.Contains(got, "下次重试") {
		t.Errorf("failing channel's health %q", got)
	}

	b.open("/notifications/channels/" + strconv.FormatInt(f.failing, 10))
	b.shot("notifications-channel-zh-1366")
	if bad := b.eval(lineCheck + `("table th, table td")`); bad != "" {
		t.Errorf("channel page at 1366 px: cells that wrap: %s", bad)
	}
	// Rendered height, not only the hidden property: the style must honour it.
	warning := func() string {
		return b.eval(`document.getElementById("ch-skip-warning").getBoundingClientRect().height > 0 ? "shown" : "hidden"`)
	}
	if got := warning(); got != "hidden" {
		t.Errorf("skip-verify warning %s while the box is not ticked", got)
	}
	b.run("tick skip verify", chromedp.Click(chromedp.CSS("#ch-skip-verify")))
	if got := warning(); got != "shown" {
		t.Errorf("skip-verify warning %s while the box is ticked", got)
	}
	b.run("untick skip verify", chromedp.Click(chromedp.CSS("#ch-skip-verify")))
	if got := warning(); got != "hidden" {
		t.Errorf("skip-verify warning %s after unticking", got)
	}
	b.checkConsole()
}
