package ui_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"backupd/app/auth"
	"backupd/db"
)

var enrolmentToken = regexp.MustCompile(`<code id="new-token">(bke_[A-Za-z0-9_-]+)</code>`)

// The Collectors page: an administrator creates a zone, makes an
// enrolment token shown once (only its hash stored, never in the audit
// log), sees the collector it enrolled, and revokes it. Changes need
// settings.update and the form's CSRF token.
func TestCollectorsPage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.createUser("boss", bossPassword, auth.RoleAdministrator, true)
	e.createUser("vic", "Viewer-pass-12345", auth.RoleViewer, true)
	b := e.browser()
	b.mustLogin("boss", bossPassword)

	p := b.get("/collectors")
	expect(t, "page", p, http.StatusOK, "")
	expectBody(t, "page", p, `data-zone="local"`, `href="/collectors"`, `id="zone-form"`, "Create a zone first")

	expect(t, "create without token", b.post("/collectors/zones", url.Values{"csrf": {""}, "name": {"Site-A"}}), http.StatusForbidden, "")
	expect(t, "create zone", b.post("/collectors/zones", url.Values{"name": {"Site-A"}}), http.StatusSeeOther, "/collectors?done=zone")
	p = b.get("/collectors?done=zone")
	expectBody(t, "after create", p, `data-zone="Site-A"`, "Zone created.", `id="token-form"`)
	p = b.post("/collectors/zones", url.Values{"name": {"site-a"}})
	expect(t, "same name", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "same name", p, "A zone named site-a exists.")
	expect(t, "blank name", b.post("/collectors/zones", url.Values{"name": {"  "}}), http.StatusUnprocessableEntity, "")
	zone, err := e.store.ZoneByName(ctx, "site-a")
	if err != nil {
		t.Fatal(err)
	}

	b.get("/collectors")
	expect(t, "token for local", b.post("/collectors/tokens", url.Values{"zone_id": {"1"}}), http.StatusUnprocessableEntity, "")
	expect(t, "token for nothing", b.post("/collectors/tokens", url.Values{"zone_id": {"x"}}), http.StatusUnprocessableEntity, "")
	p = b.post("/collectors/tokens", url.Values{"zone_id": {strconv.FormatInt(zone.ID, 10)}})
	expect(t, "token", p, http.StatusOK, "")
	m := enrolmentToken.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no token shown:\n%s", p.body)
	}
	token := m[1]
	for _, a := range e.auditEntries() {
		for _, v := range a.Details {
			if strings.Contains(strings.ToLower(strings.TrimSpace(toString(v))), token) {
				t.Fatal("the audit log holds the enrolment token")
			}
		}
	}
	// The token enrols one collector in the zone: its hash was stored.
	h := sha256.Sum256([]byte(token))
	bearer := sha256.Sum256([]byte("bkc_test"))
	c, err := e.store.EnrolCollector(ctx, h[:], db.Collector{Name: "edge-7", PublicKey: "pk", Version: "9.9.9"}, bearer[:])
	if err != nil || c.ZoneID != zone.ID {
		t.Fatalf("enrol with the page's token: %+v, %v", c, err)
	}
	p = b.get("/collectors")
	expectBody(t, "listed", p, `data-collector="`+strconv.FormatInt(c.ID, 10)+`"`, "edge-7", "9.9.9", "Online")

	// A viewer sees the page but changes nothing.
	v := e.browser()
	v.mustLogin("vic", "Viewer-pass-12345")
	if p := v.get("/collectors"); p.status == http.StatusOK && strings.Contains(p.body, `id="token-form"`) {
		t.Fatal("a viewer is offered the token form")
	}
	expect(t, "viewer revokes", v.post("/collectors/"+strconv.FormatInt(c.ID, 10)+"/revoke", nil), http.StatusForbidden, "")

	b.get("/collectors")
	expect(t, "revoke", b.post("/collectors/"+strconv.FormatInt(c.ID, 10)+"/revoke", nil), http.StatusSeeOther, "/collectors?done=revoked")
	if got, _ := e.store.GetCollector(ctx, c.ID); got.RevokedAt == nil {
		t.Fatal("not revoked")
	}
	expectBody(t, "revoked", b.get("/collectors?done=revoked"), "Collector revoked", "Revoked")
	expect(t, "revoke a missing one", b.post("/collectors/999/revoke", nil), http.StatusNotFound, "")

	// The same page in Chinese.
	b.header.Set("Accept-Language", "zh-CN")
	expectBody(t, "zh", b.get("/collectors"), "区域与远程采集器")
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}

