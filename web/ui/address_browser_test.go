package ui_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/internal/dbtest"
)

// TestAddressConfirmInChromium shows a device whose address changed since
// its credential was last sent, in a real browser, in both languages: the
// warning with both addresses, and the Confirm button, which asks first
// (naming the address and the credential) and then lets the credential
// go there.
func TestAddressConfirmInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 60*time.Second, 1280, 900)
	f := newDetailFleet(t, e)
	ctx := context.Background()
	// core-r1 is SSH at 192.0.2.10:2222 with no pinned key; its
	// credential last went to the telnet address.
	if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE devices SET address_pin = 'telnet|192.0.2.10|23|1' WHERE id = ?`, f.coreDev.ID); err != nil {
		t.Fatal(err)
	}
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	var (
		mu    sync.Mutex
		asked string
	)
	dialogs := chromedp.Events(b.ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			mu.Lock()
			asked = ev.Message
			mu.Unlock()
			_, _ = chromedp.Call(b.ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	b.login("root", "root-password-1")

	b.open(devicePath(f.coreDev))
	b.run("device page", chromedp.WaitVisible(chromedp.CSS("#address-changed")))
	if got := b.eval(`document.getElementById("address-was").textContent + " → " + document.getElementById("address-now").textContent`); got != "telnet 192.0.2.10:23 → ssh 192.0.2.10:2222" {
		t.Errorf("addresses shown: %q", got)
	}
	if got := b.eval(`getComputedStyle(document.getElementById("address-changed")).backgroundColor`); got == "rgba(0, 0, 0, 0)" {
		t.Error("the warning is not styled")
	}
	b.shot("device-address-en")
	b.setLang("zh")
	b.run("Chinese page", chromedp.WaitVisible(chromedp.CSS("#address-confirm")))
	for _, id := range []string{"address-title", "address-confirm"} {
		if h := b.eval(`document.getElementById("` + id + `").textContent`); !hasHan(h) {
			t.Errorf("#%s reads %q in Chinese", id, h)
		}
	}
	b.shot("device-address-zh")
	b.setLang("en")

	b.submit("confirm the address", "#address-confirm")
	b.run("notice", chromedp.WaitVisible(chromedp.CSS("#device-notice")))
	if got := b.eval(`document.getElementById("device-notice").textContent`); !strings.Contains(got, "The new address is confirmed.") {
		t.Errorf("notice %q", got)
	}
	mu.Lock()
	q := asked
	mu.Unlock()
	if !strings.Contains(q, "ssh 192.0.2.10:2222") || !strings.Contains(q, "lab login") {
		t.Errorf("the confirmation asked %q", q)
	}
	if b.eval(`String(document.getElementById("address-changed") === null)`) != "true" {
		t.Error("the warning is still shown after confirming")
	}
	d, _ := e.store.GetDevice(ctx, f.coreDev.ID)
	if d.AddressPin == nil || *d.AddressPin != d.Address() {
		t.Fatalf("the address was not confirmed: %v", d.AddressPin)
	}
	b.checkConsole()
}
