package notify_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"backupd/app/notify"
	"backupd/internal/dbtest"
)

// benchDevices is the size of the fleet of BenchmarkDigest.
const benchDevices = 2000

// BenchmarkWorkerDigest: a run in which all 2,000 devices change (FinishJob
// through the store's job API, as the engine records them) is delivered
// as one digest per channel — a signed webhook (httptest) and an e-mail
// (a real SMTP server on 127.0.0.1), diffs included. Reported, medians of
// the iterations:
//
//	run_ms              the run's 2,000 FinishJob calls with the rule (events recorded with the results)
//	run_no_rules_ms     the same run on a store without rules: the yardstick
//	deliver_ms          from the run's last event to both channels holding their digest, digest window
//	                    aside (the worker claims, renders 2,000 diffs, sends, records)
//	messages/channel    how many messages each channel got for the run (must be 1)
func BenchmarkWorkerDigest(b *testing.B) {
	cert, pool := selfSigned(b)
	ctx := context.Background()
	withRules, noRules := newFleetStore(b, benchDevices), newFleetStore(b, benchDevices)
	rc := &hookReceiver{secret: "bench"}
	srv := newServer(b, rc)
	mb := startMailbox(b, notify.SecuritySTARTTLS, cert)
	withRules.channel(b, hookChannel("hook", srv.URL, "bench"), true)
	withRules.channel(b, emailChannel(mb, notify.SecuritySTARTTLS, "en"), true)
	w := withRules.worker(notify.WorkerOptions{RootCAs: pool, Timeout: 2 * time.Minute})
	// The first backups' events are not part of the runs.
	if _, err := dbtest.Poke(b, withRules.s).ExecContext(ctx, `DELETE FROM deliveries`); err != nil {
		b.Fatal(err)
	}
	var runMS, noRulesMS, deliverMS []float64
	version := 0
	b.ResetTimer()
	for range b.N {
		version++
		b.StopTimer()
		start := time.Now()
		for i := range benchDevices {
			noRules.change(b, i, version)
		}
		noRulesMS = append(noRulesMS, ms(time.Since(start)))
		hooksBefore, mailsBefore := len(rc.requests()), mailCount(mb)
		b.StartTimer()
		start = time.Now()
		for i := range benchDevices {
			withRules.change(b, i, version)
		}
		last := time.Now()
		runMS = append(runMS, ms(last.Sub(start)))
		claimed, err := w.Pass(ctx)
		if err != nil {
			b.Fatal(err)
		}
		deliverMS = append(deliverMS, ms(time.Since(last)))
		b.StopTimer()
		hooks, mails := len(rc.requests())-hooksBefore, mailCount(mb)-mailsBefore
		if claimed != 2*benchDevices || hooks != 1 || mails != 1 {
			b.Fatalf("claimed %d deliveries; %d webhook requests and %d e-mails for the run, want one each", claimed, hooks, mails)
		}
		if got := len(rc.requests()[len(rc.requests())-1].body.Events); got != benchDevices {
			b.Fatalf("the digest holds %d events", got)
		}
		b.StartTimer()
	}
	b.ReportMetric(median(runMS), "run_ms")
	b.ReportMetric(median(noRulesMS), "run_no_rules_ms")
	b.ReportMetric(median(deliverMS), "deliver_ms")
	b.ReportMetric(1, "messages/channel")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func mailCount(mb *mailbox) int {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return len(mb.messages)
}
