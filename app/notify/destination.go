package notify

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"backupd/app/netguard"
)

// CheckDestination refuses a channel whose receiver is written as an
// address the outbound policy refuses (link-local, a cloud metadata
// service): the webhook's or chat tool's URL host, the SMTP server. A
// host name passes here and is checked on every connection, after DNS
// (Options.Outbound). The error names the setting and the address, never
// the URL (its path or query may hold a token).
func (ch Channel) CheckDestination(p netguard.Policy) error {
	var field, host string
	switch ch.Type {
	case TypeWebhook:
		if ch.Webhook == nil {
			return nil
		}
		field, host = "url", urlHost(ch.Webhook.URL)
	case TypeSlack, TypeMattermost, TypeTeams, TypeChat:
		field, host = "incoming-webhook url", urlHost(string(ch.Secret))
	case TypeEmail:
		if ch.Email == nil {
			return nil
		}
		field, host = "host", ch.Email.Host
	}
	if host == "" {
		return nil
	}
	if err := p.CheckHost(host); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// outboundProxy is http.ProxyFromEnvironment for a transport whose dials
// the policy guards: when a proxy is used, the proxy connects to the
// receiver, not this dialer, so the receiver's name is resolved and
// checked here first (a later lookup by the proxy is beyond reach).
func outboundProxy(p netguard.Policy) func(*http.Request) (*url.URL, error) {
	return func(req *http.Request) (*url.URL, error) {
		proxy, err := http.ProxyFromEnvironment(req)
		if err != nil || proxy == nil {
			return proxy, err
		}
		if _, err := p.Resolve(req.Context(), req.URL.Hostname()); err != nil {
			return nil, err
		}
		return proxy, nil
	}
}

// refused reports whether err is the outbound policy's refusal: a
// setting to change, not a failure that a retry can mend.
func refused(err error) bool { return errors.Is(err, netguard.ErrRefused) }
