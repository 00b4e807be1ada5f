package notify_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"backupd/app/notify"
	"backupd/app/secret"
	"backupd/db"
)

func testSealer(t *testing.T) *secret.Sealer {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	s, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A channel a form built goes to the store and comes back the same, its
// secret sealed on the way (never in the row's bytes) and opened again.
func TestChannelStoreRoundTrip(t *testing.T) {
	sealer := testSealer(t)
	channels := []notify.Channel{
		{Type: notify.TypeWebhook, Name: "hook", Language: "en", Secret: []byte("hmac-key-1"),
			Webhook: &notify.WebhookConfig{URL: "https://hooks.example/x", Headers: map[string]string{"X-Team": "netops"}}},
		{Type: notify.TypeSlack, Name: "slack", Language: "zh", Secret: []byte("https://hooks.slack.example/services/T/B/tok3n"),
			Chat: &notify.ChatConfig{SkipVerify: true}},
		{Type: notify.TypeEmail, Name: "mail", Language: "en", Secret: []byte("smtp-pass"),
			Email: &notify.EmailConfig{Host: "mail.example", Port: 587, Username: "u", From: "backupd@example", To: []string{"ops@example"}}},
		{Type: notify.TypeWebhook, Name: "unsigned", Webhook: &notify.WebhookConfig{URL: "http://127.0.0.1:9/h"}},
	}
	for _, ch := range channels {
		cfg, sealed, err := notify.ChannelToStore(ch, notify.Sealer(sealer))
		if err != nil {
			t.Fatalf("%s: %v", ch.Name, err)
		}
		if len(ch.Secret) > 0 && (len(sealed) == 0 || bytes.Contains(sealed, ch.Secret) || bytes.Contains(cfg, ch.Secret)) {
			t.Fatalf("%s: secret not sealed or leaked into settings: %s", ch.Name, cfg)
		}
		if len(ch.Secret) == 0 && sealed != nil && ch.Type != notify.TypeWebhook { // a webhook's URL is always sealed
			t.Fatalf("%s: sealed bytes for no secret", ch.Name)
		}
		row := db.NotificationChannel{Name: ch.Name, Type: ch.Type, Language: ch.Language, Config: cfg, Secret: sealed}
		got, err := notify.ChannelFromStore(row, notify.Opener(sealer))
		if err != nil {
			t.Fatalf("%s: %v", ch.Name, err)
		}
		a, _ := json.Marshal(ch)
		b, _ := json.Marshal(got)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: round trip\n got %s\nwant %s", ch.Name, b, a)
		}
	}
}

func TestChannelFromStoreErrors(t *testing.T) {
	sealer, other := testSealer(t), testSealer(t)
	sealed := notify.Sealer(other)([]byte("k"))
	_, err := notify.ChannelFromStore(db.NotificationChannel{Name: "h", Type: "webhook", Config: json.RawMessage(`{"url":"https://x.example"}`), Secret: sealed},
		notify.Opener(sealer))
	if !errors.Is(err, notify.ErrSecret) {
		t.Fatalf("secret of another key: %v", err)
	}
	// A device password's sealed bytes are not a channel secret.
	_, err = notify.ChannelFromStore(db.NotificationChannel{Name: "h", Type: "webhook", Config: json.RawMessage(`{}`),
		Secret: sealer.Seal("pw", secret.PurposePassword)}, notify.Opener(sealer))
	if !errors.Is(err, notify.ErrSecret) {
		t.Fatalf("secret of another purpose: %v", err)
	}
	_, err = notify.ChannelFromStore(db.NotificationChannel{Name: "h", Type: "email", Config: json.RawMessage(`{"to":"s3cr3t-not-a-list"}`)}, nil)
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("bad settings: %v", err)
	}
	if _, err = notify.ChannelFromStore(db.NotificationChannel{Name: "h", Type: "pager"}, nil); err == nil {
		t.Fatal("unknown type accepted")
	}
	if _, _, err := notify.ChannelToStore(notify.Channel{Type: notify.TypeWebhook, Webhook: &notify.WebhookConfig{URL: "ftp://x"}}, nil); err == nil {
		t.Fatal("bad URL accepted")
	}
}

// A webhook's custom header values are sealed with its key: the settings
// name the headers only, ChannelSettings tells names and whether a key is
// kept without opening anything, and ChannelFromStore gives the values
// back. A row written before (values in the settings, the key sealed
// plain) still opens.
func TestChannelHeaderValuesSealed(t *testing.T) {
	sealer := testSealer(t)
	for _, key := range [][]byte{[]byte("hmac-key-2"), nil} {
		ch := notify.Channel{Type: notify.TypeWebhook, Name: "hook", Secret: key, Webhook: &notify.WebhookConfig{URL: "https://h.example/x",
			Headers: map[string]string{"Authorization": "Bearer tok-<&>-1", "X-Api-Key": "apikey-2"}}}
		cfg, sealed, err := notify.ChannelToStore(ch, notify.Sealer(sealer))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"tok-", "apikey-2"} {
			if bytes.Contains(cfg, []byte(v)) || bytes.Contains(sealed, []byte(v)) {
				t.Fatalf("header value %q stored unsealed: %s", v, cfg)
			}
		}
		row := db.NotificationChannel{Name: "hook", Type: notify.TypeWebhook, Config: cfg, Secret: sealed}
		settings, info, err := notify.ChannelSettings(row)
		if err != nil || settings.Webhook.Headers != nil || settings.Secret != nil || info.HasSecret != (key != nil) ||
			strings.Join(info.HeaderNames, ",") != "Authorization,X-Api-Key" {
			t.Fatalf("settings %+v %+v %v", settings.Webhook, info, err)
		}
		got, err := notify.ChannelFromStore(row, notify.Opener(sealer))
		if err != nil || !bytes.Equal(got.Secret, key) || got.Webhook.Headers["Authorization"] != "Bearer tok-<&>-1" ||
			got.Webhook.Headers["X-Api-Key"] != "apikey-2" || len(got.Webhook.Headers) != 2 {
			t.Fatalf("opened %+v %v", got, err)
		}
		if _, err := notify.ChannelFromStore(row, nil); !errors.Is(err, notify.ErrSecret) {
			t.Fatalf("sealed headers without an opener: %v", err)
		}
	}
	legacy := db.NotificationChannel{Name: "old", Type: notify.TypeWebhook,
		Config: json.RawMessage(`{"url":"https://h.example/x","headers":{"X-Team":"netops"}}`), Secret: notify.Sealer(sealer)([]byte("k1"))}
	got, err := notify.ChannelFromStore(legacy, notify.Opener(sealer))
	if err != nil || string(got.Secret) != "k1" || got.Webhook.Headers["X-Team"] != "netops" {
		t.Fatalf("legacy row %+v %v", got, err)
	}
	settings, info, err := notify.ChannelSettings(legacy)
	if err != nil || settings.Webhook.Headers != nil || !info.HasSecret || strings.Join(info.HeaderNames, ",") != "X-Team" {
		t.Fatalf("legacy settings %+v %+v %v", settings.Webhook, info, err)
	}
	// Too much to seal: a clear error, not a row the store refuses.
	big := map[string]string{}
	for i := range 20 {
		big["X-H"+strconv.Itoa(i)] = strings.Repeat("v", 1000)
	}
	if _, _, err := notify.ChannelToStore(notify.Channel{Type: notify.TypeWebhook, Webhook: &notify.WebhookConfig{URL: "https://h.example/x", Headers: big}},
		notify.Sealer(sealer)); err == nil || strings.Contains(err.Error(), "vvv") {
		t.Fatalf("oversized headers: %v", err)
	}
}
