package backup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"backupd/app/netguard"
	"backupd/db"
)

// ReachOptions tune a Reachability; zero values take the defaults.
type ReachOptions struct {
	// Interval is the time from the start of one pass over all devices to
	// the start of the next (default 5 minutes). A pass that takes longer
	// is followed at once by the next.
	Interval time.Duration
	// Timeout bounds one TCP connect, name resolution included (default
	// 5 s).
	Timeout time.Duration
	// Concurrency is how many connects are in flight at once (default 64).
	Concurrency int
	// PageSize is how many devices are read from the database at a time
	// (default 500).
	PageSize int
}

func (o *ReachOptions) defaults() {
	if o.Interval <= 0 {
		o.Interval = 5 * time.Minute
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 64
	}
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
}

// Reachability keeps each enabled device's status current between
// backups: a device is reachable when a TCP connection to its login port
// opens within the timeout. Nothing is sent; no credential is used.
type Reachability struct {
	store *db.Store
	log   *slog.Logger
	opts  ReachOptions
}

// NewReachability returns a checker over the store's devices.
func NewReachability(store *db.Store, log *slog.Logger, opts ReachOptions) *Reachability {
	opts.defaults()
	if log == nil {
		log = slog.Default()
	}
	return &Reachability{store: store, log: log, opts: opts}
}

// Run checks every device at once and then every Interval until ctx is
// done, then returns nil. Failures are logged; they never stop it.
func (r *Reachability) Run(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		start := time.Now()
		r.safeCheckAll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		timer.Reset(max(r.opts.Interval-time.Since(start), 0))
	}
}

func (r *Reachability) safeCheckAll(ctx context.Context) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("reachability check panicked", "panic", p, "stack", string(debug.Stack()))
		}
	}()
	start := time.Now()
	up, down, err := r.CheckAll(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("reachability check failed", "err", err, "reachable", up, "unreachable", down)
		}
		return
	}
	r.log.Info("reachability checked", "reachable", up, "unreachable", down, "duration", time.Since(start).Round(time.Millisecond))
}

// CheckAll connects to every enabled device once, with at most
// Concurrency connects in flight, records each result, and returns the
// counts. Devices are read a page at a time. When ctx ends it stops
// early and returns ctx's error; results cut short by it are not
// recorded, so a shutdown never marks a device unreachable.
func (r *Reachability) CheckAll(ctx context.Context) (reachable, unreachable int, err error) {
	// A device on a link-local or metadata address the allow list does
	// not hold is not connected to, and counts as unreachable.
	outbound, err := netguard.Load(ctx, r.store)
	if err != nil {
		return 0, 0, err
	}
	var up, down, undecided atomic.Int64
	var errMu sync.Mutex
	var failures int
	var firstErr error
	work := make(chan db.DeviceAddress)
	var wg sync.WaitGroup
	for range r.opts.Concurrency {
		wg.Go(func() {
			for d := range work {
				ok, decided := r.probe(ctx, d, outbound)
				if !decided {
					undecided.Add(1)
					continue // cut short by ctx: drain without recording
				}
				if err := r.store.SetReachability(ctx, d.ID, ok); err != nil {
					if ctx.Err() == nil {
						errMu.Lock()
						if failures++; firstErr == nil {
							firstErr = err
						}
						errMu.Unlock()
					}
					continue
				}
				if ok {
					up.Add(1)
				} else {
					down.Add(1)
				}
			}
		})
	}
	err = r.feed(ctx, work)
	close(work)
	wg.Wait()
	if err == nil && undecided.Load() > 0 {
		// ctx is done or past its deadline: its error is on its way.
		<-ctx.Done()
	}
	if err == nil {
		err = ctx.Err()
	}
	if firstErr != nil {
		// One error for the lot: a database failure repeats per device.
		err = errors.Join(err, fmt.Errorf("%d results not recorded, first: %w", failures, firstErr))
	}
	return int(up.Load()), int(down.Load()), err
}

// feed hands every enabled device to the workers, a page at a time.
func (r *Reachability) feed(ctx context.Context, work chan<- db.DeviceAddress) error {
	var after int64
	for {
		page, err := r.store.EnabledDeviceAddresses(ctx, after, r.opts.PageSize)
		if err != nil {
			return err
		}
		for _, d := range page {
			select {
			case work <- d:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if len(page) < r.opts.PageSize {
			return nil
		}
		after = page[len(page)-1].ID
	}
}

// probe reports whether a TCP connection to the device opens within the
// timeout. decided is false when ctx, not the device, ended the attempt:
// cancelled, or past its deadline (which the dialer may notice a moment
// before ctx reports it).
func (r *Reachability) probe(ctx context.Context, d db.DeviceAddress, outbound netguard.Policy) (ok, decided bool) {
	conn, err := outbound.Dialer(r.opts.Timeout).DialContext(ctx, "tcp", net.JoinHostPort(d.Host, strconv.Itoa(d.Port)))
	if err == nil {
		_ = conn.Close()
		return true, true
	}
	if errors.Is(err, netguard.ErrRefused) {
		return false, true
	}
	if ctx.Err() != nil {
		return false, false
	}
	if deadline, set := ctx.Deadline(); set && !time.Now().Before(deadline) {
		return false, false
	}
	return false, true
}
