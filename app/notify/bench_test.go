package notify_test

import (
	"fmt"
	"strings"
	"testing"

	"backupd/app/notify"
)

// digestEvents is a scheduled run's worth of changes: n devices, each
// with a diff of about 60 lines.
func digestEvents(b *testing.B, n int) []notify.Event {
	b.Helper()
	var old, cur strings.Builder
	for i := range 20 {
		fmt.Fprintf(&old, "interface Gi0/%d\n description old %d\n", i, i)
		fmt.Fprintf(&cur, "interface Gi0/%d\n description new %d\n", i, i)
	}
	d := notify.NewDiff(old.String(), cur.String(), nil, 0)
	events := make([]notify.Event, n)
	for i := range events {
		e := changedEvent(int64(i), fmt.Sprintf("sw-%04d", i))
		e.Diff = d
		events[i] = e
	}
	return events
}

// Rendering one digest of 2,000 changed devices for each kind of channel
// (no network): what a delivery costs before it is sent.
func BenchmarkDigest2000(b *testing.B) {
	events := digestEvents(b, 2000)
	mail := notify.Channel{Type: notify.TypeEmail, Name: "noc", Email: &notify.EmailConfig{Host: "127.0.0.1", From: "a@example.net", To: []string{"b@example.net"}}}
	b.Run("email", func(b *testing.B) {
		var size int
		for b.Loop() {
			msg, err := notify.EmailMessage(mail, events, notify.Options{DeliveryID: "1"})
			if err != nil {
				b.Fatal(err)
			}
			size = len(msg)
		}
		b.ReportMetric(float64(size), "bytes/message")
	})
	b.Run("webhook", func(b *testing.B) {
		var size int
		for b.Loop() {
			body, err := notify.WebhookBody("1", events)
			if err != nil {
				b.Fatal(err)
			}
			size = len(body)
		}
		b.ReportMetric(float64(size), "bytes/message")
	})
	for _, typ := range []string{notify.TypeSlack, notify.TypeTeams} {
		b.Run(typ, func(b *testing.B) {
			var size int
			for b.Loop() {
				body, err := notify.ChatBody(typ, "en", events)
				if err != nil {
					b.Fatal(err)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "bytes/message")
		})
	}
}
