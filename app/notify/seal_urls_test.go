package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"backupd/app/notify"
	"backupd/db"
	"backupd/internal/dbtest"
)

func TestMaskURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://hooks.example/in?token=s3cr3t", "https://hooks.example/in?token=•••"},
		{"https://user:pa55@hooks.example:8443/a/b?x=1&token=s3cr3t&flag", "https://•••@hooks.example:8443/a/b?x=•••&token=•••&•••"},
		{"http://127.0.0.1:9/h", "http://127.0.0.1:9/h"},
		{"https://hooks.example/p#frag-s3cr3t", "https://hooks.example/p#•••"},
		{"https://hooks.example/?s3cr3t", "https://hooks.example/?•••"},
		{"not a url", "(invalid URL)"},
	} {
		if got := notify.MaskURL(c.in); got != c.want {
			t.Errorf("MaskURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A webhook's URL is sealed with its headers and key: the row's settings
// hold only the masked URL, pages (ChannelSettings) get the masked URL,
// and the sender (ChannelFromStore) the whole one.
func TestChannelURLSealed(t *testing.T) {
	sealer := testSealer(t)
	const full = "https://bob:pw-XYZ@hooks.example/in?token=tok-URL-123&team=ops"
	for _, key := range [][]byte{[]byte("hmac-key-3"), nil} {
		ch := notify.Channel{Type: notify.TypeWebhook, Name: "hook", Secret: key, Webhook: &notify.WebhookConfig{URL: full}}
		cfg, sealed, err := notify.ChannelToStore(ch, notify.Sealer(sealer))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"tok-URL-123", "pw-XYZ", "bob", "team=ops"} {
			if bytes.Contains(cfg, []byte(v)) || bytes.Contains(sealed, []byte(v)) {
				t.Fatalf("%q of the URL stored unsealed: %s", v, cfg)
			}
		}
		row := db.NotificationChannel{Name: "hook", Type: notify.TypeWebhook, Config: cfg, Secret: sealed}
		settings, info, err := notify.ChannelSettings(row)
		if err != nil || settings.Webhook.URL != "https://•••@hooks.example/in?token=•••&team=•••" || info.HasSecret != (key != nil) {
			t.Fatalf("settings %+v %+v %v", settings.Webhook, info, err)
		}
		got, err := notify.ChannelFromStore(row, notify.Opener(sealer))
		if err != nil || got.Webhook.URL != full || !bytes.Equal(got.Secret, key) {
			t.Fatalf("opened %+v %v", got.Webhook, err)
		}
	}
}

// Rows written before URLs were sealed keep them in clear; the start-up
// pass seals them in the real database, once, and the channel still
// delivers to the whole URL (a real receiver gets the token). A row whose
// secret cannot be opened is left alone and counted.
func TestSealWebhookURLs(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t)
	sealer, other := testSealer(t), testSealer(t)
	var mu sync.Mutex
	var tokens []string
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tokens = append(tokens, r.URL.Query().Get("token"))
		mu.Unlock()
	}))
	legacy := func(name, token string, sealedWith func([]byte) []byte) db.NotificationChannel {
		cfg, _ := json.Marshal(map[string]any{"url": srv.URL + "/in?token=" + token, "headers": map[string]string{"X-Team": "hdr-" + token}})
		row, err := s.CreateNotificationChannel(ctx, db.NotificationChannel{Name: name, Type: notify.TypeWebhook, Enabled: true,
			Config: cfg, Secret: sealedWith([]byte("key-" + token)), Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		return row
	}
	ok := legacy("old", "tok-LEGACY-1", notify.Sealer(sealer))
	lost := legacy("lost key", "tok-LOST-2", notify.Sealer(other))
	n, skipped, err := notify.SealWebhookURLs(ctx, s, notify.Sealer(sealer), notify.Opener(sealer))
	if err != nil || n != 1 || skipped != 1 {
		t.Fatalf("sealed %d, skipped %d, %v; want 1 and 1", n, skipped, err)
	}
	if n, skipped, err = notify.SealWebhookURLs(ctx, s, notify.Sealer(sealer), notify.Opener(sealer)); err != nil || n != 0 || skipped != 1 {
		t.Fatalf("second pass sealed %d, skipped %d, %v", n, skipped, err)
	}
	var config string
	var secretBytes []byte
	if err := dbtest.Peek(t, s).QueryRowContext(ctx, `SELECT config, secret FROM notification_channels WHERE id = ?`, ok.ID).Scan(&config, &secretBytes); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(config+string(secretBytes), "tok-LEGACY-1") || !strings.Contains(config, "token=•••") {
		t.Fatalf("row after sealing holds %s", config)
	}
	row, err := s.GetNotificationChannel(ctx, ok.ID)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := notify.ChannelFromStore(row, notify.Opener(sealer))
	if err != nil || string(ch.Secret) != "key-tok-LEGACY-1" || ch.Webhook.Headers["X-Team"] != "hdr-tok-LEGACY-1" {
		t.Fatalf("sealed channel %+v %v", ch, err)
	}
	if res := notify.Send(ctx, ch, []notify.Event{changedEvent(7, "core-1")}, notify.Options{DeliveryID: "1"}); !res.OK() {
		t.Fatalf("send: %v", res.Err)
	}
	if len(tokens) != 1 || tokens[0] != "tok-LEGACY-1" {
		t.Fatalf("receiver got tokens %q", tokens)
	}
	if still, _ := s.GetNotificationChannel(ctx, lost.ID); !bytes.Equal(still.Config, lost.Config) {
		t.Fatalf("the unreadable row was rewritten: %s", still.Config)
	}
}
