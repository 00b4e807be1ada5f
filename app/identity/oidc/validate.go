package oidc

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"backupd/db"
)

// FieldError is one setting that cannot work, named by its JSON name
// in db.OIDCSettings ("issuer", "client_id", …).
type FieldError struct {
	Field   string
	Message string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Message }

// Bounds of the settings.
const (
	MaxNameChars     = 64
	MaxClientIDBytes = 255
	MaxScopes        = 20
	MaxScopeBytes    = 64
)

// claimName is a claim name a provider could use: a plain name
// ("groups") or a namespaced one ("https://example.com/roles").
var claimName = regexp.MustCompile(`^[A-Za-z0-9_.:/-]{1,128}$`)

// scopeToken is RFC 6749's scope-token.
var scopeToken = regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]+$`)

// Validate lists what is wrong with s, field by field, in the order of
// the form; none for settings New can work with. It does not ask the
// provider anything (New does).
func Validate(s db.OIDCSettings) []FieldError {
	var out []FieldError
	add := func(field, format string, args ...any) {
		out = append(out, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	switch name := strings.TrimSpace(s.Name); {
	case len([]rune(name)) > MaxNameChars:
		add("name", "is longer than %d characters", MaxNameChars)
	case hasControl(name):
		add("name", "holds a control character")
	}
	if msg := checkIssuer(s.Issuer); msg != "" {
		add("issuer", "%s", msg)
	}
	switch id := s.ClientID; {
	case strings.TrimSpace(id) == "":
		add("client_id", "is required")
	case len(id) > MaxClientIDBytes:
		add("client_id", "is longer than %d bytes", MaxClientIDBytes)
	case id != strings.TrimSpace(id) || hasControl(id):
		add("client_id", "holds a space at an end or a control character")
	}
	if msg := checkExternalURL(s.ExternalURL); msg != "" {
		add("external_url", "%s", msg)
	}
	if len(s.Scopes) > MaxScopes {
		add("scopes", "more than %d scopes", MaxScopes)
	}
	for _, sc := range s.Scopes {
		if len(sc) > MaxScopeBytes || !scopeToken.MatchString(sc) {
			add("scopes", "%q is not a scope (letters, digits and punctuation without spaces, quotes or backslashes, at most %d bytes)",
				sc, MaxScopeBytes)
			break
		}
	}
	for _, c := range []struct{ field, value string }{{"username_claim", s.UsernameClaim}, {"groups_claim", s.GroupsClaim}} {
		if c.value != "" && !claimName.MatchString(c.value) {
			add(c.field, "%q is not a claim name (letters, digits and _ . : / -, at most 128)", c.value)
		}
	}
	if strings.TrimSpace(s.CACert) != "" {
		if msg := checkPEM(s.CACert); msg != "" {
			add("ca_cert", "%s", msg)
		}
	}
	return out
}

func hasControl(s string) bool { return strings.IndexFunc(s, unicode.IsControl) >= 0 }

// checkIssuer wants https://, or http:// on this machine only (a
// provider beside backupd, or a test).
func checkIssuer(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return "is required"
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || raw != strings.TrimSpace(raw):
		return "is not an absolute URL such as https://idp.example.com/realms/main"
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return "must not hold a user, a query or a fragment"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && loopbackHost(u.Hostname()):
		return ""
	case u.Scheme == "http":
		return "must be https:// (http:// only for a provider on this machine: localhost, 127.0.0.1)"
	}
	return "must be an https:// URL"
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkExternalURL wants the absolute http(s) URL browsers reach backupd
// at, without query or fragment (a path prefix is fine).
func checkExternalURL(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return "is required: the provider sends browsers back to it"
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || raw != strings.TrimSpace(raw):
		return "is not an absolute URL such as https://backupd.example.com"
	case u.Scheme != "https" && u.Scheme != "http":
		return "must be an http:// or https:// URL"
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return "must not hold a user, a query or a fragment"
	}
	return ""
}

func checkPEM(text string) string {
	rest := []byte(text)
	n := 0
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return fmt.Sprintf("a certificate does not parse: %v", err)
		}
		n++
	}
	if n == 0 {
		return "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
	}
	return ""
}

func joinProblems(ps []FieldError) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Error()
	}
	return strings.Join(parts, "; ")
}
