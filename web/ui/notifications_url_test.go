package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"backupd/app/auth"
)

// A webhook URL's credential (?token=…, a user and password) is sealed
// like the secrets: the database holds no clear token, pages show the URL
// masked (to a settings.view user too), saving the form with the URL as
// shown keeps the stored one, and deliveries go to the whole URL (a real
// receiver gets the token).
func TestNotificationURLSealed(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	const token = "tok-URL-SECRET-77"
	recv := newHookReceiver(t, "k", http.StatusOK)
	hookURL := recv.srv.URL + "/h?token=" + token + "&team=netops"
	masked := recv.srv.URL + "/h?token=•••&amp;team=•••" // as HTML holds it

	b.get("/notifications/channels/new")
	p := b.post("/notifications/channels", url.Values{"name": {"tok"}, "type": {"webhook"}, "enabled": {"1"}, "language": {"en"},
		"url": {hookURL}, "webhook_secret": {"k"}})
	expect(t, "create", p, http.StatusSeeOther, "/notifications/channels/1?notice=channel_created")
	noToken := func(what, text string) {
		t.Helper()
		if strings.Contains(text, token) {
			t.Errorf("%s holds the URL's token", what)
		}
	}
	noToken("raw row", rawChannel(t, e, 1))

	// A user who may only look sees the URL masked, in the form and the list.
	e.createUser("viewer", "viewer-password-1", auth.RoleOperator, true)
	v := e.browser()
	v.mustLogin("viewer", "viewer-password-1")
	p = v.get("/notifications/channels/1")
	expect(t, "view form", p, http.StatusOK, "")
	expectBody(t, "view form", p, `value="`+masked+`"`, `id="ch-url-stored"`, `id="channel-readonly"`)
	noToken("form shown to settings.view", p.body)
	p = v.get("/notifications")
	expectBody(t, "list", p, masked)
	noToken("list shown to settings.view", p.body)

	deliveredToken := func(what string) {
		t.Helper()
		expectBody(t, what, b.post("/notifications/channels/1/test", nil), `data-ok="1"`)
		got := recv.deliveries()
		if len(got) == 0 || got[len(got)-1].query.Get("token") != token || !got[len(got)-1].signed {
			t.Fatalf("%s: the receiver did not get the token", what)
		}
	}
	deliveredToken("created")

	// Saved with the URL as shown (masked): the stored URL is kept.
	p = b.post("/notifications/channels/1", url.Values{"name": {"tok renamed"}, "enabled": {"1"}, "language": {"en"},
		"url": {recv.srv.URL + "/h?token=•••&team=•••"}})
	expect(t, "save unchanged URL", p, http.StatusSeeOther, "/notifications/channels/1?notice=channel_updated")
	if a := lastAudit(t, e, "notification_channel.update"); strings.Join(anyStrings(a.Details["fields"]), ",") != "name" {
		t.Errorf("update audit %+v", a.Details)
	}
	noToken("raw row after save", rawChannel(t, e, 1))
	deliveredToken("saved unchanged")

	// A URL edited around the hidden parts is refused, and a typed URL
	// with a credential is not echoed by a refused form.
	p = b.post("/notifications/channels/1", url.Values{"name": {"tok renamed"}, "url": {recv.srv.URL + "/other?token=•••"}})
	expect(t, "edited masked URL", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "edited masked URL", p, "The URL still holds •••")
	p = b.post("/notifications/channels/1", url.Values{"name": {""}, "url": {recv.srv.URL + "/h?token=new-TOKEN-88"}})
	expect(t, "refused with a new URL", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "refused with a new URL", p, `id="channel-retype"`, "token=•••")
	if strings.Contains(p.body, "new-TOKEN-88") {
		t.Error("a refused form echoes the typed URL's token")
	}
	deliveredToken("after refusals")

	// A new URL replaces it.
	p = b.post("/notifications/channels/1", url.Values{"name": {"tok renamed"}, "enabled": {"1"}, "url": {recv.srv.URL + "/h?token=new-TOKEN-88"}})
	expect(t, "new URL", p, http.StatusSeeOther, "/notifications/channels/1?notice=channel_updated")
	if a := lastAudit(t, e, "notification_channel.update"); !strings.Contains(strings.Join(anyStrings(a.Details["fields"]), ","), "url") {
		t.Errorf("update audit %+v", a.Details)
	}
	expectBody(t, "test after new URL", b.post("/notifications/channels/1/test", nil), `data-ok="1"`)
	if got := recv.deliveries(); got[len(got)-1].query.Get("token") != "new-TOKEN-88" {
		t.Fatalf("delivered to token %q", got[len(got)-1].query.Get("token"))
	}
	for _, path := range []string{"/notifications", "/notifications/channels/1", "/audit"} {
		body := b.get(path).body
		noToken(path, body)
		if strings.Contains(body, "new-TOKEN-88") {
			t.Errorf("%s holds the new token", path)
		}
	}
	noToken("server log", e.logs.String())
}
