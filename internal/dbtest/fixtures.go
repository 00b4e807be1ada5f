package dbtest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"testing"
	"time"

	"backupd/db"
)

// Rows several packages' tests need: a collector enrolled in a zone, a
// notification channel.

// Collector enrols a collector name in zone, through an enrolment token
// as a real one is, and returns it. Its token and bearer hash are those
// of "enrol-NAME" and "bearer-NAME".
func Collector(t testing.TB, s *db.Store, zone int64, name string) db.Collector {
	t.Helper()
	ctx := context.Background()
	if _, err := s.CreateEnrolmentToken(ctx, zone, hashOf("enrol-"+name), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	c, err := s.EnrolCollector(ctx, hashOf("enrol-"+name), db.Collector{Name: name, PublicKey: "pk-" + name, Version: "v1"}, hashOf("bearer-"+name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Channel adds an enabled webhook channel name (to an address that never
// answers) and returns its id.
func Channel(t testing.TB, s *db.Store, name string) int64 {
	t.Helper()
	c, err := s.CreateNotificationChannel(context.Background(), db.NotificationChannel{
		Name: name, Type: db.ChannelWebhook, Enabled: true, Config: json.RawMessage(`{"url":"https://example.invalid/hook"}`),
		Secret: []byte("sealed-bytes"),
	})
	if err != nil {
		t.Fatalf("CreateNotificationChannel(%q): %v", name, err)
	}
	return c.ID
}

func hashOf(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}
