package ui_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/notify"
	"backupd/db"
	"backupd/db/outbox"
)

// hookReceiver is a webhook receiver that checks the signature of every
// delivery against its secret and keeps what it got.
type hookReceiver struct {
	srv    *httptest.Server
	secret string
	status int
	mu     sync.Mutex
	got    []hookDelivery
}

type hookDelivery struct {
	signed   bool // the signature header was present and right
	header   http.Header
	query    url.Values // the request URL's query, as the receiver got it
	envelope notify.Envelope
}

func newHookReceiver(t *testing.T, secret string, status int) *hookReceiver {
	h := &hookReceiver{secret: secret, status: status}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		mac := hmac.New(sha256.New, []byte(h.secret))
		mac.Write(body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		d := hookDelivery{signed: hmac.Equal([]byte(r.Header.Get("X-Backupd-Signature")), []byte(want)), header: r.Header.Clone(),
			query: r.URL.Query()}
		if err := json.Unmarshal(body, &d.envelope); err != nil {
			t.Errorf("receiver: body is not an envelope: %v", err)
		}
		h.mu.Lock()
		h.got = append(h.got, d)
		h.mu.Unlock()
		w.WriteHeader(h.status)
		io.WriteString(w, "receiver says no thanks")
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) deliveries() []hookDelivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

func zhBrowser(t *testing.T, e *env) *browser {
	t.Helper()
	zh := e.browser()
	zh.header.Set("Accept-Language", "zh-CN")
	zh.mustLogin("root", "root-password-1")
	return zh
}

func webhookForm(name, hookURL, secret string) url.Values {
	return url.Values{"name": {name}, "type": {"webhook"}, "enabled": {"1"}, "language": {"en"},
		"url": {hookURL}, "headers": {"X-Team: netops"}, "webhook_secret": {secret}}
}

// The channel's pages never show a secret once saved; each secret is
// stored sealed; Send test really delivers, signed with the stored
// secret; edits keep a secret left blank and drop a cleared one.
func TestNotificationChannels(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	ctx := context.Background()
	const hmacSecret = "hmac-Secret-7f3a9c"

	p := b.get("/notifications")
	expect(t, "notifications page", p, http.StatusOK, "")
	expectBody(t, "notifications page", p, `id="channels-empty"`, `href="/notifications"`, "Create a channel first")

	recv := newHookReceiver(t, hmacSecret, http.StatusOK)
	b.get("/notifications/channels/new")
	p = b.post("/notifications/channels", webhookForm("ops hook", recv.srv.URL+"/hook", hmacSecret))
	expect(t, "create webhook channel", p, http.StatusSeeOther, "/notifications/channels/1?notice=channel_created")
	stored, err := e.store.GetNotificationChannel(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Secret) == 0 || strings.Contains(string(stored.Secret), hmacSecret) {
		t.Fatalf("webhook secret not stored sealed: %q", stored.Secret)
	}
	if opened, err := notify.ChannelFromStore(stored, notify.Opener(e.sealer)); err != nil || string(opened.Secret) != hmacSecret ||
		opened.Webhook.Headers["X-Team"] != "netops" {
		t.Fatalf("sealed secret opens to %+v, %v", opened, err)
	}
	if !strings.Contains(string(stored.Config), recv.srv.URL+"/hook") || !strings.Contains(string(stored.Config), "X-Team") ||
		strings.Contains(string(stored.Config), "netops") {
		t.Fatalf("config %s", stored.Config)
	}
	if a := lastAudit(t, e, "notification_channel.create"); strings.Contains(auditText(t, a), hmacSecret) || a.TargetID != "1" {
		t.Fatalf("audit %+v", a)
	}

	// A chat channel: its incoming-webhook URL is the secret.
	const chatPath = "/services/T000/B000/XXXXchatTOKENxxxx"
	b.get("/notifications/channels/new")
	p = b.post("/notifications/channels", url.Values{"name": {"team chat"}, "type": {"slack"}, "enabled": {"1"},
		"language": {"zh"}, "chat_url": {"https://hooks.example.invalid" + chatPath}})
	expect(t, "create slack channel", p, http.StatusSeeOther, "/notifications/channels/2?notice=channel_created")
	// An e-mail channel with an SMTP password.
	const smtpPassword = "smtp-Pa55word-q8"
	b.get("/notifications/channels/new")
	p = b.post("/notifications/channels", url.Values{"name": {"mail"}, "type": {"email"}, "enabled": {"1"}, "language": {"en"},
		"host": {"127.0.0.1"}, "port": {"2525"}, "security": {"none"}, "username": {"backupd"}, "smtp_password": {smtpPassword},
		"from": {"backupd@example.com"}, "to": {"ops@example.com, noc@example.com"}})
	expect(t, "create e-mail channel", p, http.StatusSeeOther, "/notifications/channels/3?notice=channel_created")

	for _, path := range []string{"/notifications", "/notifications/channels/1", "/notifications/channels/2",
		"/notifications/channels/3", "/notifications/channels/new", "/audit"} {
		p := b.get(path)
		expect(t, path, p, http.StatusOK, "")
		for _, s := range []string{hmacSecret, chatPath, "XXXXchatTOKEN", smtpPassword, "netops"} {
			if strings.Contains(p.body, s) {
				t.Errorf("%s shows a secret %q", path, s)
			}
		}
	}
	p = b.get("/notifications/channels/1")
	expectBody(t, "webhook channel", p, "Set — leave blank to keep it.", `name="clear_webhook_secret"`, `value="X-Team"`, "Value set — leave blank to keep it.",
		`id="delivery-log-empty"`, `id="ch-skip-warning"`)
	p = b.get("/notifications/channels/3")
	expectBody(t, "e-mail channel", p, `value="127.0.0.1"`, `value="2525"`, "ops@example.com\nnoc@example.com", `name="clear_smtp_password"`)

	// Send test: delivered now, signed with the stored secret.
	p = b.post("/notifications/channels/1/test", nil)
	expect(t, "send test", p, http.StatusOK, "")
	expectBody(t, "send test", p, `id="channel-test-result" data-ok="1"`, "The test was delivered. Answer: 200")
	got := recv.deliveries()
	if len(got) != 1 || !got[0].signed || got[0].header.Get("X-Team") != "netops" ||
		len(got[0].envelope.Events) != 1 || got[0].envelope.Events[0].Kind != "notification.test" {
		t.Fatalf("receiver got %+v", got)
	}
	if a := lastAudit(t, e, "notification_channel.test"); a.Details["ok"] != true {
		t.Fatalf("test audit %+v", a)
	}

	// Edit, secret left blank: kept (the next test is signed with it).
	p = b.post("/notifications/channels/1", url.Values{"name": {"ops webhook"}, "enabled": {"1"}, "language": {"zh"},
		"url": {recv.srv.URL + "/hook2"}, "headers": {""}, "header_name": {"X-Team"}, "header_value": {""}, "header_remove": {"X-Team"}})
	expect(t, "edit webhook", p, http.StatusSeeOther, "/notifications/channels/1?notice=channel_updated")
	expectBody(t, "send test after edit", b.post("/notifications/channels/1/test", nil), `data-ok="1"`)
	got = recv.deliveries()
	if len(got) != 2 || !got[1].signed || got[1].header.Get("X-Team") != "" {
		t.Fatalf("after the edit the receiver got %+v", got[len(got)-1])
	}
	if a := lastAudit(t, e, "notification_channel.update"); !slices.Equal(anyStrings(a.Details["fields"]), []string{"name", "language", "settings", "url", "headers"}) {
		t.Fatalf("update audit %+v", a.Details)
	}

	// Cleared: deliveries are no longer signed.
	b.get("/notifications/channels/1")
	p = b.post("/notifications/channels/1", url.Values{"name": {"ops webhook"}, "enabled": {"1"}, "language": {"zh"},
		"url": {recv.srv.URL + "/hook2"}, "clear_webhook_secret": {"1"}})
	expect(t, "clear secret", p, http.StatusSeeOther, "/notifications/channels/1?notice=channel_updated")
	c, _ := e.store.GetNotificationChannel(ctx, 1)
	if _, info, _ := notify.ChannelSettings(c); info.HasSecret { // its URL stays sealed
		t.Fatalf("cleared secret still stored")
	}
	b.post("/notifications/channels/1/test", nil)
	if got = recv.deliveries(); len(got) != 3 || got[2].signed || got[2].header.Get("X-Backupd-Signature") != "" {
		t.Fatalf("unsigned delivery expected, got %+v", got[2].header)
	}

	// A receiver that refuses: the answer and the error show, no secret.
	bad := newHookReceiver(t, "", http.StatusInternalServerError)
	b.get("/notifications/channels/new")
	p = b.post("/notifications/channels", webhookForm("broken", bad.srv.URL+"/x?token=QUERYsecret", "k"))
	expect(t, "create failing channel", p, http.StatusSeeOther, "/notifications/channels/4?notice=channel_created")
	p = b.post("/notifications/channels/4/test", nil)
	expect(t, "failing test", p, http.StatusOK, "")
	expectBody(t, "failing test", p, `data-ok="0"`, "The test was not delivered.", "Answer: 500", `id="channel-test-error"`)
	if i := strings.Index(p.body, `id="channel-test-result"`); strings.Contains(p.body[i:i+800], "QUERYsecret") {
		t.Errorf("the failing test's error shows the URL's query:\n%s", p.body[i:i+800])
	}
	// Nobody listening: the error says so.
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	b.post("/notifications/channels/4", url.Values{"name": {"broken"}, "enabled": {"1"}, "url": {closedURL}})
	p = b.post("/notifications/channels/4/test", nil)
	expectBody(t, "unreachable receiver", p, `data-ok="0"`, `id="channel-test-error"`)
	zh := zhBrowser(t, e)
	zh.get("/notifications/channels/4")
	expectBody(t, "failing test (zh)", zh.post("/notifications/channels/4/test", nil), "测试未能送达。")
}

// cloneForm copies a form: post sets its csrf field.
func cloneForm(f url.Values) url.Values {
	out := url.Values{}
	for k, v := range f {
		out[k] = slices.Clone(v)
	}
	return out
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func auditText(t *testing.T, a db.AuditEntry) string {
	t.Helper()
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// Refused channel forms say why, in English and Chinese, store nothing
// and never send a typed secret back.
func TestNotificationChannelFormErrors(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	zh := zhBrowser(t, e)
	const typed = "typed-Secret-value-91"
	cases := []struct {
		what   string
		form   url.Values
		status int
		en, zh string
	}{
		{"no name", url.Values{"type": {"webhook"}, "url": {"https://h.example/x"}}, 422, "Enter a name.", "请输入名称。"},
		{"no url", url.Values{"name": {"a"}, "type": {"webhook"}, "webhook_secret": {typed}}, 422, "Enter the URL to send to.", "请输入要发送到的 URL。"},
		{"bad url", url.Values{"name": {"a"}, "type": {"webhook"}, "url": {"ftp://h.example/x"}}, 422, "The URL must start with http:// or https://", "URL 必须以 http:// 或 https:// 开头"},
		{"bad header", url.Values{"name": {"a"}, "type": {"webhook"}, "url": {"https://h.example/x"}, "headers": {"X-Ok: 1\nno colon"}}, 422, "Custom headers, line 2", "自定义请求头第 2 行"},
		{"reserved header", url.Values{"name": {"a"}, "type": {"webhook"}, "url": {"https://h.example/x"}, "headers": {"X-Backupd-Event: x"}}, 422, "The settings are not valid: header X-Backupd-Event: set by backupd", "设置无效：header X-Backupd-Event"},
		{"chat without url", url.Values{"name": {"a"}, "type": {"teams"}}, 422, "Enter the incoming-webhook URL.", "请输入传入 Webhook URL。"},
		{"mail without to", url.Values{"name": {"a"}, "type": {"email"}, "host": {"mx"}, "from": {"a@b.example"}}, 422, "Enter at least one to address.", "请至少输入一个收件人地址。"},
		{"mail user without password", url.Values{"name": {"a"}, "type": {"email"}, "host": {"mx"}, "from": {"a@b.example"}, "to": {"c@d.example"}, "username": {"u"}}, 422, "A user name needs a password.", "填写用户名时需要密码。"},
		{"mail bad port", url.Values{"name": {"a"}, "type": {"email"}, "host": {"mx"}, "port": {"70000"}, "from": {"a@b.example"}, "to": {"c@d.example"}}, 422, "The port must be a number from 1 to 65535.", "端口必须是 1 到 65535 之间的数字。"},
		{"bad type", url.Values{"name": {"a"}, "type": {"pager"}}, 422, "Choose a channel type.", "请选择通道类型。"},
	}
	for _, c := range cases {
		for _, br := range []*browser{b, zh} {
			br.get("/notifications/channels/new")
			p := br.post("/notifications/channels", cloneForm(c.form))
			expect(t, c.what, p, c.status, "")
			want := c.en
			if br == zh {
				want = c.zh
			}
			expectBody(t, c.what, p, `id="channel-errors"`, want)
			if strings.Contains(p.body, typed) {
				t.Errorf("%s: the refused form sends the typed secret back", c.what)
			}
		}
	}
	if cs, _ := e.store.NotificationChannels(context.Background()); len(cs) != 0 {
		t.Fatalf("refused forms stored %d channels", len(cs))
	}
	// A taken name.
	b.get("/notifications/channels/new")
	expect(t, "first", b.post("/notifications/channels", webhookForm("dup", "https://h.example/x", "")), http.StatusSeeOther, "")
	b.get("/notifications/channels/new")
	p := b.post("/notifications/channels", webhookForm("dup", "https://h.example/x", typed))
	expect(t, "duplicate", p, http.StatusConflict, "")
	expectBody(t, "duplicate", p, "A channel named “dup” exists already.", `id="channel-retype"`)
	if strings.Contains(p.body, typed) {
		t.Errorf("duplicate: the typed secret is sent back")
	}
}

// Rules: created, edited and deleted from the form; a channel a rule
// uses cannot be deleted; the delivery log shows what the worker did.
func TestNotificationRules(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	zh := zhBrowser(t, e)
	ctx := context.Background()
	core, err := e.store.CreateGroup(ctx, "Core", nil)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := e.store.CreateDevice(ctx, db.Device{Name: "sw-core-1", Host: "192.0.2.9", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: true, GroupID: &core.ID})
	if err != nil {
		t.Fatal(err)
	}
	b.get("/notifications/channels/new")
	expect(t, "channel", b.post("/notifications/channels", webhookForm("hook", "https://h.example/x", "")), http.StatusSeeOther, "")

	p := b.get("/notifications/rules/new")
	expect(t, "new rule form", p, http.StatusOK, "")
	expectBody(t, "new rule form", p, `id="rule-include-diff" name="include_diff" type="checkbox" value="1" checked`,
		"hashed passwords, SNMP communities", `value="config.changed" checked`, `id="group-`+itoa(core.ID)+`"`)

	refused := []struct {
		what   string
		form   url.Values
		en, zh string
	}{
		{"no events", url.Values{"name": {"r"}, "scope": {"all"}, "channel_ids": {"1"}}, "Choose at least one event.", "请至少选择一个事件。"},
		{"no channels", url.Values{"name": {"r"}, "scope": {"all"}, "events": {"backup.failed"}}, "Choose at least one channel.", "请至少选择一个通道。"},
		{"no groups", url.Values{"name": {"r"}, "scope": {"groups"}, "events": {"backup.failed"}, "channel_ids": {"1"}}, "Choose at least one group.", "请至少选择一个分组。"},
		{"bad threshold", url.Values{"name": {"r"}, "scope": {"all"}, "events": {"backup.failed"}, "channel_ids": {"1"}, "failure_threshold": {"0"}}, "Failures in a row must be a number from 1 to 1000.", "连续失败次数必须是 1 到 1000 之间的数字。"},
		{"unknown device", url.Values{"name": {"r"}, "scope": {"devices"}, "devices": {"nope"}, "events": {"backup.failed"}, "channel_ids": {"1"}}, "Names that match no device you can see (1): nope", "nope"},
		{"unknown channel", url.Values{"name": {"r"}, "scope": {"all"}, "events": {"backup.failed"}, "channel_ids": {"99"}}, "The settings are not valid: channel_ids: channel 99 does not exist", "设置无效：channel_ids"},
	}
	for _, c := range refused {
		for _, br := range []*browser{b, zh} {
			br.get("/notifications/rules/new")
			p := br.post("/notifications/rules", cloneForm(c.form))
			expect(t, c.what, p, http.StatusUnprocessableEntity, "")
			want := c.en
			if br == zh {
				want = c.zh
			}
			expectBody(t, c.what, p, `id="rule-errors"`, want)
		}
	}

	b.get("/notifications/rules/new")
	p = b.post("/notifications/rules", url.Values{"name": {"core changes"}, "enabled": {"1"}, "scope": {"groups"},
		"group_ids": {itoa(core.ID)}, "events": {"config.changed", "device.unreachable"}, "channel_ids": {"1"},
		"failure_threshold": {"1"}})
	expect(t, "create rule", p, http.StatusSeeOther, "/notifications?notice=rule_created")
	rules, _ := e.store.NotificationRules(ctx)
	if len(rules) != 1 || rules[0].Scope != "groups" || !slices.Equal(rules[0].GroupIDs, []int64{core.ID}) ||
		rules[0].IncludeDiff || len(rules[0].Events) != 2 || !slices.Equal(rules[0].ChannelIDs, []int64{1}) {
		t.Fatalf("stored rule %+v", rules)
	}
	expectBody(t, "rule listed", b.get("/notifications"), "core changes", "Configuration changed, Device unreachable", "Core, with subgroups")
	expectBody(t, "rule listed (zh)", zh.get("/notifications"), "配置已变更, 设备不可达")
	if a := lastAudit(t, e, "notification_rule.create"); a.Details["scope"] != "groups" {
		t.Fatalf("rule audit %+v", a)
	}

	// The channel is in use: deleting it is refused, saying why.
	b.get("/notifications/channels/1")
	p = b.post("/notifications/channels/1/delete", nil)
	expect(t, "delete used channel", p, http.StatusConflict, "")
	expectBody(t, "delete used channel", p, "The channel “hook” is used by notification rules")
	zh.get("/notifications/channels/1")
	expectBody(t, "delete used channel (zh)", zh.post("/notifications/channels/1/delete", nil), "通道“hook”正被通知规则使用")

	// The delivery log: an event recorded and a failed attempt.
	if err := e.store.RecordReachability(ctx, dev.ID, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	claimed, err := e.store.ClaimDeliveries(ctx, time.Now().Add(time.Minute), 10, "test-worker")
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d deliveries: %v", len(claimed), err)
	}
	if _, err := e.store.MarkFailed(ctx, "test-worker", []int64{claimed[0].ID}, outbox.DeliveryFailure{Status: "503",
		Error: "receiver answered 503", At: time.Now(), RetryAt: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	p = b.get("/notifications/channels/1")
	expectBody(t, "delivery log", p, `id="delivery-log-table"`, "sw-core-1", "Device unreachable", "failed, will retry", "503", "receiver answered 503")
	expectBody(t, "delivery log (zh)", zh.get("/notifications/channels/1"), "设备不可达", "失败，将重试")

	// Edit: the form comes back with the saved scope and group ticked;
	// then devices by name, diff included.
	expectBody(t, "rule form keeps its groups", b.get("/notifications/rules/1"),
		`id="scope-groups" type="radio" name="scope" value="groups" checked`,
		`id="group-`+itoa(core.ID)+`" type="checkbox" name="group_ids" value="`+itoa(core.ID)+`" checked`)
	p = b.post("/notifications/rules/1", url.Values{"name": {"core changes"}, "enabled": {"1"}, "scope": {"devices"},
		"devices": {"SW-CORE-1\n"}, "events": {"config.changed"}, "channel_ids": {"1"}, "include_diff": {"1"}, "failure_threshold": {"3"}})
	expect(t, "edit rule", p, http.StatusSeeOther, "/notifications?notice=rule_updated")
	r, _ := e.store.GetNotificationRule(ctx, 1)
	if r.Scope != "devices" || !slices.Equal(r.DeviceIDs, []int64{dev.ID}) || !r.IncludeDiff || r.FailureThreshold != 3 {
		t.Fatalf("edited rule %+v", r)
	}
	expectBody(t, "edited rule form", b.get("/notifications/rules/1"), "sw-core-1</textarea>", `value="3"`)

	// Delete the rule, then the channel.
	expect(t, "delete rule", b.post("/notifications/rules/1/delete", nil), http.StatusSeeOther, "/notifications?notice=rule_deleted")
	expect(t, "delete channel", b.post("/notifications/channels/1/delete", nil), http.StatusSeeOther, "/notifications?notice=channel_deleted")
	if cs, _ := e.store.NotificationChannels(ctx); len(cs) != 0 {
		t.Fatalf("channels left: %v", cs)
	}
	for _, action := range []string{"notification_rule.update", "notification_rule.delete", "notification_channel.delete"} {
		lastAudit(t, e, action)
	}
	expect(t, "deleted rule", b.get("/notifications/rules/1"), http.StatusNotFound, "")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Every change needs the session's CSRF token and settings.update;
// looking needs settings.view.
func TestNotificationsPermissions(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	b.get("/notifications/channels/new")
	expect(t, "channel", b.post("/notifications/channels", webhookForm("hook", "https://h.example/x", "")), http.StatusSeeOther, "")

	b.get("/notifications")
	for _, path := range []string{"/notifications/channels", "/notifications/channels/1", "/notifications/channels/1/test",
		"/notifications/channels/1/delete", "/notifications/rules"} {
		p := b.post(path, url.Values{"csrf": {""}, "name": {"x"}, "type": {"webhook"}, "url": {"https://h.example/y"}})
		expect(t, path+" without token", p, http.StatusForbidden, "")
	}

	e.createUser("op", "op-password-12", auth.RoleOperator, true) // settings.view only
	op := e.browser()
	op.mustLogin("op", "op-password-12")
	p := op.get("/notifications")
	expect(t, "operator looks", p, http.StatusOK, "")
	if strings.Contains(p.body, `id="channel-new"`) {
		t.Errorf("operator is offered a new channel")
	}
	expectBody(t, "operator nav", p, `href="/notifications" aria-current="page"`)
	p = op.get("/notifications/channels/1")
	expect(t, "operator channel", p, http.StatusOK, "")
	expectBody(t, "operator channel", p, `id="channel-readonly"`)
	if strings.Contains(p.body, `id="channel-test"`) || strings.Contains(p.body, `id="channel-delete"`) {
		t.Errorf("operator is offered test or delete")
	}
	for _, path := range []string{"/notifications/channels", "/notifications/channels/1", "/notifications/channels/1/test",
		"/notifications/channels/1/delete", "/notifications/rules"} {
		expect(t, "operator posts "+path, op.post(path, webhookForm("x", "https://h.example/y", "")), http.StatusForbidden, "")
	}
	expect(t, "operator new channel form", op.get("/notifications/channels/new"), http.StatusForbidden, "")

	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true) // no settings.view
	v := e.browser()
	v.mustLogin("viewer", "viewer-password-1")
	expect(t, "viewer", v.get("/notifications"), http.StatusForbidden, "")
	expect(t, "viewer channel", v.get("/notifications/channels/1"), http.StatusForbidden, "")
	if p := v.get("/jobs"); strings.Contains(p.body, `href="/notifications"`) {
		t.Errorf("viewer sees the Notifications entry")
	}
	if c, _ := e.store.GetNotificationChannel(context.Background(), 1); c.Name != "hook" {
		t.Fatalf("channel changed without permission: %+v", c)
	}
}
