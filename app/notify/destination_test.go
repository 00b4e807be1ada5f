package notify_test

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"backupd/app/netguard"
	"backupd/app/notify"
	"backupd/internal/testkit"
)

// A webhook, chat or e-mail receiver written as a link-local or cloud
// metadata address is refused before anything is sent (permanently: a
// setting to change), unless the outbound allow list holds it; a name
// that resolves to one is refused at the connection, after DNS; real
// receivers on 127.0.0.1 are reached as before, also by name.
func TestOutboundPolicyGuardsReceivers(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	res := testkit.Resolver(t, map[string][]netip.Addr{
		"rebound.test":  {netip.MustParseAddr("169.254.169.254")},
		"receiver.test": {netip.MustParseAddr("127.0.0.1")},
	})
	policy := netguard.Policy{Resolver: res}
	ctx := context.Background()
	ev := []notify.Event{changedEvent(7, "core-1")}
	opts := notify.Options{DeliveryID: "1", Timeout: 5 * time.Second, Outbound: policy}

	cert, _ := selfSigned(t)
	mb := startMailbox(t, notify.SecuritySTARTTLS, cert)
	mail := emailChannel(mb, notify.SecuritySTARTTLS, "en")
	mail.Email.SkipVerify = true // the certificate does not name receiver.test

	refusedChannels := map[string]notify.Channel{
		"webhook to 169.254.169.254":    webhookChannel("http://169.254.169.254/latest/meta-data/"),
		"webhook to [fd00:ec2::254]":    webhookChannel("http://[fd00:ec2::254]/latest/"),
		"webhook to 2852039166":         webhookChannel("http://2852039166/latest/"),
		"chat to [fe80::1]":             {Type: notify.TypeSlack, Name: "chat", Secret: []byte("https://[fe80::1]/hooks/secret-path")},
		"webhook by a rebinding name":   webhookChannel("http://rebound.test:" + port + "/hook"),
		"SMTP server 169.254.169.254":   withHost(mail, "169.254.169.254"),
		"SMTP server by a rebound name": withHost(mail, "rebound.test"),
	}
	for name, ch := range refusedChannels {
		r := notify.Send(ctx, ch, ev, opts)
		if r.OK() || !r.Permanent || !errors.Is(r.Err, netguard.ErrRefused) {
			t.Errorf("%s: %+v, want a permanent refusal by the outbound policy", name, r)
			continue
		}
		if strings.Contains(r.Err.Error(), "secret-path") || strings.Contains(r.Err.Error(), "meta-data") {
			t.Errorf("%s: the error quotes the URL: %v", name, r.Err)
		}
	}
	// As typed, the form's check says the same (names pass there).
	if err := webhookChannel("http://169.254.169.254/").CheckDestination(netguard.Policy{}); !errors.Is(err, netguard.ErrRefused) || !strings.HasPrefix(err.Error(), "url: ") {
		t.Errorf("CheckDestination: %v", err)
	}
	if err := withHost(mail, "169.254.169.254").CheckDestination(netguard.Policy{}); !errors.Is(err, netguard.ErrRefused) || !strings.HasPrefix(err.Error(), "host: ") {
		t.Errorf("CheckDestination of the SMTP host: %v", err)
	}
	if len(rc.got) != 0 {
		t.Fatalf("the receiver got %d requests from refused channels", len(rc.got))
	}

	for name, ch := range map[string]notify.Channel{
		"webhook on 127.0.0.1":   webhookChannel(srv.URL + "/hook"),
		"webhook by name":        webhookChannel("http://receiver.test:" + port + "/hook"),
		"SMTP server by address": mail,
		"SMTP server by name":    withHost(mail, "receiver.test"),
	} {
		if r := notify.Send(ctx, ch, ev, opts); !r.OK() {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if len(rc.got) != 2 {
		t.Errorf("the receiver got %d requests, want 2", len(rc.got))
	}
	// The allow list lets a link-local receiver be written down.
	allow := netguard.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("fe80::/64")}}
	if err := webhookChannel("http://[fe80::1]/hook").CheckDestination(allow); err != nil {
		t.Errorf("an allowed link-local receiver: %v", err)
	}
}

func withHost(ch notify.Channel, host string) notify.Channel {
	e := *ch.Email
	e.Host = host
	ch.Email = &e
	return ch
}
