package demo

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"backupd/app/notify"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/outbox"
)

// Names of the demo's notification example; a restart finds and reuses them.
const (
	ChannelName = "Demo webhook (logs what it gets)"
	RuleName    = "Demo: changes and failures"
)

// demoEvents are what the demo rule sends: everything but staleness (the
// demo's devices are backed up every five minutes).
var demoEvents = []outbox.EventKind{outbox.EventConfigChanged, outbox.EventFirstBackup, outbox.EventBackupFailed, outbox.EventBackupRecovered,
	outbox.EventDeviceUnreachable, outbox.EventDeviceReachable, outbox.EventHostKeyChanged}

// Receiver is the demo's webhook endpoint on 127.0.0.1: it checks each
// delivery's signature and logs what it got (kinds and devices, never a
// diff), so that a newcomer sees notifications delivered without setting
// anything up; pointing the demo channel at their own https:// URL is one
// edit on the Notifications page.
type Receiver struct {
	srv    *http.Server
	url    string
	secret []byte
	log    *slog.Logger

	mu  sync.Mutex
	got []ReceivedDelivery
}

// ReceivedDelivery is one delivery the receiver took.
type ReceivedDelivery struct {
	ID          string
	SignatureOK bool
	Kinds       []string
	Devices     []string
}

// maxReceived bounds what the receiver remembers.
const maxReceived = 100

// URL is where the receiver listens.
func (r *Receiver) URL() string { return r.url }

// Received returns the deliveries it took, oldest first (the last 100).
func (r *Receiver) Received() []ReceivedDelivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(req.Body, 8<<20))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	mac := hmac.New(sha256.New, r.secret)
	mac.Write(raw)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	got := ReceivedDelivery{ID: req.Header.Get(notify.HeaderDelivery),
		SignatureOK: hmac.Equal([]byte(want), []byte(req.Header.Get(notify.HeaderSignature)))}
	var env notify.Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		http.Error(w, "not a backupd.event/v1 envelope", http.StatusBadRequest)
		return
	}
	for _, ev := range env.Events {
		got.Kinds = append(got.Kinds, ev.Kind)
		if ev.Device != nil {
			got.Devices = append(got.Devices, ev.Device.Name)
		}
	}
	r.mu.Lock()
	r.got = append(r.got, got)
	if len(r.got) > maxReceived {
		r.got = slices.Delete(r.got, 0, len(r.got)-maxReceived)
	}
	r.mu.Unlock()
	// Kinds and device names only: a diff may hold secrets.
	r.log.Info("demo webhook received a delivery", "delivery", got.ID, "signature_ok", got.SignatureOK,
		"events", len(env.Events), "kinds", strings.Join(compactKinds(got.Kinds), ","), "devices", strings.Join(got.Devices, ","))
	w.WriteHeader(http.StatusNoContent)
}

func compactKinds(k []string) []string {
	out := slices.Clone(k)
	slices.Sort(out)
	return slices.Compact(out)
}

// Close stops the receiver.
func (r *Receiver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return r.srv.Shutdown(ctx)
}

// StartNotifications starts the demo's webhook receiver and registers
// (after a restart: repoints) the demo channel at it, with a rule sending
// the demo group's changes and failures there. A demo channel the user
// pointed elsewhere is left as it is.
func StartNotifications(ctx context.Context, store *db.Store, sealer *secret.Sealer, log *slog.Logger) (*Receiver, error) {
	key := make([]byte, 24)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo webhook receiver: %w", err)
	}
	r := &Receiver{url: "http://" + ln.Addr().String() + "/demo-hook", secret: []byte(hex.EncodeToString(key)), log: log}
	mux := http.NewServeMux()
	mux.Handle("POST /demo-hook", r)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	if err := r.register(ctx, store, sealer); err != nil {
		r.Close()
		return nil, err
	}
	log.Info("demo notifications: a webhook channel and rule send the demo's events to a receiver that logs them",
		"channel", ChannelName, "rule", RuleName)
	return r, nil
}

func (r *Receiver) register(ctx context.Context, store *db.Store, sealer *secret.Sealer) error {
	ch := notify.Channel{Type: notify.TypeWebhook, Name: ChannelName, Language: "en", Secret: r.secret,
		Webhook: &notify.WebhookConfig{URL: r.url}}
	cfg, sealed, err := notify.ChannelToStore(ch, notify.Sealer(sealer))
	if err != nil {
		return err
	}
	var chID int64
	rows, err := store.NotificationChannels(ctx)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if row.Name != ChannelName {
			continue
		}
		chID = row.ID
		// The URL as a page shows it (masked; the demo's has nothing to hide).
		if old, _, err := notify.ChannelSettings(row); err == nil && old.Webhook != nil && strings.HasPrefix(old.Webhook.URL, "http://127.0.0.1:") {
			// Still the demo's own receiver, on the port of an earlier run.
			if _, err := store.UpdateNotificationChannel(ctx, row.ID, func(c *db.NotificationChannel) error {
				c.Config, c.Secret = cfg, sealed
				return nil
			}); err != nil {
				return fmt.Errorf("demo channel: %w", err)
			}
		}
	}
	if chID == 0 {
		row, err := store.CreateNotificationChannel(ctx, db.NotificationChannel{Name: ChannelName, Type: notify.TypeWebhook,
			Enabled: true, Config: cfg, Secret: sealed, Language: "en"})
		if err != nil {
			return fmt.Errorf("demo channel: %w", err)
		}
		chID = row.ID
	}
	rules, err := store.NotificationRules(ctx)
	if err != nil {
		return err
	}
	for _, rule := range rules {
		if rule.Name == RuleName {
			return nil
		}
	}
	rootID, err := groupID(ctx, store, GroupName, nil)
	if err != nil {
		return err
	}
	_, err = store.CreateNotificationRule(ctx, db.NotificationRule{Name: RuleName, Enabled: true, Events: demoEvents,
		Scope: db.RuleScopeGroups, GroupIDs: []int64{rootID}, ChannelIDs: []int64{chID}, IncludeDiff: true})
	if err != nil && !errors.Is(err, db.ErrNameExists) {
		return fmt.Errorf("demo rule: %w", err)
	}
	return nil
}
