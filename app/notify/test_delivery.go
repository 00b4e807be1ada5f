package notify

import (
	"context"
	"strconv"
	"time"

	"backupd/app/netguard"
	"backupd/app/secret"
	"backupd/db"
)

// KindTest is the event kind of a test delivery (the web interface's
// "Send test"): a made-up change of a made-up device, so that a receiver
// can tell it from a real event.
const KindTest = "notification.test"

// TestTimeout bounds a test delivery unless the caller says otherwise:
// someone waits for its answer.
const TestTimeout = 15 * time.Second

// TestEvent is what a test delivery at now carries.
func TestEvent(now time.Time) Event {
	return Event{
		Schema: Schema, ID: "test-" + strconv.FormatInt(now.UnixNano(), 10), Kind: KindTest,
		At: now.UTC().Truncate(time.Second), Trigger: "manual",
		Device: &Device{ID: 0, Name: "backupd-test", Host: "192.0.2.1", Platform: "test", GroupPath: []string{}},
	}
}

// SendTest delivers the test event to the stored channel row now, with
// its stored settings and secret (opened with sealer) and the stored
// outbound allow list, bounded by opts.Timeout (TestTimeout when 0). The
// result says how it went; like every delivery's, its error names what
// failed and never a secret. Nothing is recorded: a test is no delivery
// of the outbox.
func SendTest(ctx context.Context, store *db.Store, sealer *secret.Sealer, row db.NotificationChannel, opts Options) Result {
	ch, err := ChannelFromStore(row, Opener(sealer))
	if err != nil {
		return Result{Permanent: true, Err: err}
	}
	outbound, err := netguard.Load(ctx, store)
	if err != nil {
		return Result{Err: err}
	}
	if opts.Timeout == 0 {
		opts.Timeout = TestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	now := opts.now()
	opts.DeliveryID = "test-" + strconv.FormatInt(row.ID, 10) + "-" + strconv.FormatInt(now.UnixNano(), 10)
	opts.Outbound = outbound
	return Send(ctx, ch, []Event{TestEvent(now)}, opts)
}
