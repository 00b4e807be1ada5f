package notify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"backupd/app/secret"
	"backupd/db"
)

// A channel as the store keeps it (db.NotificationChannel) and as Send
// takes it (Channel) differ in two ways: the store holds the type's
// settings as a JSON object (WebhookConfig, ChatConfig or EmailConfig,
// with their json names) and the secret sealed with app/secret under
// SecretPurpose. ChannelFromStore turns a row into a Channel (the worker
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

// ChannelFromStore turns a stored channel into one Send takes: the
// type's settings decoded from row.Config, the secret opened with open
// (nil or empty sealed bytes: no secret, open is not called). It does not
// validate the settings (Send does, and so does Channel.Validate); its
// errors name what is wrong without quoting it.
func ChannelFromStore(row db.NotificationChannel, open func([]byte) ([]byte, error)) (Channel, error) {
	ch := Channel{Type: row.Type, Name: row.Name, Language: row.Language}
	cfg := bytes.TrimSpace(row.Config)
	if len(cfg) == 0 {
		cfg = []byte("{}")
	}
	var err error
	switch row.Type {
	case TypeWebhook:
		ch.Webhook = new(WebhookConfig)
		err = json.Unmarshal(cfg, ch.Webhook)
	case TypeSlack, TypeMattermost, TypeTeams, TypeChat:
		ch.Chat = new(ChatConfig)
		err = json.Unmarshal(cfg, ch.Chat)
	case TypeEmail:
		ch.Email = new(EmailConfig)
		err = json.Unmarshal(cfg, ch.Email)
	default:
		return Channel{}, fmt.Errorf("channel %q: unknown type %q", row.Name, row.Type)
	}
	if err != nil {
		// The decoder's message may quote the settings: name only the place.
		return Channel{}, fmt.Errorf("channel %q: its %s settings are not valid JSON of that type", row.Name, row.Type)
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
	return ch, nil
}

// ChannelToStore checks ch (Channel.Validate: its errors name the field,
// for a form) and returns what the store keeps of it: the type's settings
// as a JSON object and the secret sealed with seal (nil when ch has no
// secret). A form that lets the secret field stay empty to keep the old
// one reads the old one with ChannelFromStore into ch.Secret first, so
// that the whole channel is checked.
func ChannelToStore(ch Channel, seal func([]byte) []byte) (config json.RawMessage, sealed []byte, err error) {
	if err := ch.Validate(); err != nil {
		return nil, nil, err
	}
	var settings any
	switch ch.Type {
	case TypeWebhook:
		settings = ch.Webhook
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
	if len(ch.Secret) > 0 {
		if seal == nil {
			return nil, nil, errors.New("channel secret: no sealer")
		}
		sealed = seal(ch.Secret)
	}
	return config, sealed, nil
}
