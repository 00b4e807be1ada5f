package notify

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"backupd/app/backup"
	"backupd/app/netguard"
	"backupd/app/redact"
	"backupd/db"
	"backupd/db/outbox"
)

// The delivery worker sends what the outbox holds. Events are recorded
// with the backup result that caused them (db, FinishJob and friends),
// with one delivery per matching channel; the worker claims the due
// deliveries, sends each channel one message holding all of its new
// events (a digest when there are several), and records how it went. A
// message is a batch the store keeps from before its first send (its
// X-Backupd-Delivery and its events as rendered then), so that a retry,
// also by another process after a crash or a restart, sends the same
// bytes under the same id, while events recorded since go in a message
// of their own. It runs on its own goroutine and only reads the store: a
// channel that is down never slows a backup.

// Defaults of WorkerOptions.
const (
	DefaultWindow      = 60 * time.Second
	DefaultPoll        = 2 * time.Second
	DefaultConcurrency = 4
	// DefaultBatch bounds the deliveries one pass claims (and so the
	// events of one digest).
	DefaultBatch = 5000
	// FirstRetry is the wait after a delivery's first failure; it doubles
	// with each failure up to MaxRetryWait. A delivery still failing
	// outbox.DeliveryMaxAge after its event gives up.
	FirstRetry   = time.Minute
	MaxRetryWait = 6 * time.Hour
	// MaxWindow bounds the digest window.
	MaxWindow = time.Hour
	// DefaultMaxHold bounds how long events are held while others keep
	// coming (a long run, a steady trickle of changes).
	DefaultMaxHold = 10 * time.Minute
)

// WorkerOptions tune a Worker; zero values take the defaults.
type WorkerOptions struct {
	// Window is the digest window: new events are sent once none came for
	// this long, so that the others of the same run (a scheduled backup
	// of the whole fleet) go with them in one message per channel — but
	// never held longer than MaxHold. Retries are not held.
	Window  time.Duration
	MaxHold time.Duration
	// Poll is how often the worker looks at the queue.
	Poll time.Duration
	// Concurrency bounds the channels sent to at once.
	Concurrency int
	// Batch bounds the deliveries claimed in one pass.
	Batch int
	// Timeout bounds one send (0: notify's defaults, 10 s HTTP, 30 s SMTP).
	Timeout time.Duration
	// PublicURL is the web interface's address as users reach it
	// ("https://backupd.example"); events link to their page when set.
	PublicURL string
	UserAgent string
	RootCAs   *x509.CertPool
	// LockDir holds the worker's liveness lock, so that a starting worker
	// can tell the leases of a dead process from a live one's; "" keeps
	// none (Recover then releases no one's leases).
	LockDir string
	Logger  *slog.Logger
	// Sent, when set, is told how each delivery of a send went: result is
	// sent, failed (tried again later) or gave_up.
	Sent func(channelType, result string, deliveries int)
	// Now is the worker's clock; nil: time.Now.
	Now func() time.Time
	// Secrets masks the secrets of the diffs events carry, when the
	// secret masking setting says so (app/redact). Without it such
	// events carry no diff.
	Secrets *redact.Keyring
}

// Worker delivers the outbox. Run it once per process.
type Worker struct {
	store *db.Store
	open  func([]byte) ([]byte, error)
	o     WorkerOptions
	owner string
	log   *slog.Logger
}

// NewWorker returns a worker of store that opens channel secrets with open
// (Opener of the data directory's sealer).
func NewWorker(store *db.Store, open func([]byte) ([]byte, error), o WorkerOptions) *Worker {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	o.Window = min(o.Window, MaxWindow)
	if o.MaxHold <= 0 {
		o.MaxHold = DefaultMaxHold
	}
	o.MaxHold = max(o.MaxHold, o.Window)
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	return &Worker{store: store, open: open, o: o, owner: "notify-" + uuid.NewString(), log: o.Logger}
}

