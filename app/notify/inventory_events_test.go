package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"strings"
	"testing"
	"time"

	"backupd/app/insync"
	"backupd/app/notify"
	"backupd/db"
	"backupd/db/outbox"
)

// The inventory.sync_* events of an inventory source whose fetch fails,
// to a real SMTP server and a real webhook receiver: who gets them, what
// they say in each language, where they link, and that the source's
// token never reaches them.

// inventoryKey is the key the HTTP source is given, which the source
// echoes back in its refusal.
const inventoryKey = "inv-K3y-4c1d9e"

// A real fetch of an HTTP JSON inventory that refuses the key (and
// echoes it) fails; its error is recorded as the sync's failure, and a
// rule of scope all mails it in English and Chinese, naming the source
// and the error, linking to the inventory sources' settings, without
// the key; a rule on a group gets nothing. The next sync that applies
// mails the recovery.
func TestInventorySyncEventsReachRealChannels(t *testing.T) {
	f := newFleetStore(t, 0)
	ctx := context.Background()
	site, err := f.s.CreateGroup(ctx, "site", nil)
	if err != nil {
		t.Fatal(err)
	}
	f.groupDevice(t, "edge-1", "10.3.0.1", site.ID)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"detail": "key %s has no access"}`, r.Header.Get("X-Api-Key"))
	}))
	source := insync.HTTPJSON{URL: srv.URL + "/inventory", Headers: map[string]string{"X-Api-Key": inventoryKey},
		HostsLocation: "data.hosts", Map: map[string]string{"name": "hostname"}}
	_, fetchErr := source.Fetch(ctx, insync.Options{Timeout: 5 * time.Second})
	if fetchErr == nil {
		t.Fatal("a refused fetch succeeded")
	}
	src, err := f.s.CreateInventorySource(ctx, db.InventorySource{Name: "CMDB EU", Kind: db.InventoryHTTP,
		Config: json.RawMessage(`{"url":"` + srv.URL + `/inventory"}`), Token: []byte(inventoryKey), Enabled: true,
		IntervalMinutes: 60}, nil)
	if err != nil {
		t.Fatal(err)
	}

	kinds := []outbox.EventKind{outbox.EventInventorySyncFailed, outbox.EventInventorySyncRecovered}
	cert, pool := selfSigned(t)
	mailEN, mailZH := startMailbox(t, notify.SecuritySTARTTLS, cert), startMailbox(t, notify.SecuritySTARTTLS, cert)
	chEN, chZH := emailChannel(mailEN, notify.SecuritySTARTTLS, "en"), emailChannel(mailZH, notify.SecuritySTARTTLS, "zh")
	chZH.Name = "NOC mail zh"
	f.addRule(t, chEN, kinds, false)
	f.addRule(t, chZH, kinds, false)
	all, group := &bodyHook{}, &bodyHook{}
	allSrv, groupSrv := newServer(t, all), newServer(t, group)
	f.addRule(t, hookChannel("all hook", allSrv.URL, "s1"), kinds, false)
	f.addRule(t, hookChannel("site hook", groupSrv.URL, "s2"), kinds, false, site.ID)
	w := f.worker(notify.WorkerOptions{PublicURL: "https://backupd.example/", RootCAs: pool})

	if err := f.s.RecordInventorySyncFailure(ctx, src.ID, time.Now(), fetchErr.Error()); err != nil {
		t.Fatal(err)
	}
	if got := pass(t, w); got != 3 {
		t.Fatalf("the failure: %d deliveries; want 3 (two mails, the hook of scope all)", got)
	}
	link := "https://backupd.example/settings/inventory-sources"
	mails := map[string]parsed{"en": parseMessage(t, mailEN.last(t).data), "zh": parseMessage(t, mailZH.last(t).data)}
	wantIn := func(what string, m parsed, want []string) {
		t.Helper()
		for _, s := range want {
			if !strings.Contains(m.text, s) {
				t.Errorf("%s lacks %q:\n%s", what, s, m.text)
			}
		}
	}
	wantIn("the English failure", mails["en"], []string{"inventory source sync failed; nothing was changed",
		"inventory source “CMDB EU” (http)", "HTTP 403", "has no access", link})
	wantIn("the Chinese failure", mails["zh"], []string{"清单来源同步失败，未做任何更改", "清单来源“CMDB EU”（http）", "HTTP 403", link})
	if mails["en"].subject != "backupd: backupd: inventory source sync failed; nothing was changed" {
		t.Errorf("subject %q", mails["en"].subject)
	}
	texts := []string{mails["en"].text + html.UnescapeString(mails["en"].html), mails["zh"].text + html.UnescapeString(mails["zh"].html)}

	if _, err := f.s.ApplyInventorySync(ctx, src.ID, db.InventorySync{At: time.Now(), By: db.AuditEntry{Username: "inventory", Interface: "cli"}}); err != nil {
		t.Fatal(err)
	}
	if got := pass(t, w); got != 3 {
		t.Fatalf("the recovery: %d deliveries; want 3", got)
	}
	mails = map[string]parsed{"en": parseMessage(t, mailEN.last(t).data), "zh": parseMessage(t, mailZH.last(t).data)}
	wantIn("the English recovery", mails["en"], []string{"inventory source sync succeeded again", "inventory source “CMDB EU” (http)", link})
	wantIn("the Chinese recovery", mails["zh"], []string{"清单来源同步已恢复成功", "清单来源“CMDB EU”（http）", link})
	texts = append(texts, mails["en"].text+html.UnescapeString(mails["en"].html), mails["zh"].text+html.UnescapeString(mails["zh"].html))

	group.mu.Lock()
	if len(group.bodies) != 0 {
		t.Errorf("the group's rule got %v", group.bodies)
	}
	group.mu.Unlock()
	all.mu.Lock()
	bodies := append([]string(nil), all.bodies...)
	all.mu.Unlock()
	schema := loadSchema(t)
	var got []string
	for _, body := range bodies {
		texts = append(texts, body)
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		if err := schema.check(schema, v, "body"); err != nil {
			t.Errorf("%v: %s", err, body)
		}
		var env notify.Envelope
		if err := json.Unmarshal([]byte(body), &env); err != nil {
			t.Fatal(err)
		}
		for _, ev := range env.Events {
			is := ev.InventorySource
			if ev.Device != nil || is == nil || *is != (notify.InventorySource{ID: src.ID, Name: "CMDB EU", Kind: "http",
				Path: "/settings/inventory-sources"}) || ev.URL != link || ev.Trigger != db.TriggerInventorySync || ev.Failure == nil {
				t.Errorf("event %s: %+v, source %+v", ev.Kind, ev, is)
				continue
			}
			got = append(got, fmt.Sprintf("%s/%d", ev.Kind, ev.Failure.Consecutive))
		}
	}
	if strings.Join(got, " ") != "inventory.sync_failed/1 inventory.sync_recovered/1" {
		t.Fatalf("the hook of scope all got %v", got)
	}
	for _, text := range texts {
		if strings.Contains(text, inventoryKey) {
			t.Errorf("a message holds the source's key: %s", text)
		}
	}
}
