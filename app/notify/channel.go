package notify

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"backupd/app/netguard"
)

// Channel types.
const (
	TypeWebhook    = "webhook"
	TypeSlack      = "slack"
	TypeMattermost = "mattermost"
	TypeTeams      = "teams"
	TypeChat       = "chat" // any tool that takes {"text": "…"}
	TypeEmail      = "email"
)

// Types lists the channel types, in the order a form offers them.
var Types = []string{TypeWebhook, TypeSlack, TypeMattermost, TypeTeams, TypeChat, TypeEmail}

// Channel is one destination, with its secret already opened. What the
// secret is depends on the type: the webhook's HMAC key (none: deliveries
// are not signed), the chat tool's incoming-webhook URL (that URL is
// itself the credential, so it is sealed and never shown again), or the
// SMTP password (none: no AUTH).
type Channel struct {
	Type     string
	Name     string
	Language string // en (default) or zh: the texts of chat messages and e-mail
	Webhook  *WebhookConfig
	Chat     *ChatConfig
	Email    *EmailConfig
	Secret   []byte
}

// Options are what the caller knows about one delivery.
type Options struct {
	// DeliveryID identifies the delivery to the receiver (webhook header
	// and body, e-mail Message-ID); the same on every retry of it.
	DeliveryID string
	// UserAgent is sent with HTTP requests ("backupd/1.2.3").
	UserAgent string
	// RootCAs replaces the system's certificate authorities for TLS
	// (webhooks, chat, SMTP); nil: the system's.
	RootCAs *x509.CertPool
	// Timeout bounds the whole delivery; 0: DefaultTimeout (HTTP) or
	// DefaultSMTPTimeout (e-mail).
	Timeout time.Duration
	// Now is the clock of the e-mail Date header; nil: time.Now.
	Now func() time.Time
	// Outbound is the outbound allow list: the zero policy refuses
	// link-local and cloud metadata addresses, as typed and on every
	// connection after DNS.
	Outbound netguard.Policy
}

// Timeouts of one delivery.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultSMTPTimeout = 30 * time.Second
)

// Result is how a delivery went. Status is the receiver's answer in
// short ("200", "250 2.0.0 OK"), empty when none came. Err is nil when
// the delivery was accepted; otherwise Permanent says that retrying the
// same delivery cannot help (a 4xx answer, a refused login, a bad
// configuration). Err never holds a secret, a URL's credentials or path,
// or configuration text.
type Result struct {
	Status    string
	Permanent bool
	Err       error
}

// OK reports whether the delivery was accepted.
func (r Result) OK() bool { return r.Err == nil }

// ErrNoEvents is a delivery with nothing in it.
var ErrNoEvents = errors.New("nothing to deliver: no events")

// Validate checks a channel's settings without sending anything: the
// errors name the setting, for a form to show.
func (ch Channel) Validate() error {
	switch ch.Language {
	case "", "en", "zh":
	default:
		return fmt.Errorf("language %q: use en or zh", ch.Language)
	}
	switch ch.Type {
	case TypeWebhook:
		if ch.Webhook == nil {
			return errors.New("webhook channel without webhook settings")
		}
		return ch.Webhook.Validate()
	case TypeSlack, TypeMattermost, TypeTeams, TypeChat:
		return validateChatURL(string(ch.Secret))
	case TypeEmail:
		if ch.Email == nil {
			return errors.New("e-mail channel without e-mail settings")
		}
		return ch.Email.Validate(len(ch.Secret) > 0)
	}
	return fmt.Errorf("channel type %q: use one of %v", ch.Type, Types)
}

// Send delivers one batch of events (one event, or a digest of several)
// to one channel and says how it went. It does not retry; it returns
// within opts.Timeout (and ctx).
func Send(ctx context.Context, ch Channel, events []Event, opts Options) Result {
	if len(events) == 0 {
		return Result{Permanent: true, Err: ErrNoEvents}
	}
	if err := ch.Validate(); err != nil {
		return Result{Permanent: true, Err: fmt.Errorf("channel %q: %w", ch.Name, err)}
	}
	if err := ch.CheckDestination(opts.Outbound); err != nil {
		return Result{Permanent: true, Err: fmt.Errorf("channel %q: %w", ch.Name, err)}
	}
	switch ch.Type {
	case TypeWebhook:
		return sendWebhook(ctx, ch, events, opts)
	case TypeEmail:
		return sendEmail(ctx, ch, events, opts)
	default:
		return sendChat(ctx, ch, events, opts)
	}
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}
