package ui_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"backupd/app/auth"
	"backupd/db"
)

// A device synced from an inventory source says so on its page and its
// edit form, in English and Chinese: the source's name (a link to the
// inventory sources for those who may see the settings, plain text for
// the others), the device's key in the source, and that the fields a
// sync sets follow the source; a device the sync disabled says why and
// that it comes back; a device made by hand says nothing of a source.
func TestDeviceShowsItsInventorySource(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	nb := newFakeNetBox(t)
	ctx := context.Background()
	id := addNetBoxSource(t, e, b, "NetBox par1", nb.srv.URL)
	path := "/settings/inventory-sources/" + strconv.FormatInt(id, 10)
	b.get("/settings/inventory-sources")
	expect(t, "first sync", b.post(path+"/sync", nil), http.StatusOK, "")
	nb.edit(t, dropDevice("test1-core2"))
	expect(t, "second sync", b.post(path+"/sync", nil), http.StatusOK, "")
	hand, err := e.store.CreateDevice(ctx, db.Device{Name: "by-hand", Host: "192.0.2.9", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}

	ds, err := e.store.DevicesAfter(ctx, db.Scope{All: true}, db.DeviceFilter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]db.Device{}
	for _, d := range ds {
		byName[d.Name] = d
	}
	synced, gone := byName["test1-edge1"], byName["test1-core2"]
	if synced.InventoryKey == nil || gone.InventoryKey == nil || !gone.DisabledBySync {
		t.Fatalf("the sync did not make test1-edge1 and disable test1-core2: %+v %+v", synced, gone)
	}
	pages := func(d db.Device) map[string]string {
		return map[string]string{"page": devicePath(d), "edit form": devicePath(d) + "/edit"}
	}
	link := `<a href="/settings/inventory-sources#insync-row-` + strconv.FormatInt(id, 10) + `" class="device-source-link">NetBox par1</a>`
	plain := `<strong class="device-source-name">NetBox par1</strong>`
	managed := func(name, key string) map[string]string {
		return map[string]string{
			"en": "Managed by inventory source " + name + " (key " + key + "): its name, host, port, platform, login method, group, credential and template follow the source at each sync; change them there.",
			"zh": "由清单来源 " + name + " 管理（键 " + key + "）：其名称、主机、端口、平台、登录方式、分组、凭据和命令模板在每次同步时以来源为准；请在来源中修改。",
		}
	}
	disabled := map[string]string{
		"en": "Disabled by inventory source " + link + ": gone from the source; it is enabled again when it comes back.",
		"zh": "已被清单来源 " + link + " 停用：它已从来源中消失；重新出现在来源中时将再次启用。",
	}
	langs := map[string]string{"en": "", "zh": "zh-CN"}
	for lang, accept := range langs {
		b.header.Set("Accept-Language", accept)
		for what, p := range pages(synced) {
			pg := b.get(p)
			expect(t, lang+" "+what+" of a synced device", pg, http.StatusOK, "")
			expectBody(t, lang+" "+what+" of a synced device", pg, managed(link, *synced.InventoryKey)[lang])
			if strings.Contains(pg.body, `id="device-source-disabled"`) {
				t.Errorf("%s %s of a synced device that is enabled says the sync disabled it", lang, what)
			}
		}
		for what, p := range pages(gone) {
			pg := b.get(p)
			expect(t, lang+" "+what+" of a device the sync disabled", pg, http.StatusOK, "")
			expectBody(t, lang+" "+what+" of a device the sync disabled", pg, disabled[lang], managed(link, *gone.InventoryKey)[lang])
		}
		for what, p := range pages(hand) {
			pg := b.get(p)
			expect(t, lang+" "+what+" of a device made by hand", pg, http.StatusOK, "")
			if strings.Contains(pg.body, `id="device-source"`) || strings.Contains(pg.body, "NetBox par1") {
				t.Errorf("%s %s of a device made by hand names an inventory source:\n%s", lang, what, pg.body)
			}
		}
	}
	b.header.Del("Accept-Language")

	// Without settings.view: the name, not the link, on the page (a
	// viewer) and on the edit form (a role that edits devices only).
	if _, err := e.store.CreateRole(ctx, "Device editors", "", []string{"devices.view", "devices.update"}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct{ user, role, path string }{
		{"viewer", auth.RoleViewer, devicePath(synced)},
		{"editor", "Device editors", devicePath(synced) + "/edit"},
	} {
		e.createUser(u.user, u.user+"-password-1", u.role, true)
		ub := e.browser()
		ub.mustLogin(u.user, u.user+"-password-1")
		pg := ub.get(u.path)
		expect(t, u.user+" "+u.path, pg, http.StatusOK, "")
		expectBody(t, u.user+" "+u.path, pg, managed(plain, *synced.InventoryKey)["en"])
		if strings.Contains(pg.body, "/settings/inventory-sources") {
			t.Errorf("%s, without settings rights, gets a link to the inventory sources on %s", u.user, u.path)
		}
	}
}
