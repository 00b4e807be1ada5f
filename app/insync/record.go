// Package insync reads a device inventory from a source of truth — NetBox
// or any HTTP JSON inventory such as Oxidized's `source: http` — and
// returns it as records, one per device as the source describes it.
//
// It only fetches: what a sync does with the records (create, update,
// disable) is decided elsewhere. Its one promise is that a fetch is all or
// nothing: a page missing, a timeout, an HTML login page, a body too large
// or a token without rights is an error and no records, so that a partial
// inventory is never taken for the whole one (and devices missing from it
// are never disabled by mistake). A single unusable device, on the other
// hand, is kept with its Problem, never dropped and never failing the
// fetch.
package insync

import (
	"net/netip"
	"strings"

	"backupd/app/netguard"
)

// Record is one device as the source describes it, before any mapping to
// backupd's platforms, groups or credentials.
type Record struct {
	// Key is the source's stable id for the device: NetBox's device id;
	// for HTTP JSON the mapped key, or the name when no key is mapped. A
	// device renamed in the source keeps its Key.
	Key  string
	Name string
	// Host is the address or DNS name as the source gives it (NetBox's
	// prefix length removed).
	Host string
	// Platform is the source's own platform name or slug, unmapped.
	Platform string
	// Group is a path, outermost first (region, site …); nil when the
	// source says nothing.
	Group []string
	// Credential and Template are names, as the source gives them.
	Credential string
	Template   string
	// Vars holds what else the source maps (Oxidized's vars_map, a
	// map's username and password): values may be secrets, and whoever
	// stores them seals them.
	Vars map[string]string
	// Problem says why the record is unusable (zero when it is usable).
	Problem Why
}

// check sets Problem when the record cannot become a device.
func (r *Record) check() {
	if !r.Problem.IsZero() {
		return
	}
	switch {
	case strings.TrimSpace(r.Name) == "":
		r.Problem = why(WhyNoName)
	case r.Host == "":
		r.Problem = why(WhyNoHost)
	default:
		r.Problem = hostProblem(r.Host)
	}
}

// hostProblem says why host is neither an IP address nor a DNS name, or
// names a cloud metadata service (zero when it is fine).
func hostProblem(host string) Why {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return why(WhyAddressZone, quoted(host))
		}
		if netguard.MetadataHost(host) {
			return why(WhyAddressMetadata, quoted(host))
		}
		return Why{}
	}
	if !dnsName(host) {
		return why(WhyHostNotName, quoted(host))
	}
	if err := (netguard.Policy{}).CheckHost(host); err != nil {
		return why(WhyHostOddNumber, quoted(host))
	}
	return Why{}
}

// dnsName reports whether s is a DNS name: labels of letters, digits,
// hyphens and underscores (not at a label's ends for hyphens), at most 63
// bytes each and 253 in all, not all numeric (1.2.3 is a broken address,
// not a name).
func dnsName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	allDigits := true
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-', c == '_':
				allDigits = false
			default:
				return false
			}
		}
	}
	return !allDigits
}

// quote quotes s for a problem line, cut to a readable length.
func quote(s string) string { return `"` + quoted(s) + `"` }

// quoted is s as quote shows it, without the quotes: a Why's value that
// its text puts in quotes.
func quoted(s string) string {
	const n = 80
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
