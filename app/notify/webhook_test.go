package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/app/notify"
)

// received is one request a test receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver records requests and answers with status (and body).
type receiver struct {
	mu     sync.Mutex
	got    []received
	status int
	answer string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, received{r.Header.Clone(), body})
	status, answer := rc.status, rc.answer
	rc.mu.Unlock()
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, answer)
}

func (rc *receiver) last(t *testing.T) received {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) == 0 {
		t.Fatal("the receiver got nothing")
	}
	return rc.got[len(rc.got)-1]
}

// verify is what a receiver does: recompute the HMAC over the bytes it
// got and compare in constant time.
func verify(secret []byte, r received) bool {
	sig, ok := strings.CutPrefix(r.header.Get(notify.HeaderSignature), "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(r.body)
	return hmac.Equal(got, m.Sum(nil))
}

func webhookChannel(url string) notify.Channel {
	return notify.Channel{
		Type: notify.TypeWebhook, Name: "ops hook",
		Webhook: &notify.WebhookConfig{URL: url, Headers: map[string]string{"Authorization": "Bearer rcv-token", "X-Team": "netops"}},
		Secret:  []byte("hook-secret-1"),
	}
}

func TestWebhookSignedDelivery(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	ch := webhookChannel(srv.URL + "/hook")
	ev := changedEvent(7, "core-1")
	ev.At = at.In(time.FixedZone("CET", 3600))
	res := notify.Send(context.Background(), ch, []notify.Event{ev}, notify.Options{DeliveryID: "42-3", UserAgent: "backupd/test"})
	if !res.OK() || res.Status != "200" {
		t.Fatalf("result %+v", res)
	}
	r := rc.last(t)
	if !verify(ch.Secret, r) {
		t.Errorf("signature %q does not verify", r.header.Get(notify.HeaderSignature))
	}
	if verify([]byte("another secret"), r) {
		t.Error("signature verifies with a wrong secret")
	}
	sig := r.header.Get(notify.HeaderSignature)
	if !notify.VerifySignature(ch.Secret, r.body, sig) || notify.VerifySignature(ch.Secret, append(r.body, ' '), sig) ||
		notify.VerifySignature([]byte("x"), r.body, sig) || notify.VerifySignature(ch.Secret, r.body, strings.TrimPrefix(sig, "sha256=")) {
		t.Error("VerifySignature disagrees with the receiver's own check")
	}
	for k, want := range map[string]string{
		"Content-Type": "application/json", notify.HeaderEvent: "config.changed", notify.HeaderDelivery: "42-3",
		"Authorization": "Bearer rcv-token", "X-Team": "netops", "User-Agent": "backupd/test",
	} {
		if got := r.header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	var env notify.Envelope
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatal(err)
	}
	if env.Schema != notify.Schema || env.DeliveryID != "42-3" || len(env.Events) != 1 {
		t.Fatalf("envelope %+v", env)
	}
	got := env.Events[0]
	if got.Schema != notify.Schema || got.Kind != "config.changed" || got.Device.Name != "core-1" || got.Backup.PreviousID != "b1" || !got.At.Equal(at) || got.At.Location() != time.UTC {
		t.Errorf("event %+v", got)
	}
	// The documented field names, as a receiver written in any language sees them.
	var raw map[string]any
	_ = json.Unmarshal(r.body, &raw)
	e0 := raw["events"].([]any)[0].(map[string]any)
	for _, k := range []string{"schema", "id", "event", "at", "trigger", "device", "backup", "url"} {
		if _, ok := e0[k]; !ok {
			t.Errorf("event JSON lacks %q: %s", k, r.body)
		}
	}
	if !strings.Contains(string(r.body), `"at":"2026-11-25T13:40:00Z"`) {
		t.Errorf("time not in UTC RFC 3339: %s", r.body)
	}

	// A digest: several events, "digest" in the event header.
	res = notify.Send(context.Background(), ch, []notify.Event{changedEvent(7, "core-1"), failedEvent(8, "edge-2")}, notify.Options{DeliveryID: "43-3"})
	r = rc.last(t)
	if !res.OK() || r.header.Get(notify.HeaderEvent) != "digest" || !verify(ch.Secret, r) {
		t.Errorf("digest: result %+v, event header %q", res, r.header.Get(notify.HeaderEvent))
	}

	// Without a secret nothing is signed.
	ch.Secret = nil
	notify.Send(context.Background(), ch, []notify.Event{ev}, notify.Options{DeliveryID: "44-3"})
	if s := rc.last(t).header.Get(notify.HeaderSignature); s != "" {
		t.Errorf("unsigned channel sent signature %q", s)
	}
}

func TestWebhookHeadersCannotReplaceOurs(t *testing.T) {
	for _, name := range []string{"X-Backupd-Signature", "x-backupd-signature", "Content-Type", "X-Backupd-Event", "X-Backupd-Delivery", "Host", "Content-Length"} {
		ch := webhookChannel("https://127.0.0.1/hook")
		ch.Webhook.Headers = map[string]string{name: "forged"}
		res := notify.Send(context.Background(), ch, []notify.Event{changedEvent(1, "a")}, notify.Options{})
		if res.OK() || !res.Permanent || !strings.Contains(res.Err.Error(), "cannot be replaced") {
			t.Errorf("header %s: %+v", name, res)
		}
	}
	for name, value := range map[string]string{"X-Ok": "a\r\nX-Injected: 1", "Bad Name": "v", "X-Nul": "a\x00b"} {
		ch := webhookChannel("https://127.0.0.1/hook")
		ch.Webhook.Headers = map[string]string{name: value}
		if err := ch.Validate(); err == nil {
			t.Errorf("header %q: %q accepted", name, value)
		}
	}
}

func TestWebhookTLSVerification(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewTLSServer(rc)
	defer srv.Close()
	ch := webhookChannel(srv.URL + "/hook")
	ev := []notify.Event{changedEvent(1, "a")}

	res := notify.Send(context.Background(), ch, ev, notify.Options{DeliveryID: "1"})
	if res.OK() || res.Permanent || !strings.Contains(res.Err.Error(), "certificate") {
		t.Errorf("self-signed certificate with verification on: %+v", res)
	}
	ch.Webhook.SkipVerify = true
	if res := notify.Send(context.Background(), ch, ev, notify.Options{DeliveryID: "1"}); !res.OK() {
		t.Errorf("skip_verify: %+v", res)
	}
	// Verification on, with the server's authority trusted.
	ch.Webhook.SkipVerify = false
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	if res := notify.Send(context.Background(), ch, ev, notify.Options{DeliveryID: "1", RootCAs: pool}); !res.OK() {
		t.Errorf("trusted authority: %+v", res)
	}
}

func TestWebhookResultClasses(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	ch := webhookChannel(srv.URL)
	for _, tc := range []struct {
		status   int
		ok, perm bool
	}{
		{200, true, false}, {202, true, false}, {204, true, false},
		{301, false, true}, {400, false, true}, {401, false, true}, {404, false, true}, {410, false, true}, {413, false, true},
		{408, false, false}, {429, false, false}, {500, false, false}, {502, false, false}, {503, false, false},
	} {
		rc.mu.Lock()
		rc.status, rc.answer = tc.status, "no_service"
		rc.mu.Unlock()
		res := notify.Send(context.Background(), ch, []notify.Event{changedEvent(1, "a")}, notify.Options{DeliveryID: "1"})
		if res.OK() != tc.ok || res.Permanent != tc.perm || res.Status != strconv.Itoa(tc.status) {
			t.Errorf("answer %d: %+v, want ok %v permanent %v", tc.status, res, tc.ok, tc.perm)
		}
		if !tc.ok && !strings.Contains(res.Err.Error(), "no_service") {
			t.Errorf("answer %d: the receiver's reason is not quoted: %v", tc.status, res.Err)
		}
	}
	// Nobody listening: worth retrying.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	res := notify.Send(context.Background(), webhookChannel("http://"+addr+"/x"), []notify.Event{changedEvent(1, "a")}, notify.Options{})
	if res.OK() || res.Permanent || res.Status != "" {
		t.Errorf("connection refused: %+v", res)
	}
	// No events: nothing to do, never worth retrying.
	if res := notify.Send(context.Background(), ch, nil, notify.Options{}); res.Err != notify.ErrNoEvents || !res.Permanent {
		t.Errorf("no events: %+v", res)
	}
}

// A receiver that never answers costs the timeout, not more; one that
// answers with an endless body is read only so far.
func TestWebhookBounds(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	res := notify.Send(context.Background(), webhookChannel(slow.URL), []notify.Event{changedEvent(1, "a")}, notify.Options{Timeout: 300 * time.Millisecond})
	if res.OK() || res.Permanent || !strings.Contains(res.Err.Error(), "no answer within 300ms") {
		t.Errorf("silent receiver: %+v", res)
	}

	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		chunk := []byte(strings.Repeat("E", 1<<16))
		for range 1 << 10 { // 64 MiB if anyone read it all
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer big.Close()
	res = notify.Send(context.Background(), webhookChannel(big.URL), []notify.Event{changedEvent(1, "a")}, notify.Options{})
	if res.OK() || res.Permanent || len(res.Err.Error()) > 400 {
		t.Errorf("endless answer: permanent %v, error of %d bytes", res.Permanent, len(res.Err.Error()))
	}
}

// Neither the signing secret nor anything of the URL past its host (user
// and password, a token in the path or query) shows in a result.
func TestWebhookErrorsLeakNothing(t *testing.T) {
	rc := &receiver{status: 500}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := l.Addr().String()
	l.Close()
	tlsSrv := httptest.NewTLSServer(rc)
	defer tlsSrv.Close()
	secrets := []string{"alice", "pa55word", "T0K3NPATH", "QSECRET", "hook-secret-1"}
	for _, base := range []string{srv.URL, "http://" + dead, tlsSrv.URL} {
		u := strings.Replace(base, "://", "://alice:pa55word@", 1) + "/hook/T0K3NPATH?key=QSECRET"
		for _, ch := range []notify.Channel{
			webhookChannel(u),
			{Type: notify.TypeSlack, Secret: []byte(u)},
		} {
			res := notify.Send(context.Background(), ch, []notify.Event{changedEvent(1, "a")}, notify.Options{Timeout: 2 * time.Second})
			if res.OK() {
				t.Fatalf("%s: delivered", ch.Type)
			}
			msg := res.Err.Error()
			for _, s := range secrets {
				if strings.Contains(msg, s) {
					t.Errorf("%s error shows %q: %s", ch.Type, s, msg)
				}
			}
			if !strings.Contains(msg, "127.0.0.1") {
				t.Errorf("error does not say where: %s", msg)
			}
		}
	}
	// Nor does a URL that does not parse.
	ch := webhookChannel("http://alice:pa55word@127.0.0.1:99999999/T0K3NPATH\x7f")
	if err := ch.Validate(); err == nil || strings.Contains(err.Error(), "pa55word") || strings.Contains(err.Error(), "T0K3NPATH") {
		t.Errorf("bad URL: %v", err)
	}
}

// A digest of many diffs stays within the webhook's diff budget; the
// diffs past it say they were cut.
func TestWebhookDiffBudget(t *testing.T) {
	var a, b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&a, "interface Gi0/%d\n description %s\n", i, strings.Repeat("a", 60))
		fmt.Fprintf(&b, "interface Gi0/%d\n description %s\n", i, strings.Repeat("b", 60))
	}
	d := notify.NewDiff(a.String(), b.String(), nil, 0)
	var events []notify.Event
	for i := range 200 {
		e := changedEvent(int64(i), "sw")
		e.Diff = d
		events = append(events, e)
	}
	body, err := notify.WebhookBody("1", events)
	if err != nil {
		t.Fatal(err)
	}
	var env notify.Envelope
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	total, full, cut := 0, 0, 0
	for _, e := range env.Events {
		total += len(e.Diff.Unified)
		switch {
		case e.Diff.Unified == d.Unified:
			full++
		case e.Diff.Unified == "" && e.Diff.Truncated && e.Diff.TotalLines == d.TotalLines:
			cut++
		default:
			t.Fatalf("diff neither whole nor cut: %+v", e.Diff)
		}
	}
	if total > notify.WebhookDiffBytes || full == 0 || cut == 0 || full+cut != 200 {
		t.Errorf("%d bytes of diff, %d whole, %d cut", total, full, cut)
	}
	if events[199].Diff.Unified == "" {
		t.Error("the caller's events were changed")
	}
}

// A receiver that quotes the request's URL in its refusal does not get
// the URL's credential into the error (which the delivery log and the
// channel's health show).
func TestWebhookErrorMasksEchoedURL(t *testing.T) {
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "Cannot POST %s (user %s)", r.URL.RequestURI(), r.URL.Query().Get("token"))
	}))
	u := strings.Replace(srv.URL, "http://", "http://bob:pw-Echo-9@", 1) + "/in/path-Echo-7?token=tok-Echo-5&x=1"
	res := notify.Send(context.Background(), hookChannel("echo", u, "k"), []notify.Event{changedEvent(1, "r1")}, notify.Options{DeliveryID: "1"})
	if res.OK() || !res.Permanent || res.Status != "404" {
		t.Fatalf("result %+v", res)
	}
	msg := res.Err.Error()
	for _, secret := range []string{"tok-Echo-5", "path-Echo-7", "pw-Echo-9"} {
		if strings.Contains(msg, secret) {
			t.Fatalf("error quotes %q: %s", secret, msg)
		}
	}
	if !strings.Contains(msg, "Cannot POST •••") {
		t.Fatalf("error %q lost the answer", msg)
	}
}