// The device form offers the zones once there is more than the local
// one: a device is created in a zone, an edit without the field keeps
// it, and a zone that does not exist is refused at the field.
func TestDeviceFormZone(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	g, err := e.store.CreateGroup(ctx, "Lab", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")
	if p := b.get("/devices/new"); strings.Contains(p.body, `id="d-zone"`) {
		t.Fatal("the form offers a zone while there is only the local one")
	}
	site, err := e.store.CreateZone(ctx, "branch")
	if err != nil {
		t.Fatal(err)
	}
	p := b.get("/devices/new")
	expectBody(t, "new form", p, `id="d-zone"`, `<option value="`+strconv.FormatInt(site.ID, 10)+`">branch</option>`)
	form := url.Values{"name": {"br-sw1"}, "host": {"10.0.0.1"}, "platform": {"cisco_ios"}, "login_method": {"ssh"},
		"group_id": {strconv.FormatInt(g.ID, 10)}, "encoding": {"utf-8"}, "enabled": {"1"}, "zone_id": {"999"}}
	p = b.post("/devices", form)
	expect(t, "missing zone", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "missing zone", p, "Choose a zone from the list.")
	form.Set("zone_id", strconv.FormatInt(site.ID, 10))
	expect(t, "create", b.post("/devices", form), http.StatusSeeOther, "")
	devs, _, err := e.store.ListDevices(ctx, db.Scope{All: true}, db.DeviceFilter{Query: "br-sw1"}, 10, 0)
	if err != nil || len(devs) != 1 || devs[0].ZoneID != site.ID {
		t.Fatalf("created = %+v, %v", devs, err)
	}
	id := strconv.FormatInt(devs[0].ID, 10)
	expectBody(t, "edit form", b.get("/devices/"+id+"/edit"), `<option value="`+strconv.FormatInt(site.ID, 10)+`" selected>branch</option>`)
	form.Del("zone_id")
	form.Set("host", "10.0.0.2")
	expect(t, "edit without zone", b.post("/devices/"+id+"/edit", form), http.StatusSeeOther, "")
	if d, _ := e.store.GetDevice(ctx, devs[0].ID); d.ZoneID != site.ID || d.Host != "10.0.0.2" {
		t.Fatalf("after edit = zone %d host %s", d.ZoneID, d.Host)
	}
	form.Set("zone_id", "1")
	expect(t, "move to local", b.post("/devices/"+id+"/edit", form), http.StatusSeeOther, "")
	if d, _ := e.store.GetDevice(ctx, devs[0].ID); d.ZoneID != db.LocalZone {
		t.Fatalf("after the move: zone %d", d.ZoneID)
	}
}

// An enrolment token not used yet is listed (never the token itself) and
// can be revoked on the page by someone with settings.update, with the
// form's CSRF token, audited; a revoked token enrols nothing.
func TestCollectorsPageRevokesToken(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.createUser("boss", bossPassword, auth.RoleAdministrator, true)
	e.createUser("vic", "Viewer-pass-12345", auth.RoleViewer, true)
	zone, err := e.store.CreateZone(ctx, "site-b")
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.mustLogin("boss", bossPassword)
	b.get("/collectors")
	p := b.post("/collectors/tokens", url.Values{"zone_id": {strconv.FormatInt(zone.ID, 10)}})
	expect(t, "token", p, http.StatusOK, "")
	m := enrolmentToken.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no token shown:\n%s", p.body)
	}
	token := m[1]
	expectBody(t, "token page", p, "BACKUPD_TOKEN="+token+" backupd collector --server", `id="token-id"`)
	if strings.Contains(p.body, "--token "+token) {
		t.Error("the token page puts the token on a command line")
	}
	tokens, err := e.store.ListEnrolmentTokens(ctx, nil)
	if err != nil || len(tokens) != 1 {
		t.Fatalf("tokens: %+v, %v", tokens, err)
	}
	id := strconv.FormatInt(tokens[0].ID, 10)
	p = b.get("/collectors")
	expectBody(t, "listed", p, `data-token="`+id+`"`, `action="/collectors/tokens/`+id+`/revoke"`)
	if strings.Contains(p.body, token) {
		t.Fatal("the Collectors page shows the enrolment token")
	}

	v := e.browser()
	v.mustLogin("vic", "Viewer-pass-12345")
	if p := v.get("/collectors"); strings.Contains(p.body, `action="/collectors/tokens/`+id+`/revoke"`) {
		t.Error("a viewer is offered to revoke a token")
	}
	expect(t, "viewer revokes", v.post("/collectors/tokens/"+id+"/revoke", nil), http.StatusForbidden, "")
	b.get("/collectors")
	expect(t, "revoke without the CSRF token", b.post("/collectors/tokens/"+id+"/revoke", url.Values{"csrf": {""}}), http.StatusForbidden, "")
	if got, _ := e.store.GetEnrolmentToken(ctx, tokens[0].ID); got.RevokedAt != nil {
		t.Fatal("revoked by a refused request")
	}
	expect(t, "revoke", b.post("/collectors/tokens/"+id+"/revoke", nil), http.StatusSeeOther, "/collectors?done=token_revoked")
	p = b.get("/collectors?done=token_revoked")
	expectBody(t, "after revoke", p, "Enrolment token revoked")
	if strings.Contains(p.body, `data-token="`+id+`"`) {
		t.Error("a revoked token is still listed")
	}
	audited := 0
	for _, a := range e.auditEntries() {
		if a.Action == "collector_token.revoke" && a.TargetID == id && a.Username == "boss" {
			audited++
		}
	}
	if audited != 1 {
		t.Errorf("%d audit entries of the revocation, want 1", audited)
	}
	h := sha256.Sum256([]byte(token))
	bearer := sha256.Sum256([]byte("bkc_x"))
	if _, err := e.store.EnrolCollector(ctx, h[:], db.Collector{Name: "late", PublicKey: "pk", Version: "1"}, bearer[:]); !errors.Is(err, db.ErrEnrolment) {
		t.Fatalf("enrolment with the revoked token: %v, want refused", err)
	}
	expect(t, "revoke a missing one", b.post("/collectors/tokens/999/revoke", nil), http.StatusNotFound, "")

	// A used token is not revoked: its collector is.
	b.get("/collectors")
	p = b.post("/collectors/tokens", url.Values{"zone_id": {strconv.FormatInt(zone.ID, 10)}})
	token = enrolmentToken.FindStringSubmatch(p.body)[1]
	h = sha256.Sum256([]byte(token))
	c, err := e.store.EnrolCollector(ctx, h[:], db.Collector{Name: "edge", PublicKey: "pk", Version: "1"}, bearer[:])
	if err != nil {
		t.Fatal(err)
	}
	tokens, _ = e.store.ListEnrolmentTokens(ctx, nil)
	b.get("/collectors")
	p = b.post("/collectors/tokens/"+strconv.FormatInt(tokens[0].ID, 10)+"/revoke", nil)
	expect(t, "revoke a used token", p, http.StatusConflict, "")
	expectBody(t, "revoke a used token", p, "revoke the collector instead")
	if got, _ := e.store.GetCollector(ctx, c.ID); got.RevokedAt != nil {
		t.Error("revoking its token revoked the collector")
	}

	b.header.Set("Accept-Language", "zh-CN")
	b.post("/collectors/tokens", url.Values{"zone_id": {strconv.FormatInt(zone.ID, 10)}})
	expectBody(t, "zh", b.get("/collectors"), "未使用的注册令牌")
}
