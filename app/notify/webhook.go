package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Webhook headers. The signature is "sha256=" and the hex HMAC-SHA256 of
// the raw body with the channel's secret as key; a receiver recomputes it
// over the bytes it received and compares in constant time.
const (
	HeaderSignature = "X-Backupd-Signature"
	HeaderEvent     = "X-Backupd-Event" // the event kind, or "digest" for several
	HeaderDelivery  = "X-Backupd-Delivery"
	EventDigest     = "digest"
)

// WebhookConfig is a webhook channel's settings (its secret is the
// signing key). The store seals the custom headers' values with the
// secret and keeps only their names as settings (ChannelToStore).
type WebhookConfig struct {
	URL string `json:"url"`
	// Headers are sent with every delivery (an API token a receiver
	// wants, say); they cannot replace backupd's own.
	Headers map[string]string `json:"headers,omitempty"`
	// SkipVerify accepts any TLS certificate: only for a receiver on a
	// trusted network with a self-signed certificate.
	SkipVerify bool `json:"skip_verify,omitempty"`
}

// ChatConfig is a chat channel's non-secret settings; its incoming-webhook
// URL is the channel's secret.
type ChatConfig struct {
	SkipVerify bool `json:"skip_verify,omitempty"`
}

// Bounds of a webhook's settings and of what is read of an answer.
const (
	maxHeaders       = 20
	maxHeaderValue   = 1024
	maxURL           = 2048
	answerExcerpt    = 200      // bytes of a refusal's body quoted in the error
	answerDrainLimit = 64 << 10 // bytes read of any answer at most
)

// reservedHeaders are set by backupd or by HTTP itself.
var reservedHeaders = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Content-Encoding": true,
	"Host": true, "Transfer-Encoding": true, "Connection": true,
	"Te": true, "Trailer": true, "Upgrade": true, "Expect": true,
}

// Validate checks the URL and the custom headers.
func (c WebhookConfig) Validate() error {
	if err := validateHTTPURL(c.URL); err != nil {
		return err
	}
	if len(c.Headers) > maxHeaders {
		return fmt.Errorf("headers: at most %d", maxHeaders)
	}
	for name, value := range c.Headers {
		canon := http.CanonicalHeaderKey(name)
		switch {
		case !isToken(name):
			return fmt.Errorf("header %q: not a valid header name", name)
		case reservedHeaders[canon] || strings.HasPrefix(canon, "X-Backupd-"):
			return fmt.Errorf("header %s: set by backupd, it cannot be replaced", canon)
		case len(value) > maxHeaderValue:
			return fmt.Errorf("header %s: value longer than %d bytes", canon, maxHeaderValue)
		case !validHeaderValue(value):
			return fmt.Errorf("header %s: value holds a line break or control character", canon)
		}
	}
	return nil
}

// validateHTTPURL checks a URL without ever quoting it: it may hold
// credentials.
func validateHTTPURL(raw string) error {
	if raw == "" {
		return errors.New("url: required")
	}
	if len(raw) > maxURL {
		return fmt.Errorf("url: longer than %d characters", maxURL)
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("url: must start with https:// (or http://)")
	}
	if u.Hostname() == "" {
		return errors.New("url: names no host")
	}
	return nil
}

func validateChatURL(raw string) error {
	if err := validateHTTPURL(raw); err != nil {
		return fmt.Errorf("incoming-webhook %w", err)
	}
	return nil
}

// RedactURL is what may be shown of a URL that can hold a credential (in
// its user part, path or query): its scheme and host only.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(invalid URL)"
	}
	return u.Scheme + "://" + u.Host
}

// Masked is what MaskURL puts in place of a hidden part.
const Masked = "•••"

// MaskURL is a URL as a page may show it: its scheme, host and path, with
// the user part and every query value (and a fragment) replaced by
// Masked, since that is where a receiver's token usually is
// ("https://hooks.example/in?token=•••"). A query part without "=" is
// masked whole.
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(invalid URL)"
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://")
	if u.User != nil {
		b.WriteString(Masked + "@")
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		for i, part := range strings.Split(u.RawQuery, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			if key, _, ok := strings.Cut(part, "="); ok {
				b.WriteString(key + "=" + Masked)
			} else if part != "" {
				b.WriteString(Masked)
			}
		}
	}
	if u.Fragment != "" {
		b.WriteString("#" + Masked)
	}
	return b.String()
}

// maskURLParts is text with the parts of rawURL that may hold a
// credential (the user part, query values, the path and query as a
// whole, and for a chat tool's URL the path itself) replaced by Masked,
// for quoting a receiver's answer, which may echo the URL it was sent to.
func maskURLParts(text, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return text
	}
	var parts []string
	if u.RawQuery != "" {
		parts = append(parts, u.RawQuery)
		for _, vs := range u.Query() {
			parts = append(parts, vs...)
		}
		for _, kv := range strings.Split(u.RawQuery, "&") {
			_, v, _ := strings.Cut(kv, "=")
			parts = append(parts, v)
		}
	}
	if u.User != nil {
		parts = append(parts, u.User.Username())
		if pw, ok := u.User.Password(); ok {
			parts = append(parts, pw)
		}
	}
	if len(u.Path) > 1 {
		parts = append(parts, u.EscapedPath(), u.Path)
	}
	// Longest first, so that a part inside another is not left half shown.
	slices.SortFunc(parts, func(a, b string) int { return len(b) - len(a) })
	for _, p := range parts {
		if len(p) >= 4 {
			text = strings.ReplaceAll(text, p, Masked)
		}
	}
	return text
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || c <= ' ' || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

