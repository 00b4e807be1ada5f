package notify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"backupd/app/secret"
	"backupd/db"
)

// A channel as the store keeps it (db.NotificationChannel) and as Send
// takes it (Channel) differ in two ways: the store holds the type's
// settings as a JSON object (WebhookConfig without its header values,
// ChatConfig or EmailConfig, with their json names) and the secret
// sealed with app/secret under SecretPurpose (with a webhook's custom
// header values, see storedWebhook). ChannelFromStore turns a row into a Channel (the worker
// and a form's "Send test"); ChannelToStore turns a Channel a form built
// into the row's Config and Secret, checked first.

// SecretPurpose is bound into every channel's sealed secret, so that a
// sealed device password cannot be moved into a channel, nor back.
const SecretPurpose = "notification.channel_secret"

// Opener opens channel secrets sealed by sealer (for ChannelFromStore).
func Opener(sealer *secret.Sealer) func([]byte) ([]byte, error) {
	return func(sealed []byte) ([]byte, error) {
		plain, err := sealer.Open(sealed, SecretPurpose)
		return []byte(plain), err
	}
}

// Sealer seals channel secrets with sealer (for ChannelToStore).
func Sealer(sealer *secret.Sealer) func([]byte) []byte {
	return func(plain []byte) []byte { return sealer.Seal(string(plain), SecretPurpose) }
}

// ErrSecret is a sealed secret that cannot be opened (another secret.key,
// damaged bytes); retrying cannot help, retyping the secret does.
var ErrSecret = errors.New("the channel's secret cannot be opened (was secret.key replaced?): enter it again")

// A webhook's custom header values are credentials in practice (an
// "Authorization: Bearer …" a receiver wants), so they are sealed too:
// a webhook with custom headers keeps their names in its settings
// (storedWebhook.SealedHeaders, shown by the form) and their values,
// with its signing key, in a sealed envelope (sealedEnvelope, JSON) as
// the row's secret. Rows written before kept the headers with their
// values in the settings ("headers") and the plain signing key sealed;
// they are still read (and written the new way when saved again). The
// settings say which form the secret has, never the sealed bytes.

//
// A webhook's URL often holds a credential too ("?token=…", a user and
// password), so it is sealed the same way: the envelope holds it, and the
// settings keep only its masked form (MaskURL) for pages to show, with
// SealedURL set. Rows written before keep the URL in clear ("url") and
// are still read; SealWebhookURLs seals them once (serve runs it at
// start), and saving such a channel seals it as well.

// storedWebhook is a webhook's settings as the store keeps them.
type storedWebhook struct {
	// URL in clear: only rows written before URLs were sealed have it;
	// read, never written.
	URL string `json:"url,omitempty"`
	// MaskedURL is the URL as pages show it (MaskURL), when SealedURL.
	MaskedURL string `json:"url_masked,omitempty"`
	SealedURL bool   `json:"sealed_url,omitempty"`
	// Headers with their values: only rows written before header values
	// were sealed have it; read, never written.
	Headers    map[string]string `json:"headers,omitempty"`
	SkipVerify bool              `json:"skip_verify,omitempty"`
	// SealedHeaders names the custom headers (sorted). When it or
	// SealedURL is set, the row's secret is a sealedEnvelope and Signed
	// says whether it holds a signing key.
	SealedHeaders []string `json:"sealed_headers,omitempty"`
	Signed        bool     `json:"signed,omitempty"`
}

// enveloped reports whether the row's secret is a sealedEnvelope.
func (wh *storedWebhook) enveloped() bool {
	return wh != nil && (wh.SealedURL || len(wh.SealedHeaders) > 0)
}

// sealedEnvelope is the plain text of a webhook's secret: its URL, its
// custom headers and its signing key.
type sealedEnvelope struct {
	Secret  []byte            `json:"secret,omitempty"`
	Headers map[string]string `json:"headers"`
	URL     string            `json:"url,omitempty"`
}

// maxEnvelope bounds a sealed envelope's plain text, so that it fits the
// store's bound on sealed bytes with the sealing's overhead.
const maxEnvelope = db.MaxChannelSecretBytes - 256

// StoredSecrets is what may be known of a stored channel's secrets
// without opening them: whether it keeps a secret of its own (signing
// key, chat URL, SMTP password) and the names of its custom headers.
type StoredSecrets struct {
	HasSecret   bool
	HeaderNames []string // sorted
}

// ChannelSettings is a stored channel's settings without anything
// secret: nothing is opened, the Channel has no Secret, a webhook's URL
// is masked (MaskURL) and its Headers are nil (their names are in
// StoredSecrets). It is what a page may show.
func ChannelSettings(row db.NotificationChannel) (Channel, StoredSecrets, error) {
	ch, wh, err := decodeSettings(row)
	if err != nil {
		return Channel{}, StoredSecrets{}, err
	}
	info := StoredSecrets{HasSecret: len(row.Secret) > 0}
	if wh != nil {
		switch {
		case wh.enveloped():
			info.HasSecret = wh.Signed && len(row.Secret) > 0
			info.HeaderNames = slices.Clone(wh.SealedHeaders)
		default:
			for name := range wh.Headers {
				info.HeaderNames = append(info.HeaderNames, name)
			}
		}
		slices.Sort(info.HeaderNames)
		ch.Webhook.Headers = nil
		ch.Webhook.URL = wh.MaskedURL
		if !wh.SealedURL {
			ch.Webhook.URL = MaskURL(wh.URL)
		}
	}
	return ch, info, nil
}

