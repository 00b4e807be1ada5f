package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"backupd/app/auth"
	"backupd/app/netguard"
)

// The settings page's outbound allow list: refused entries say why (in
// English and Chinese) and store nothing; saving needs settings.update
// and the CSRF token and is audited. Until an address is allowed, a
// webhook or SMTP server written as a link-local or metadata address is
// refused on its form, and a device on a metadata address on its own.
func TestOutboundAllowList(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b := adminBrowser(t, e)
	p := b.get("/settings")
	expectBody(t, "settings", p, `id="outbound-form"`, "Outbound connections", "169.254.169.254")

	hook := webhookForm("metadata", "http://169.254.10.20/hook?token=abc", "")
	b.get("/notifications/channels/new")
	p = b.post("/notifications/channels", hook)
	expect(t, "webhook to a link-local address", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "webhook to a link-local address", p, "169.254.10.20 is a link-local address")
	mail := url.Values{"name": {"mail"}, "type": {"email"}, "enabled": {"1"}, "language": {"en"},
		"host": {"169.254.169.254"}, "security": {"starttls"}, "from": {"backupd@example.net"}, "to": {"noc@example.net"}}
	b.get("/notifications/channels/new")
	p = b.post("/notifications/channels", mail)
	expect(t, "SMTP server on the metadata address", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "SMTP server on the metadata address", p, "cloud metadata")
	b.get("/devices/new")
	p = b.post("/devices", url.Values{"name": {"imds"}, "host": {"169.254.169.254"}, "platform": {"cisco_ios"},
		"login_method": {"ssh"}, "encoding": {"utf-8"}, "enabled": {"1"}})
	expect(t, "device on the metadata address", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "device on the metadata address", p, "cloud metadata service")

	// Refused lists.
	for _, c := range []struct{ allow, en, zh string }{
		{"169.254.10.0/24\nmetadata.internal", "metadata.internal is neither an IP address nor a CIDR prefix", "metadata.internal 既不是 IP 地址也不是 CIDR 前缀"},
		{"169.254.0.0/40", "169.254.0.0/40 is neither an IP address nor a CIDR prefix", "169.254.0.0/40 既不是"},
		{strings.Repeat("169.254.1.1\n", netguard.MaxAllow+1), "At most 100 entries.", "最多 100 条。"},
	} {
		b.get("/settings")
		p := b.post("/settings/outbound", url.Values{"allow": {c.allow}})
		expect(t, "refused allow list", p, http.StatusUnprocessableEntity, "")
		expectBody(t, "refused allow list", p, `id="outbound-error"`, c.en)
		zh := zhBrowser(t, e)
		zh.get("/settings")
		expectBody(t, "refused allow list (zh)", zh.post("/settings/outbound", url.Values{"allow": {c.allow}}), c.zh)
		if pol, err := netguard.Load(ctx, e.store); err != nil || len(pol.Allow) != 0 {
			t.Fatalf("a refused list was stored: %v %v", pol.Allow, err)
		}
	}
	// Permission and CSRF.
	e.createUser("op", "op-password-12", auth.RoleOperator, true)
	op := e.browser()
	op.mustLogin("op", "op-password-12")
	if p := op.get("/settings"); strings.Contains(p.body, `id="outbound-save"`) {
		t.Error("an operator is offered to save the allow list")
	}
	expect(t, "operator saves", op.post("/settings/outbound", url.Values{"allow": {"169.254.10.0/24"}}), http.StatusForbidden, "")
	b.get("/settings")
	expect(t, "save without the CSRF token", b.post("/settings/outbound", url.Values{"csrf": {""}, "allow": {"169.254.10.0/24"}}), http.StatusForbidden, "")
	if pol, _ := netguard.Load(ctx, e.store); len(pol.Allow) != 0 {
		t.Fatal("stored without permission or token")
	}

	b.get("/settings")
	p = b.post("/settings/outbound", url.Values{"allow": {" 169.254.10.9/24 \r\nfe80::1\n\n"}})
	expect(t, "save", p, http.StatusSeeOther, "/settings?done=outbound_saved#outbound")
	expectBody(t, "saved", b.get("/settings?done=outbound_saved"), "Outbound allow list saved.", "169.254.10.0/24\nfe80::1</textarea>")
	audited := false
	for _, a := range e.auditEntries() {
		audited = audited || (a.Action == "settings.update" && a.TargetID == netguard.SettingAllow && a.Username == "root")
	}
	if !audited {
		t.Error("saving the allow list is not audited")
	}

	// Allowed now: the link-local webhook is taken; the metadata address
	// still is not (another network was allowed).
	b.get("/notifications/channels/new")
	expect(t, "webhook to an allowed link-local address", b.post("/notifications/channels", hook), http.StatusSeeOther, "")
	b.get("/notifications/channels/new")
	expect(t, "SMTP server on the metadata address, still", b.post("/notifications/channels", mail), http.StatusUnprocessableEntity, "")
}
