package insync

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"backupd/app/netguard"
)

// Limits of a fetch, when Options leaves them zero.
const (
	// DefaultMaxBody bounds one page of an answer: an inventory page is
	// kilobytes to a few megabytes; more is a misconfigured URL.
	DefaultMaxBody = 10 << 20
	// DefaultTimeout bounds one request, its body included.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxPages bounds the pages of one fetch (20,000 devices at
	// NetBox's 50 a page is 400).
	DefaultMaxPages = 10000
)

// Options are the limits and the outbound policy of a fetch.
type Options struct {
	// MaxBody bounds one page in bytes (0: DefaultMaxBody).
	MaxBody int64
	// Timeout bounds one request (0: DefaultTimeout).
	Timeout time.Duration
	// MaxPages bounds the pages followed (0: DefaultMaxPages).
	MaxPages int
	// Outbound refuses metadata and link-local addresses, as every other
	// outbound connection of backupd does.
	Outbound netguard.Policy
	// UserAgent is sent when set.
	UserAgent string
}

func (o Options) maxBody() int64 {
	if o.MaxBody > 0 {
		return o.MaxBody
	}
	return DefaultMaxBody
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o Options) maxPages() int {
	if o.MaxPages > 0 {
		return o.MaxPages
	}
	return DefaultMaxPages
}

// getter fetches JSON pages from one origin with the source's headers.
// Every error it returns names the URL without its query (which may carry
// a key) and has the secrets it was given scrubbed out.
type getter struct {
	client  *http.Client
	base    *url.URL // scheme and host every request goes to
	header  http.Header
	secrets []string
	opts    Options
	what    string // "NetBox", "the HTTP source"
}

func newGetter(what string, base *url.URL, caFile string, header http.Header, secrets []string, opts Options) (*getter, error) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", caFile)
		}
		tlsConf.RootCAs = pool
	}
	timeout := opts.timeout()
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            opts.Outbound.Dialer(timeout).DialContext,
		TLSClientConfig:        tlsConf,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        30 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	if opts.UserAgent != "" {
		header = header.Clone()
		header.Set("User-Agent", opts.UserAgent)
	}
	header.Set("Accept", "application/json")
	c := &http.Client{
		Transport: tr,
		Timeout:   timeout,
		// A redirect to another host would take the token with it.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			if !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
				return fmt.Errorf("redirected to another host (%s), which is not followed so that the token stays with %s", req.URL.Host, via[0].URL.Host)
			}
			return nil
		},
	}
	return &getter{client: c, base: base, header: header, secrets: secrets, opts: opts, what: what}, nil
}

// close lets the idle connections go.
func (g *getter) close() { g.client.CloseIdleConnections() }

// resolve turns a link the source gave (absolute or relative) into a URL
// on the configured origin: its path and query are kept, its scheme and
// host are not, so that a next link built behind a TLS-terminating proxy
// (http://) or naming another host never takes the token elsewhere.
func (g *getter) resolve(link string) (*url.URL, error) {
	u, err := g.base.Parse(link)
	if err != nil {
		return nil, fmt.Errorf("the link %s to the next page is not a URL", quote(redactLink(link)))
	}
	out := *g.base
	out.Path, out.RawPath, out.RawQuery, out.Fragment = u.Path, u.RawPath, u.RawQuery, ""
	return &out, nil
}

// get fetches one page into v. page counts from 1 and names the page in
// errors.
func (g *getter) get(ctx context.Context, u *url.URL, page int, v any) error {
	err := g.fetch(ctx, u, v)
	if err == nil {
		return nil
	}
	return errors.New(g.scrub(fmt.Sprintf("%s %s (page %d): %s", g.what, redactURL(u), page, err)))
}

func (g *getter) fetch(ctx context.Context, u *url.URL, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errors.New("the request could not be built")
	}
	req.Header = g.header.Clone()
	resp, err := g.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if ue != nil && ue.Timeout() || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("no complete answer within %s", g.opts.timeout())
		}
		if errors.Is(err, netguard.ErrRefused) {
			return err
		}
		return fmt.Errorf("no answer: %v", err)
	}
	defer resp.Body.Close()
	limit := g.opts.maxBody()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return fmt.Errorf("no complete answer within %s", g.opts.timeout())
		}
		return fmt.Errorf("the answer broke off: %v", err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("HTTP 401: the token was refused (wrong, expired or missing): check it in the source's settings")
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("HTTP 403: the token is valid but has no right to read this list%s: give its user view permission", detail(body))
	case resp.StatusCode == http.StatusNotFound:
		return errors.New("HTTP 404: no such page: check the URL")
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return fmt.Errorf("HTTP %d %s%s", resp.StatusCode, http.StatusText(resp.StatusCode), detail(body))
	}
	if int64(len(body)) > limit {
		return fmt.Errorf("the page is larger than %s, the limit for one page: ask for smaller pages or raise the limit", size(limit))
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '<' || strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "html") {
		return errors.New("the answer is an HTML page, not JSON (a login page, a proxy or the web interface's address instead of the API's?): check the URL and the token")
	}
	if len(trimmed) == 0 {
		return errors.New("the answer is empty, not JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("the answer is not valid JSON (at byte %d)", se.Offset)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			at := te.Field
			if at == "" {
				at = "the top"
			}
			return fmt.Errorf("the answer is JSON of an unexpected shape (a JSON %s at %s): is the URL the list's?", te.Value, at)
		}
		return fmt.Errorf("the answer is not valid JSON (%v)", err)
	}
	if dec.More() {
		return errors.New("the answer is not valid JSON (more after its end)")
	}
	return nil
}

// scrub removes every secret from s.
func (g *getter) scrub(s string) string {
	for _, sec := range g.secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[hidden]")
		}
	}
	return s
}

// detail is the "detail" of a DRF-style error answer (NetBox's
// {"detail": "…"}), cut short, or "".
func detail(body []byte) string {
	var d struct {
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &d) != nil || d.Detail == "" {
		return ""
	}
	return " (the source says: " + quote(d.Detail) + ")"
}

// redactURL is u without user info and query: a query may carry a key.
func redactURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment = nil, "", false, ""
	return c.String()
}

// redactLink is redactURL for a link that may not parse.
func redactLink(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if u, err := url.Parse(s); err == nil {
		return redactURL(u)
	}
	return "(not a URL)"
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// checkBaseURL checks a source's URL as typed: http or https, a host, no
// user info (a password there would show wherever the URL does).
func checkBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("URL %s is not an http:// or https:// address", quote(redactLink(raw)))
	}
	if u.User != nil {
		return nil, errors.New("URL: put no user or password in the URL; give a token or a header instead")
	}
	if u.Fragment != "" {
		return nil, errors.New("URL: no #fragment")
	}
	if err := (netguard.Policy{}).CheckHost(u.Hostname()); err != nil && netguard.MetadataHost(u.Hostname()) {
		return nil, fmt.Errorf("URL: %w", err)
	}
	return u, nil
}
