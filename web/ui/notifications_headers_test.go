package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"backupd/app/notify"
	"backupd/db"
	"backupd/internal/dbtest"
)

// rawChannel reads a channel's row as SQLite holds it.
func rawChannel(t *testing.T, e *env, id int64) string {
	t.Helper()
	var config string
	var sealed []byte
	if err := dbtest.Peek(t, e.store).QueryRowContext(context.Background(),
		`SELECT config, secret FROM notification_channels WHERE id = ?`, id).Scan(&config, &sealed); err != nil {
		t.Fatal(err)
	}
	return config + "\n" + string(sealed)
}

// A webhook's custom header values are credentials: sealed in the
// database (never in the settings column), never on a page (list, form,
// refused form, audit), delivered with the values typed; a blank value
// keeps the stored one, a new value replaces it, "remove" drops it.
// Rows written before the values were sealed still deliver, and are
// sealed when saved again.
func TestNotificationHeaderValuesSealed(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	ctx := context.Background()
	const key = "hmac-key-HDR-1"
	recv := newHookReceiver(t, key, http.StatusOK)
	values := []string{"tok-AAA-bearer", "key-BBB-api", "key-CCC-api", "new-DDD-val", "tok-EEE-refused", "val-FFF-refused", "legacy-GGG-val"}

	noValues := func(what, text string) {
		t.Helper()
		for _, v := range values {
			if strings.Contains(text, v) {
				t.Errorf("%s holds the header value %q", what, v)
			}
		}
	}
	pages := func(what string) {
		t.Helper()
		for _, path := range []string{"/notifications", "/notifications/channels/1", "/audit"} {
			p := b.get(path)
			expect(t, what+" "+path, p, http.StatusOK, "")
			noValues(what+" page "+path, p.body)
		}
	}
	lastHeaders := func(what string) http.Header {
		t.Helper()
		expectBody(t, what, b.post("/notifications/channels/1/test", nil), `data-ok="1"`)
		got := recv.deliveries()
		if len(got) == 0 || !got[len(got)-1].signed {
			t.Fatalf("%s: no signed delivery: %+v", what, got)
		}
		return got[len(got)-1].header
	}

	b.get("/notifications/channels/new")
	p := b.post("/notifications/channels", url.Values{"name": {"api"}, "type": {"webhook"}, "enabled": {"1"}, "language": {"en"},
		"url": {recv.srv.URL + "/h"}, "webhook_secret": {key}, "headers": {"Authorization: Bearer tok-AAA-bearer\nx-api-key: key-BBB-api"}})
	expect(t, "create", p, http.StatusSeeOther, "/notifications/channels/1?notice=channel_created")
	raw := rawChannel(t, e, 1)
	noValues("raw row", raw)
	if strings.Contains(raw, key) || !strings.Contains(raw, "Authorization") || !strings.Contains(raw, "X-Api-Key") {
		t.Fatalf("raw row: %q", raw)
	}
	pages("created")
	p = b.get("/notifications/channels/1")
	expectBody(t, "form", p, `value="Authorization"`, `value="X-Api-Key"`, "Value set — leave blank to keep it.",
		`name="header_remove" value="X-Api-Key"`)
	if !strings.Contains(b.get("/notifications").body, `class="inv-set"`) {
		t.Error("the list does not say the signing secret is set")
	}
	h := lastHeaders("created")
	if h.Get("Authorization") != "Bearer tok-AAA-bearer" || h.Get("X-Api-Key") != "key-BBB-api" {
		t.Fatalf("delivered headers %v", h)
	}

	edit := func(extra url.Values) url.Values {
		v := url.Values{"name": {"api"}, "enabled": {"1"}, "language": {"en"}, "url": {recv.srv.URL + "/h"},
			"header_name": {"Authorization", "X-Api-Key"}}
		for k, x := range extra {
			v[k] = x
		}
		return v
	}
	// Blank keeps Authorization; X-Api-Key retyped; X-New added.
	p = b.post("/notifications/channels/1", edit(url.Values{"header_value": {"", "key-CCC-api"}, "headers": {"X-New: new-DDD-val"}}))
	expect(t, "change", p, http.StatusSeeOther, "/notifications/channels/1?notice=channel_updated")
	noValues("raw row after change", rawChannel(t, e, 1))
	if a := lastAudit(t, e, "notification_channel.update"); strings.Join(anyStrings(a.Details["fields"]), ",") != "settings,headers" {
		t.Errorf("update audit %+v", a.Details)
	}
	pages("changed")
	h = lastHeaders("changed")
	if h.Get("Authorization") != "Bearer tok-AAA-bearer" || h.Get("X-Api-Key") != "key-CCC-api" || h.Get("X-New") != "new-DDD-val" {
		t.Fatalf("delivered headers after change %v", h)
	}

	// Remove X-Api-Key, everything else blank: kept.
	p = b.post("/notifications/channels/1", url.Values{"name": {"api"}, "enabled": {"1"}, "language": {"en"}, "url": {recv.srv.URL + "/h"},
		"header_name": {"Authorization", "X-Api-Key", "X-New"}, "header_value": {"", "", ""}, "header_remove": {"X-Api-Key"}})
	expect(t, "remove", p, http.StatusSeeOther, "/notifications/channels/1?notice=channel_updated")
	h = lastHeaders("removed")
	if h.Get("Authorization") != "Bearer tok-AAA-bearer" || h.Get("X-Api-Key") != "" || h.Get("X-New") != "new-DDD-val" {
		t.Fatalf("delivered headers after remove %v", h)
	}
	if strings.Contains(b.get("/notifications/channels/1").body, `value="X-Api-Key"`) {
		t.Error("a removed header is still listed")
	}

	// Refused forms echo names, never typed values.
	for _, c := range []struct {
		name string
		form url.Values
		want string
	}{
		{"bad url", url.Values{"name": {"api"}, "url": {"ftp://x"}, "header_name": {"Authorization", "X-New"},
			"header_value": {"tok-EEE-refused", ""}, "headers": {"X-Other: val-FFF-refused"}}, "X-Other: "},
		{"set and remove", url.Values{"name": {"api"}, "url": {recv.srv.URL + "/h"}, "header_name": {"Authorization", "X-New"},
			"header_value": {"tok-EEE-refused", ""}, "header_remove": {"Authorization"}}, "Header Authorization: a new value was typed"},
		{"no value", url.Values{"name": {"api"}, "url": {recv.srv.URL + "/h"}, "headers": {"X-Other: val-FFF-refused\nX-Empty:\nBearer tok-EEE-refused"}},
			"Custom headers, line 2"},
	} {
		p = b.post("/notifications/channels/1", c.form)
		expect(t, c.name, p, http.StatusUnprocessableEntity, "")
		expectBody(t, c.name, p, c.want, `id="channel-retype"`)
		noValues("refused form "+c.name, p.body)
	}
	pages("refused")
	h = lastHeaders("after refusals")
	if h.Get("Authorization") != "Bearer tok-AAA-bearer" {
		t.Fatalf("refused forms changed the headers: %v", h)
	}

	// A row as written before header values were sealed: it delivers,
	// its values are not shown, and saving it seals them.
	cfg, _ := json.Marshal(map[string]any{"url": recv.srv.URL + "/legacy", "headers": map[string]string{"X-Legacy": "legacy-GGG-val"}})
	legacy, err := e.store.CreateNotificationChannel(ctx, db.NotificationChannel{Name: "legacy", Type: notify.TypeWebhook, Enabled: true,
		Config: cfg, Secret: notify.Sealer(e.sealer)([]byte(key)), Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(legacy.ID, 10)
	p = b.get("/notifications/channels/" + id)
	expectBody(t, "legacy form", p, `value="X-Legacy"`, "Value set — leave blank to keep it.")
	noValues("legacy form", p.body)
	expectBody(t, "legacy test", b.post("/notifications/channels/"+id+"/test", nil), `data-ok="1"`)
	got := recv.deliveries()
	if d := got[len(got)-1]; !d.signed || d.header.Get("X-Legacy") != "legacy-GGG-val" {
		t.Fatalf("legacy delivery %v", d.header)
	}
	p = b.post("/notifications/channels/"+id, url.Values{"name": {"legacy"}, "enabled": {"1"}, "url": {recv.srv.URL + "/legacy"},
		"header_name": {"X-Legacy"}, "header_value": {""}})
	expect(t, "legacy save", p, http.StatusSeeOther, "/notifications/channels/"+id+"?notice=channel_updated")
	noValues("legacy raw row after save", rawChannel(t, e, legacy.ID))
	expectBody(t, "legacy test after save", b.post("/notifications/channels/"+id+"/test", nil), `data-ok="1"`)
	got = recv.deliveries()
	if d := got[len(got)-1]; !d.signed || d.header.Get("X-Legacy") != "legacy-GGG-val" {
		t.Fatalf("legacy delivery after save %v", d.header)
	}
	noValues("audit", b.get("/audit").body)
	noValues("server log", e.logs.String())
}