// decodeSettings decodes row.Config into a Channel (and, for a webhook,
// returns the stored form too); ch.Webhook.URL and Headers hold the URL
// and values of a row written before they were sealed.
func decodeSettings(row db.NotificationChannel) (Channel, *storedWebhook, error) {
	ch := Channel{Type: row.Type, Name: row.Name, Language: row.Language}
	cfg := bytes.TrimSpace(row.Config)
	if len(cfg) == 0 {
		cfg = []byte("{}")
	}
	var err error
	var wh *storedWebhook
	switch row.Type {
	case TypeWebhook:
		wh = new(storedWebhook)
		err = json.Unmarshal(cfg, wh)
		ch.Webhook = &WebhookConfig{URL: wh.URL, Headers: wh.Headers, SkipVerify: wh.SkipVerify}
	case TypeSlack, TypeMattermost, TypeTeams, TypeChat:
		ch.Chat = new(ChatConfig)
		err = json.Unmarshal(cfg, ch.Chat)
	case TypeEmail:
		ch.Email = new(EmailConfig)
		err = json.Unmarshal(cfg, ch.Email)
	default:
		return Channel{}, nil, fmt.Errorf("channel %q: unknown type %q", row.Name, row.Type)
	}
	if err != nil {
		// The decoder's message may quote the settings: name only the place.
		return Channel{}, nil, fmt.Errorf("channel %q: its %s settings are not valid JSON of that type", row.Name, row.Type)
	}
	return ch, wh, nil
}

// ChannelFromStore turns a stored channel into one Send takes: the
// type's settings decoded from row.Config, the secret (and a webhook's
// custom header values) opened with open (nil or empty sealed bytes: no
// secret, open is not called). It does not validate the settings (Send
// does, and so does Channel.Validate); its errors name what is wrong
// without quoting it.
func ChannelFromStore(row db.NotificationChannel, open func([]byte) ([]byte, error)) (Channel, error) {
	ch, wh, err := decodeSettings(row)
	if err != nil {
		return Channel{}, err
	}
	sealedHeaders := wh.enveloped()
	if sealedHeaders && len(row.Secret) == 0 {
		return Channel{}, fmt.Errorf("channel %q: %w", row.Name, ErrSecret)
	}
	if len(row.Secret) > 0 {
		if open == nil {
			return Channel{}, fmt.Errorf("channel %q: %w", row.Name, ErrSecret)
		}
		plain, err := open(row.Secret)
		if err != nil {
			return Channel{}, fmt.Errorf("channel %q: %w", row.Name, ErrSecret)
		}
		ch.Secret = plain
	}
	if sealedHeaders {
		var env sealedEnvelope
		if err := json.Unmarshal(ch.Secret, &env); err != nil {
			return Channel{}, fmt.Errorf("channel %q: %w", row.Name, ErrSecret)
		}
		ch.Secret, ch.Webhook.Headers = env.Secret, env.Headers
		if wh.SealedURL {
			ch.Webhook.URL = env.URL
		}
		if len(ch.Secret) == 0 {
			ch.Secret = nil
		}
	}
	return ch, nil
}

// ChannelToStore checks ch (Channel.Validate: its errors name the field,
// for a form) and returns what the store keeps of it: the type's settings
// as a JSON object and the secret (for a webhook with its URL and custom
// header values, always) sealed with seal (nil when ch has none). A form that lets the
// secret (or a header value) stay empty to keep the old one reads the
// old one with ChannelFromStore into ch first, so that the whole channel
// is checked.
func ChannelToStore(ch Channel, seal func([]byte) []byte) (config json.RawMessage, sealed []byte, err error) {
	if err := ch.Validate(); err != nil {
		return nil, nil, err
	}
	return encodeChannel(ch, seal)
}

// encodeChannel is ChannelToStore without the check.
func encodeChannel(ch Channel, seal func([]byte) []byte) (config json.RawMessage, sealed []byte, err error) {
	var settings any
	secretPlain := ch.Secret
	switch ch.Type {
	case TypeWebhook:
		wh := storedWebhook{MaskedURL: MaskURL(ch.Webhook.URL), SealedURL: true, SkipVerify: ch.Webhook.SkipVerify,
			Signed: len(ch.Secret) > 0}
		for name := range ch.Webhook.Headers {
			wh.SealedHeaders = append(wh.SealedHeaders, name)
		}
		slices.Sort(wh.SealedHeaders)
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(sealedEnvelope{Secret: ch.Secret, Headers: ch.Webhook.Headers, URL: ch.Webhook.URL}); err != nil {
			return nil, nil, errors.New("channel secret: cannot encode")
		}
		if b.Len() > maxEnvelope {
			return nil, nil, fmt.Errorf("url, header values and signing secret together longer than %d bytes", maxEnvelope)
		}
		secretPlain = bytes.TrimSpace(b.Bytes())
		settings = wh
	case TypeEmail:
		settings = ch.Email
	default:
		settings = ch.Chat
		if ch.Chat == nil {
			settings = ChatConfig{}
		}
	}
	config, err = json.Marshal(settings)
	if err != nil {
		return nil, nil, fmt.Errorf("channel settings: %w", err)
	}
	if len(secretPlain) > 0 {
		if seal == nil {
			return nil, nil, errors.New("channel secret: no sealer")
		}
		sealed = seal(secretPlain)
	}
	return config, sealed, nil
}
