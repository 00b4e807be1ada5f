// Package inventory holds the rules a device must follow whichever
// interface stores it — the public API, the web form, the CSV import — so
// that the interfaces cannot drift apart. References to groups,
// credentials and templates are checked by the store (db), scope by the
// caller, which knows who asks.
package inventory

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"backupd/app/collect/driver"
	"backupd/app/netguard"
	"backupd/db"
)

// Field limits, in characters.
const (
	MaxNameLength    = 128
	MaxHostLength    = 253
	MaxRemarksLength = 2000
)

// Defaults of a new device.
const (
	DefaultLoginMethod = "ssh"
	DefaultEncoding    = "utf-8"
)

// Problem says what is wrong with a field, stably, for interfaces that
// translate the message themselves.
type Problem string

// Problems a device field can have.
const (
	Blank              Problem = "blank"
	TooLong            Problem = "too_long"
	BadHost            Problem = "bad_host"
	MetadataHost       Problem = "metadata_host"
	BadPort            Problem = "bad_port"
	UnknownPlatform    Problem = "unknown_platform"
	UnknownLoginMethod Problem = "unknown_login_method"
	UnknownEncoding    Problem = "unknown_encoding"
)

// FieldError is one bad field. Field is named as the public API names it
// (name, host, port, platform, login_method, encoding, remarks); Message
// is English, for the API.
type FieldError struct {
	Field   string
	Problem Problem
	Message string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Message }

// NewDevice is a device with every default set: logged into over SSH on
// port 22, printing UTF-8, enabled.
func NewDevice() db.Device {
	return db.Device{
		LoginMethod: DefaultLoginMethod, Port: DefaultPort(DefaultLoginMethod),
		Encoding: DefaultEncoding, Enabled: true,
	}
}

// DefaultPort is the port of a login method; 0 for an unknown method.
func DefaultPort(method string) int { return driver.LoginMethods[method] }

// LoginMethods are the accepted login methods, ssh first.
func LoginMethods() []string {
	out := make([]string, 0, len(driver.LoginMethods))
	for m := range driver.LoginMethods {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// SetLoginMethod switches d to method. A port left at the old method's
// default follows to the new method's: "telnet instead of SSH" means port
// 23, not SSH's 22.
func SetLoginMethod(d *db.Device, method string) {
	if method == d.LoginMethod {
		return
	}
	if d.Port == DefaultPort(d.LoginMethod) {
		if p := DefaultPort(method); p != 0 {
			d.Port = p
		}
	}
	d.LoginMethod = method
}

// CheckName trims a device name and checks it.
func CheckName(name string) (string, *FieldError) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return name, &FieldError{"name", Blank, "must not be blank"}
	case utf8.RuneCountInString(name) > MaxNameLength:
		return name, &FieldError{"name", TooLong, "must be at most " + strconv.Itoa(MaxNameLength) + " characters"}
	}
	return name, nil
}

// CheckHost trims a host and checks that it is an IP address or a DNS
// name a device can be dialled at, and not a cloud metadata service's
// address (no device answers there; a device pointed at it would hand the
// server's cloud credentials to whoever reads its backups). Other
// link-local addresses are refused when connecting, unless the outbound
// allow list holds them (netguard).
func CheckHost(host string) (string, *FieldError) {
	host = strings.TrimSpace(host)
	switch {
	case host == "":
		return host, &FieldError{"host", Blank, "must not be blank"}
	case NumericHost(host):
		return host, &FieldError{"host", BadHost, "is not an IPv4 address (four numbers from 0 to 255, without leading zeros), and a DNS name does not end in a number"}
	case !driver.ValidHost(host):
		return host, &FieldError{"host", BadHost, "must be an IP address or a DNS name"}
	case netguard.MetadataHost(host):
		return host, &FieldError{"host", MetadataHost, "is the address of a cloud metadata service, not of a device"}
	}
	return host, nil
}

// NumericHost reports a host of digits and dots that is not an IP
// address: "999.1.1.1", "10.1.1", "010.0.0.1", "1.2.3.4.". It is no DNS
// name either (no top-level domain is all digits, RFC 3696 section 2),
// and taken as one it would be looked up in DNS rather than dialled: a
// mistyped address.
func NumericHost(host string) bool {
	host = strings.TrimSpace(host)
	if host == "" || net.ParseIP(host) != nil {
		return false
	}
	return strings.Trim(host, "0123456789.") == ""
}

// CheckDevice trims d's name and host and checks every field it holds
// itself, returning every problem, in form order.
func CheckDevice(d *db.Device) []FieldError {
	var errs []FieldError
	add := func(fe *FieldError) {
		if fe != nil {
			errs = append(errs, *fe)
		}
	}
	var fe *FieldError
	d.Name, fe = CheckName(d.Name)
	add(fe)
	d.Host, fe = CheckHost(d.Host)
	add(fe)
	if d.Port < 1 || d.Port > 65535 {
		add(&FieldError{"port", BadPort, "must be between 1 and 65535"})
	}
	pl, known := driver.Lookup(d.Platform)
	if !known {
		add(&FieldError{"platform", UnknownPlatform, "unknown platform; accepted: " + strings.Join(driver.IDs(), ", ")})
	}
	if DefaultPort(d.LoginMethod) == 0 {
		add(&FieldError{"login_method", UnknownLoginMethod, "must be one of " + strings.Join(LoginMethods(), ", ")})
	} else if known && !pl.OffersTransport(d.LoginMethod) {
		add(&FieldError{"login_method", UnknownLoginMethod, pl.Name + " is reached over " + strings.Join(pl.TransportList(), " or ") + " only"})
	}
	if !slices.Contains(driver.Encodings, d.Encoding) {
		add(&FieldError{"encoding", UnknownEncoding, "must be one of " + strings.Join(driver.Encodings, ", ")})
	}
	if d.Remarks != nil && utf8.RuneCountInString(*d.Remarks) > MaxRemarksLength {
		add(&FieldError{"remarks", TooLong, "must be at most " + strconv.Itoa(MaxRemarksLength) + " characters"})
	}
	return errs
}