func validHeaderValue(s string) bool {
	for _, r := range s {
		if (r < ' ' && r != '\t') || r == 0x7f {
			return false
		}
	}
	return utf8.ValidString(s)
}

// Sign returns the X-Backupd-Signature value of body.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifySignature is the receiver's check of a delivery: signature is
// the X-Backupd-Signature header, body the raw bytes received. It
// compares in constant time.
func VerifySignature(secret, body []byte, signature string) bool {
	hexSum, ok := strings.CutPrefix(signature, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// WebhookDiffBytes bounds the diff text of one webhook delivery, all its
// events together: a digest of a whole fleet's changes stays a body a
// receiver takes. Events past it carry their diff cut to nothing
// (truncated, with its total_lines), for the receiver to fetch it from
// the API if it wants it.
const WebhookDiffBytes = 1 << 20

// BoundDiffs returns events with the diff text of all of them together
// bounded by WebhookDiffBytes, in their order: an event past it keeps its
// diff cut to nothing (truncated, with its total_lines). Bounding what is
// already bounded changes nothing, so a batch's events are bounded once
// when it is first sent and kept that way (the worker).
func BoundDiffs(events []Event) []Event {
	out := make([]Event, len(events))
	budget := WebhookDiffBytes
	for i, e := range events {
		if d := e.Diff; d != nil {
			if len(d.Unified) > budget {
				e.Diff = &Diff{Truncated: true, TotalLines: d.TotalLines}
			} else {
				budget -= len(d.Unified)
			}
		}
		out[i] = e
	}
	return out
}

// WebhookBody is the JSON a webhook delivery posts: the envelope of the
// events, their diffs bounded (BoundDiffs). The same id and events give
// the same bytes.
func WebhookBody(deliveryID string, events []Event) ([]byte, error) {
	env := Envelope{Schema: Schema, DeliveryID: deliveryID, Events: BoundDiffs(events)}
	for i := range env.Events {
		env.Events[i].Schema = Schema
		env.Events[i].At = env.Events[i].At.UTC()
	}
	return json.Marshal(env)
}

func sendWebhook(ctx context.Context, ch Channel, events []Event, opts Options) Result {
	body, err := WebhookBody(opts.DeliveryID, events)
	if err != nil {
		return Result{Permanent: true, Err: fmt.Errorf("webhook payload: %w", err)}
	}
	h := http.Header{}
	for name, value := range ch.Webhook.Headers {
		h.Set(name, value)
	}
	h.Set("Content-Type", "application/json")
	kind := EventDigest
	if len(events) == 1 {
		kind = oneLine(events[0].Kind, 64)
	}
	h.Set(HeaderEvent, kind)
	h.Set(HeaderDelivery, oneLine(opts.DeliveryID, 128))
	if len(ch.Secret) > 0 {
		h.Set(HeaderSignature, Sign(ch.Secret, body))
	}
	return post(ctx, ch.Webhook.URL, body, h, ch.Webhook.SkipVerify, opts)
}

// post sends one request and classifies the answer: 2xx is delivered; a
// redirect (not followed: the receiver's URL should be the final one) and
// 4xx other than 408 and 429 are permanent; 5xx, 408, 429 and failures
// to connect or to get an answer in time are worth retrying. Errors name
// the URL by scheme and host only.
func post(ctx context.Context, rawURL string, body []byte, h http.Header, skipVerify bool, opts Options) Result {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	where := RedactURL(rawURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return Result{Permanent: true, Err: fmt.Errorf("POST %s: %w", where, innerURLError(err))}
	}
	req.Header = h
	if opts.UserAgent != "" && h.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", opts.UserAgent)
	}
	tr := &http.Transport{
		Proxy:                  outboundProxy(opts.Outbound),
		DialContext:            opts.Outbound.Dialer(timeout).DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: opts.RootCAs, InsecureSkipVerify: skipVerify, MinVersion: tls.VersionTLS12}, //nolint:gosec // the channel's own choice, off by default
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 64 << 10,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		err = innerURLError(err)
		if refused(err) {
			return Result{Permanent: true, Err: fmt.Errorf("POST %s: %w", where, err)}
		}
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			err = fmt.Errorf("no answer within %s", timeout)
		}
		return Result{Err: fmt.Errorf("POST %s: %w", where, err)}
	}
	defer resp.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, answerExcerpt))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, answerDrainLimit))
	res := Result{Status: strconv.Itoa(resp.StatusCode)}
	code := resp.StatusCode
	if code >= 200 && code < 300 {
		return res
	}
	msg := fmt.Sprintf("POST %s: answered %d %s", where, code, http.StatusText(code))
	if q := printable(excerpt); q != "" {
		msg += ": " + maskURLParts(q, rawURL) // a receiver may quote the request's URL
	}
	switch {
	case code >= 300 && code < 400:
		msg += " (redirects are not followed: use the final URL)"
		res.Permanent = true
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
	default:
		res.Permanent = true
	}
	res.Err = errors.New(msg)
	return res
}

// innerURLError drops net/http's *url.Error wrapper, which quotes the URL.
func innerURLError(err error) error {
	var ue *url.Error
	for errors.As(err, &ue) {
		err = ue.Err
	}
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// printable is an answer's excerpt fit to quote on one line.
func printable(b []byte) string {
	s := strings.ToValidUTF8(string(b), "")
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(strings.Join(strings.Fields(s), " "))
}