// Recover gives back the deliveries that workers of processes that died
// (kill -9, a power cut) had leased: they are due again at once. Leases
// of live workers are left alone.
func (w *Worker) Recover(ctx context.Context) (int, error) {
	if w.o.LockDir == "" {
		return 0, nil
	}
	owners, err := w.store.DeliveryOwners(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, owner := range owners {
		if owner == w.owner || !strings.HasPrefix(owner, "notify-") || strings.ContainsAny(owner, `/\`) {
			continue
		}
		release, dead := claimDeadWorker(w.o.LockDir, owner)
		if !dead {
			continue
		}
		n, err := w.store.ReleaseDeliveries(ctx, owner)
		release()
		if err != nil {
			return total, err
		}
		total += n
	}
	if total > 0 {
		w.log.Warn("deliveries of a stopped process are due again", "count", total)
	}
	return total, nil
}

// Run delivers until ctx ends; a send in flight then gets its own timeout
// to finish, so that what was delivered is recorded.
func (w *Worker) Run(ctx context.Context) error {
	if w.o.LockDir != "" {
		release, err := holdWorkerLock(w.o.LockDir, w.owner)
		if err != nil {
			return err
		}
		defer release()
	}
	if _, err := w.Recover(ctx); err != nil && ctx.Err() == nil {
		w.log.Error("releasing deliveries of stopped processes", "err", err)
	}
	t := time.NewTicker(w.o.Poll)
	defer t.Stop()
	for {
		// Bounded: each pass claims at most Batch; the next waits a tick
		// unless this one was full.
		for range 100 {
			n, err := w.Pass(ctx)
			if err != nil && ctx.Err() == nil {
				w.log.Error("delivering notifications", "err", err)
			}
			if err != nil || n < w.o.Batch || ctx.Err() != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// due reports whether a pass at now has something to send: new
// deliveries after a window without another one (or held MaxHold), a
// retry that is due, or a lease that ran out.
func (w *Worker) due(q outbox.DeliveryQueue, now time.Time) bool {
	return (q.NewestPending != nil && !q.NewestPending.After(now.Add(-w.o.Window))) ||
		(q.OldestPending != nil && !q.OldestPending.After(now.Add(-w.o.MaxHold))) ||
		(q.NextRetry != nil && !q.NextRetry.After(now)) ||
		(q.LeaseEnds != nil && !q.LeaseEnds.After(now))
}

// Pass claims what is due (once new deliveries are quiet for the window,
// everything due goes: one digest per channel), sends it and records the
// results. It returns how many deliveries it claimed.
func (w *Worker) Pass(ctx context.Context) (int, error) {
	now := w.o.Now()
	q, err := w.store.DeliveryQueueState(ctx)
	if err != nil {
		return 0, err
	}
	if !w.due(q, now) {
		return 0, nil
	}
	claimed, err := w.store.ClaimDeliveries(ctx, now, w.o.Batch, w.owner)
	if err != nil || len(claimed) == 0 {
		return 0, err
	}
	// Claimed ordered by channel: per channel, each batch already sent
	// goes again as it was, and the deliveries never sent go together
	// in a new one.
	type key struct{ channel, batch int64 }
	var batches [][]outbox.Delivery
	at := map[key]int{}
	for _, d := range claimed {
		k := key{d.ChannelID, d.BatchID}
		i, ok := at[k]
		if !ok {
			i = len(batches)
			at[k] = i
			batches = append(batches, nil)
		}
		batches[i] = append(batches[i], d)
	}
	how := rendering{mask: true}
	if how.rules, err = w.store.NoiseRules(ctx); err != nil {
		how.rules = nil
	}
	// Masked unless the setting, read, says otherwise.
	if m, err := w.store.SecretMaskingSettings(ctx); err == nil {
		how.mask = m.Notifications
	}
	sem := make(chan struct{}, w.o.Concurrency)
	var wg sync.WaitGroup
	for _, b := range batches {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			w.sendBatch(context.WithoutCancel(ctx), b, how)
		}()
	}
	wg.Wait()
	return len(claimed), nil
}

// sendBatch sends one channel one batch of deliveries and records the
// outcome. A batch sent before goes again with its id and its events as
// first rendered; deliveries never sent become a new batch, recorded
// before the send, so that whatever happens to this process the
// receiver gets the same message again.
func (w *Worker) sendBatch(ctx context.Context, batch []outbox.Delivery, how rendering) {
	ids := make([]int64, len(batch))
	for i, d := range batch {
		ids[i] = d.ID
	}
	chID := batch[0].ChannelID
	row, err := w.store.GetNotificationChannel(ctx, chID)
	if errors.Is(err, db.ErrNotFound) {
		return // deleted with its deliveries
	}
	if err != nil {
		w.fail(ctx, "unknown", chID, batch, Result{Err: err})
		return
	}
	if !row.Enabled {
		w.fail(ctx, row.Type, chID, batch, Result{Permanent: true, Err: errors.New("the channel is disabled")})
		return
	}
	ch, err := ChannelFromStore(row, w.open)
	if err != nil {
		w.fail(ctx, row.Type, chID, batch, Result{Permanent: true, Err: err})
		return
	}
	deliveryID, events, ok := w.batchContent(ctx, batch, ids, how)
	if !ok {
		return
	}
	// The allow list as it is now, on whichever node sends.
	outbound, err := netguard.Load(ctx, w.store)
	if err != nil {
		w.fail(ctx, row.Type, chID, batch, Result{Err: err})
		return
	}
	res := Send(ctx, ch, events, Options{DeliveryID: deliveryID, UserAgent: w.o.UserAgent, RootCAs: w.o.RootCAs,
		Timeout: w.o.Timeout, Now: w.o.Now, Outbound: outbound})
	if !res.OK() {
		w.fail(ctx, row.Type, chID, batch, res)
		return
	}
	now := w.o.Now()
	if err := w.store.MarkDelivered(ctx, ids, res.Status, now); err != nil {
		w.log.Error("recording a sent notification", "channel_id", chID, "err", err)
		return
	}
	if err := w.store.RecordChannelResult(ctx, chID, true, now, res.Status, ""); err != nil {
		w.log.Error("recording a channel's health", "channel_id", chID, "err", err)
	}
	w.count(row.Type, outbox.DeliverySent, len(ids))
	w.log.Info("notification sent", "channel_id", chID, "channel_type", row.Type, "events", len(ids), "status", res.Status,
		"delivery", deliveryID)
}

// batchContent returns the id and the events of batch: those its batch
// keeps when it was sent before, or, for deliveries never sent, new ones
// rendered now and recorded as their batch first. ok is false when the
// deliveries are no longer this worker's (their lease ran out).
func (w *Worker) batchContent(ctx context.Context, batch []outbox.Delivery, ids []int64, how rendering) (string, []Event, bool) {
	render := func() []Event {
		events := make([]Event, 0, len(batch))
		for _, d := range batch {
			events = append(events, w.event(ctx, d, how))
		}
		return BoundDiffs(events)
	}
	if id := batch[0].BatchID; id != 0 {
		b, err := w.store.GetDeliveryBatch(ctx, id)
		if err != nil {
			w.log.Error("reading a delivery batch", "batch", id, "err", err)
			return "", nil, false // still leased: tried again when the lease runs out
		}
		var events []Event
		if len(b.Events) == 0 || json.Unmarshal(b.Events, &events) != nil || len(events) == 0 {
			// Kept events lost (a batch settled, then a delivery of it
			// put back by hand): the same id, the events as they are now.
			events = render()
		}
		return b.Key, events, true
	}
	events := render()
	deliveryID := strconv.FormatInt(ids[0], 10)
	if len(ids) > 1 {
		deliveryID += "-" + strconv.FormatInt(ids[len(ids)-1], 10)
	}
	raw, err := json.Marshal(events)
	if err == nil {
		_, err = w.store.CreateDeliveryBatch(ctx, w.owner, batch[0].ChannelID, deliveryID, raw, ids, w.o.Now())
	}
	if err != nil {
		w.log.Error("recording a delivery batch", "channel_id", batch[0].ChannelID, "err", err)
		return "", nil, false
	}
	return deliveryID, events, true
}

// fail records a failed send of one batch: its deliveries are tried
// again together after the backoff of their attempt count, or all give
// up (refused for good, or the retry would come more than
// outbox.DeliveryMaxAge after the oldest of its events), so that a batch
// stays whole.
func (w *Worker) fail(ctx context.Context, chType string, chID int64, batch []outbox.Delivery, res Result) {
	now := w.o.Now()
	ids := make([]int64, len(batch))
	attempts, oldest := 0, batch[0].CreatedAt
	for i, d := range batch {
		ids[i] = d.ID
		attempts = max(attempts, d.Attempts)
		if d.CreatedAt.Before(oldest) {
			oldest = d.CreatedAt
		}
	}
	retryAt := now.Add(Backoff(attempts))
	msg := "delivery failed"
	if res.Err != nil {
		msg = res.Err.Error()
	}
	giveUp := res.Permanent || oldest.Before(retryAt.Add(-outbox.DeliveryMaxAge))
	gaveUp := 0
	gone, err := w.store.MarkFailed(ctx, w.owner, ids, outbox.DeliveryFailure{Status: res.Status, Error: msg, At: now,
		RetryAt: retryAt, Permanent: giveUp})
	if err != nil {
		w.log.Error("recording a failed notification", "channel_id", chID, "err", err)
	} else {
		gaveUp = len(gone)
		w.count(chType, outbox.DeliveryFailed, len(ids)-len(gone))
	}
	w.count(chType, outbox.DeliveryGaveUp, gaveUp)
	if err := w.store.RecordChannelResult(ctx, chID, false, now, res.Status, msg); err != nil {
		w.log.Error("recording a channel's health", "channel_id", chID, "err", err)
	}
	// The error is secret-free by notify's contract; no configuration.
	w.log.Warn("notification not delivered", "channel_id", chID, "channel_type", chType, "events", len(batch),
		"status", res.Status, "err", msg, "gave_up", gaveUp, "permanent", res.Permanent)
}

func (w *Worker) count(chType, result string, n int) {
	if w.o.Sent != nil && n > 0 {
		w.o.Sent(chType, result, n)
	}
}

// Backoff is the wait after a delivery's attempts-th failed attempt:
// FirstRetry, doubling, at most MaxRetryWait.
func Backoff(attempts int) time.Duration {
	d := FirstRetry
	for i := 1; i < attempts && d < MaxRetryWait; i++ {
		d *= 2
	}
	return min(d, MaxRetryWait)
}

// event renders one delivery's event for receivers: the facts the outbox
// kept, and for a change the diff's counts (and the diff itself where the
// rule includes it), made now from the two versions. A version gone since
// (retention) leaves the event without them, not undelivered.
// rendering is how events are rendered in one pass: the user's noise
// rules, and whether the diffs' secrets are masked.
type rendering struct {
	rules []db.NoiseRule
	mask  bool
}

func (w *Worker) event(ctx context.Context, d outbox.Delivery, how rendering) Event {
	p := d.Event.Payload
	ev := Event{
		Schema: Schema, ID: strconv.FormatInt(d.OutboxID, 10), Kind: string(p.Kind), At: p.At.UTC(), Trigger: p.Trigger,
	}
	if !p.Kind.System() && !d.Event.Kind.System() {
		ev.Device = &Device{ID: p.DeviceID, Name: p.DeviceName, Host: p.DeviceHost, Platform: p.DevicePlatform, GroupPath: p.GroupPath}
		if ev.Device.GroupPath == nil {
			ev.Device.GroupPath = []string{}
		}
	}
	if ev.Kind == "" {
		ev.Kind = string(d.Event.Kind)
	}
	if ev.At.IsZero() {
		ev.At = d.Event.CreatedAt
	}
	if p.Git != nil {
		ev.Git = &Git{Remote: p.Git.Remote, Attempts: p.Git.Attempts}
	}
	if p.Failure != nil {
		ev.Failure = &Failure{Stage: p.Failure.Stage, Reason: p.Failure.Reason, Consecutive: p.Failure.Consecutive}
	}
	if p.Stale != nil {
		ev.Stale = &Stale{LastGoodAt: p.Stale.LastGoodAt, ThresholdSeconds: p.Stale.ThresholdSeconds}
	}
	if r := p.Restore; r != nil {
		ev.Restore = &Restore{ID: r.ID, State: r.State, VersionID: r.VersionID, RequestedBy: r.RequestedBy, Reason: r.Reason,
			DecidedBy: r.DecidedBy, DecisionNote: r.DecisionNote, Stage: r.Stage, Error: r.Error, ErrorReason: r.ErrorReason,
			Path: r.Path}
		if b, err := w.store.GetBackup(ctx, r.VersionID); err == nil {
			at := b.StartedAt.UTC()
			ev.Restore.VersionAt = &at
		}
	}
	if c := p.ChangeSet; c != nil {
		ev.ChangeSet = &ChangeSet{ID: c.ID, Name: c.Name, State: c.State, CreatedBy: c.CreatedBy, ApprovedBy: c.ApprovedBy,
			RejectedBy: c.RejectedBy, DecisionNote: c.DecisionNote, Reason: c.Reason, Devices: c.Devices, Path: c.Path}
		if n := c.Counts; n != nil {
			ev.ChangeSet.Counts = &ChangeSetCounts{Succeeded: n.Succeeded, Failed: n.Failed, Skipped: n.Skipped,
				Interrupted: n.Interrupted, Running: n.Running}
		}
	}
	if src := p.Inventory; src != nil {
		ev.InventorySource = &InventorySource{ID: src.ID, Name: src.Name, Kind: src.Kind, Path: src.Path}
	}
	if p.BackupID != "" && ev.Failure == nil {
		ev.Backup = &Backup{ID: p.BackupID, PreviousID: p.PreviousBackupID}
		if b, err := w.store.GetBackup(ctx, p.BackupID); err == nil {
			ev.Backup.StartedAt = b.StartedAt.UTC()
		}
		// A change's diff, or the one a requested restore would make.
		if (p.Kind == outbox.EventConfigChanged || p.Kind == outbox.EventRestoreRequested) && p.PreviousBackupID != "" {
			var keys *redact.Keyring
			if how.mask {
				keys = w.o.Secrets
			}
			res, err := backup.DiffMasked(ctx, w.store, p.PreviousBackupID, p.BackupID, how.rules, keys)
			var bad *backup.NoiseRuleError
			if errors.As(err, &bad) {
				res, err = backup.DiffMasked(ctx, w.store, p.PreviousBackupID, p.BackupID, nil, keys)
			}
			if err == nil {
				ev.Backup.LinesAdded, ev.Backup.LinesRemoved = res.Added, res.Removed
				// Without the keys to mask with, a diff to be masked
				// stays out: never the clear text instead.
				if d.IncludeDiff && (!how.mask || keys != nil) {
					ev.Diff = DiffOf(res, DiffLimit)
				}
			} else {
				w.log.Debug("event without its diff", "event_id", ev.ID, "err", err)
			}
		}
	}
	ev.URL = w.eventURL(p)
	return ev
}

// eventURL links an event to the web interface: a change to its diff,
// a change set event to the change set, a git push event to the
// settings, an inventory sync event to the inventory sources, a restore event to the restore, anything else to the device.
func (w *Worker) eventURL(p outbox.EventPayload) string {
	if w.o.PublicURL != "" && p.Kind.System() {
		switch {
		case p.ChangeSet != nil && strings.HasPrefix(p.ChangeSet.Path, "/change-sets/"):
			return w.o.PublicURL + p.ChangeSet.Path
		case p.Kind == outbox.EventGitPushFailed || p.Kind == outbox.EventGitPushRecovered:
			return w.o.PublicURL + "/settings#git"
		case p.Inventory != nil && strings.HasPrefix(p.Inventory.Path, "/settings/"):
			return w.o.PublicURL + p.Inventory.Path
		}
		return ""
	}
	if w.o.PublicURL == "" || p.DeviceID == 0 {
		return ""
	}
	if p.Restore != nil && strings.HasPrefix(p.Restore.Path, "/restores/") {
		return w.o.PublicURL + p.Restore.Path
	}
	u := w.o.PublicURL + "/devices/" + strconv.FormatInt(p.DeviceID, 10)
	if p.Kind == outbox.EventConfigChanged && p.PreviousBackupID != "" && p.BackupID != "" {
		u += "/diff?" + url.Values{"from": {p.PreviousBackupID}, "to": {p.BackupID}}.Encode()
	}
	return u
}

// LockDir is where workers of the data directory whose store is at
// storePath keep their liveness locks (next to the backup engine's).
func LockDir(storePath string) string { return filepath.Join(filepath.Dir(storePath), "run") }

// String names the worker in logs.
func (w *Worker) String() string { return fmt.Sprintf("delivery worker %s", w.owner) }
