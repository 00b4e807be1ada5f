package notify_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"backupd/app/netguard"
	"backupd/app/notify"
	"backupd/db"
	"backupd/internal/dbtest"
)

// A test delivery opens the stored channel, secret included, and sends
// the made-up event a receiver can tell from a real one; a channel whose
// receiver the outbound allow list refuses is refused here too.
func TestSendTestDeliversTheTestEvent(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t)
	sealer := testSealer(t)
	rc := &receiver{}
	srv := newServer(t, rc)
	store := func(name, url string) db.NotificationChannel {
		t.Helper()
		config, sealed, err := notify.ChannelToStore(notify.Channel{Type: notify.TypeWebhook, Name: name,
			Webhook: &notify.WebhookConfig{URL: url}, Secret: []byte("signing-key")}, notify.Sealer(sealer))
		if err != nil {
			t.Fatal(err)
		}
		row, err := s.CreateNotificationChannel(ctx, db.NotificationChannel{Name: name, Type: notify.TypeWebhook,
			Enabled: true, Config: config, Secret: sealed, Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		return row
	}
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	opts := notify.Options{UserAgent: "backupd/test", Now: func() time.Time { return now }}

	res := notify.SendTest(ctx, s, sealer, store("ops", srv.URL+"/hook"), opts)
	if !res.OK() || res.Status != "200" {
		t.Fatalf("test delivery: status %q, %v", res.Status, res.Err)
	}
	got := rc.last(t)
	var body struct {
		Events []notify.Event `json:"events"`
	}
	if err := json.Unmarshal(got.body, &body); err != nil {
		t.Fatalf("payload %s: %v", got.body, err)
	}
	if len(body.Events) != 1 || body.Events[0].Kind != notify.KindTest || body.Events[0].Device == nil ||
		body.Events[0].Device.Name != "backupd-test" || !body.Events[0].At.Equal(now) {
		t.Errorf("delivered %s, want one %s event of device backupd-test at %v", got.body, notify.KindTest, now)
	}
	if !strings.HasPrefix(got.header.Get("User-Agent"), "backupd/test") {
		t.Errorf("User-Agent %q", got.header.Get("User-Agent"))
	}

	// The cloud metadata address is refused unless the allow list holds
	// it: the test goes where a real delivery would, and nowhere else.
	if err := netguard.Save(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	n := len(rc.got)
	res = notify.SendTest(ctx, s, sealer, store("metadata", "http://169.254.169.254/latest"), opts)
	if res.OK() || res.Err == nil {
		t.Errorf("a delivery to the metadata address: %+v", res)
	}
	if len(rc.got) != n {
		t.Error("the refused test reached a receiver")
	}

	// A secret this sealer cannot open fails the test, saying so.
	other := testSealer(t)
	res = notify.SendTest(ctx, s, other, store("lost key", srv.URL+"/hook"), opts)
	if res.OK() || res.Err == nil {
		t.Errorf("a channel whose secret cannot be opened: %+v", res)
	}
}
