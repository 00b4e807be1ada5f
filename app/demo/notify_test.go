package demo_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"backupd/app/demo"
	"backupd/app/notify"
	"backupd/db"
	"backupd/internal/testkit"
)

// The demo's channel points at the demo's receiver, which takes signed
// deliveries; a restart repoints it at the new receiver, and a demo
// channel the user pointed at their own URL is left alone.
func TestDemoNotifications(t *testing.T) {
	store, sealer, _ := testkit.OpenData(t)
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	channel := func() (db.NotificationChannel, notify.WebhookConfig) {
		t.Helper()
		rows, err := store.NotificationChannels(ctx)
		if err != nil || len(rows) != 1 || rows[0].Name != demo.ChannelName {
			t.Fatalf("channels %+v, %v", rows, err)
		}
		settings, _, err := notify.ChannelSettings(rows[0])
		if err != nil || settings.Webhook == nil {
			t.Fatalf("settings %+v, %v", settings, err)
		}
		return rows[0], *settings.Webhook
	}

	first, err := demo.StartNotifications(ctx, store, sealer, log)
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	second, err := demo.StartNotifications(ctx, store, sealer, log)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	row, cfg := channel()
	if cfg.URL != second.URL() || first.URL() == second.URL() {
		t.Fatalf("channel URL %s, receiver %s (before %s)", cfg.URL, second.URL(), first.URL())
	}
	rules, err := store.NotificationRules(ctx)
	if err != nil || len(rules) != 1 || rules[0].Name != demo.RuleName || rules[0].ChannelIDs[0] != row.ID || !rules[0].IncludeDiff {
		t.Fatalf("rules %+v, %v", rules, err)
	}

	ch, err := notify.ChannelFromStore(row, notify.Opener(sealer))
	if err != nil {
		t.Fatal(err)
	}
	ev := notify.Event{Schema: notify.Schema, ID: "1", Kind: "config.changed", Device: &notify.Device{Name: "core-rtr-01"}}
	if res := notify.Send(ctx, ch, []notify.Event{ev}, notify.Options{DeliveryID: "1"}); !res.OK() {
		t.Fatalf("send: %+v", res)
	}
	got := second.Received()
	if len(got) != 1 || !got[0].SignatureOK || got[0].Devices[0] != "core-rtr-01" || got[0].Kinds[0] != "config.changed" {
		t.Fatalf("received %+v", got)
	}

	// The user points it at their own receiver: a restart keeps that.
	if _, err := store.UpdateNotificationChannel(ctx, row.ID, func(c *db.NotificationChannel) error {
		c.Config = json.RawMessage(`{"url":"https://hooks.example.net/backupd"}`)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	third, err := demo.StartNotifications(ctx, store, sealer, log)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if _, cfg := channel(); cfg.URL != "https://hooks.example.net/backupd" {
		t.Fatalf("the user's URL was replaced by %s", cfg.URL)
	}
}
