package ui_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
)

// The Notifications page in Chromium, in English then Chinese: the
// channel form shows the settings of the chosen type, a saved secret is
// not in the page, Send test delivers a signed event to a real receiver,
// and a rule is made with the scope panels the script shows.
func TestNotificationsInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 90*time.Second, 1280, 900)
	const secret = "chromium-Hmac-Secret-42"
	recv := newHookReceiver(t, secret, http.StatusOK)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	// The refused rule at the end answers 422 on purpose; Chromium logs
	// every 4xx answer.
	b.allow(func(m chromedp.ConsoleMessage) bool {
		return strings.Contains(m.Text, "status of 422") && strings.HasSuffix(m.URL, "/notifications/rules")
	})
	b.login("root", "root-password-1")

	b.open("/notifications")
	if got := b.eval(`document.querySelector('#sidenav a[aria-current="page"]').textContent`); got != "Notifications" {
		t.Errorf("current navigation entry %q", got)
	}
	b.submit("new channel", "#channel-new")
	panels := func() string {
		return b.shown(`[data-type-panel="webhook"]`) + " " + b.shown(`[data-type-panel="slack mattermost teams chat"]`) +
			" " + b.shown(`[data-type-panel="email"]`)
	}
	if got := panels(); got != "shown hidden hidden" {
		t.Errorf("webhook chosen: panels %s", got)
	}
	b.chooseValue("#ch-type", "email")
	if got := panels(); got != "hidden hidden shown" {
		t.Errorf("e-mail chosen: panels %s", got)
	}
	b.chooseValue("#ch-type", "teams")
	if got := panels(); got != "hidden shown hidden" {
		t.Errorf("Teams chosen: panels %s", got)
	}
	b.chooseValue("#ch-type", "webhook")
	b.typeIn("#ch-name", "ops hook")
	b.typeIn("#ch-url", recv.srv.URL+"/hook")
	b.typeIn("#ch-webhook-secret", secret)
	b.typeIn("#ch-headers", "Authorization: Bearer chromium-tok-77")
	b.shot("notifications-channel-new")
	b.submit("save channel", "#channel-save")
	b.waitFor("saved", `!!document.getElementById("channel-notice")`, 5*time.Second)
	if html := b.eval(`document.documentElement.outerHTML`); strings.Contains(html, secret) || strings.Contains(html, "chromium-tok-77") {
		t.Errorf("the saved channel's page holds its secret or header value")
	}
	if got := b.eval(`document.querySelector('#ch-stored-headers label.bs-mono').textContent`); got != "Authorization" {
		t.Errorf("stored header listed as %q", got)
	}
	if got := b.eval(`document.getElementById("ch-webhook-secret").value`); got != "" {
		t.Errorf("secret field holds %q", got)
	}

	b.submit("send test", "#channel-test")
	if got := b.eval(`document.getElementById("channel-test-result").innerText`); !strings.Contains(got, "The test was delivered. Answer: 200") {
		t.Errorf("test result %q", got)
	}
	if got := recv.deliveries(); len(got) != 1 || !got[0].signed || got[0].header.Get("Authorization") != "Bearer chromium-tok-77" {
		t.Fatalf("receiver got %+v", got)
	}

	// A rule: the scope panels follow the choice.
	b.open("/notifications")
	b.submit("new rule", "#rule-new")
	scopes := func() string {
		return b.shown(`[data-scope-panel="groups"]`) + " " + b.shown(`[data-scope-panel="devices"]`)
	}
	if got := scopes(); got != "hidden hidden" {
		t.Errorf("all devices chosen: panels %s", got)
	}
	b.run("choose groups", chromedp.Click(chromedp.CSS("#scope-groups")))
	if got := scopes(); got != "shown hidden" {
		t.Errorf("groups chosen: panels %s", got)
	}
	b.run("choose all", chromedp.Click(chromedp.CSS("#scope-all")))
	b.typeIn("#rule-name", "everything")
	b.run("tick channel", chromedp.Click(chromedp.CSS("#channel-1")))
	b.submit("save rule", "#rule-save")
	b.waitFor("rule listed", `!!document.querySelector("#rules-table") && document.querySelector("#rules-table").innerText.includes("everything")`, 5*time.Second)
	if rules, _ := e.store.NotificationRules(context.Background()); len(rules) != 1 || !rules[0].IncludeDiff || rules[0].Scope != "all" {
		t.Fatalf("stored rules %+v", rules)
	}

	// 中文.
	b.setLang("zh")
	if got := b.eval(`document.querySelector("main h1").textContent`); got != "通知" {
		t.Errorf("Chinese heading %q", got)
	}
	if got := b.eval(`document.getElementById("rules-table").innerText`); !strings.Contains(got, "配置已变更") || !hasHan(got) {
		t.Errorf("Chinese rule list %q", got)
	}
	b.shot("notifications-zh")
	b.open("/notifications/channels/1")
	b.submit("send test (zh)", "#channel-test")
	if got := b.eval(`document.getElementById("channel-test-result").innerText`); !strings.Contains(got, "测试已送达。应答：200") {
		t.Errorf("Chinese test result %q", got)
	}
	b.open("/notifications/rules/new")
	b.run("tick channel", chromedp.Click(chromedp.CSS("#channel-1")))
	b.run("untick events", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('input[name="events"]').forEach(c => c.checked = false)`))
	b.at("refused rule")
	ctx, cancel := b.step()
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#rule-save"))); err != nil {
		t.Fatalf("save refused rule: %v", err)
	}
	if got := b.eval(`document.getElementById("rule-errors").innerText`); !strings.Contains(got, "请输入名称。") || !strings.Contains(got, "请至少选择一个事件。") {
		t.Errorf("Chinese errors %q", got)
	}
	b.shot("notifications-rule-errors-zh")
	b.checkConsole()
}
