// Package driver knows each supported network platform: how to log in, turn
// paging off, and which commands capture its configuration.
package driver

import (
	"net"
	"sort"
	"strings"
)

// Info describes one platform. Drivers register it in init(); the table is
// the single source of truth for the accepted `platform` values.
type Info struct {
	// ID is the value stored on devices and templates, e.g. "cisco_ios".
	ID string
	// Name is how people call it.
	Name string
	// DefaultCommands capture the complete, restorable configuration, one
	// command per line.
	DefaultCommands string
}

var registry = map[string]Info{}

// Register adds a platform; a second registration of an ID panics, since it
// is a programming error found at start-up.
func Register(info Info) {
	if _, dup := registry[info.ID]; dup {
		panic("driver: platform registered twice: " + info.ID)
	}
	registry[info.ID] = info
}

// Lookup returns the platform with id.
func Lookup(id string) (Info, bool) {
	info, ok := registry[id]
	return info, ok
}

// IDs returns every platform ID, sorted.
func IDs() []string {
	ids := make([]string, 0, len(registry))
	for id := range registry {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// DefaultCommands returns the platform's default command text ("" for an
// unknown platform).
func DefaultCommands(id string) string { return registry[id].DefaultCommands }

func lines(cmds ...string) string { return strings.Join(cmds, "\n") }

// Encodings are the character sets a device's output can be decoded from.
var Encodings = []string{
	"utf-8", "gbk", "gb18030", "big5", "shift_jis", "euc-jp", "euc-kr",
	"latin-1", "windows-1252", "windows-1251", "koi8-r",
}

// LoginMethods are the transports a device can be reached over, with
// their default ports.
var LoginMethods = map[string]int{"ssh": 22, "telnet": 23}

// ValidHost reports whether h is an IP address or a DNS name a device can
// be dialled at. Every interface that stores a device host checks it.
func ValidHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
