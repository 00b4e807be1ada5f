package syslog

import (
	"bytes"
	"strings"
)

// Format says which syslog header a message carried.
type Format int

const (
	// FormatRaw: no header backupd recognised; the whole line is the text.
	FormatRaw Format = iota
	// FormatRFC3164: the BSD header (PRI, timestamp, hostname, tag), as
	// most network gear sends it, read leniently.
	FormatRFC3164
	// FormatRFC5424: the IETF header (PRI VERSION TIMESTAMP HOSTNAME
	// APP-NAME PROCID MSGID STRUCTURED-DATA).
	FormatRFC5424
)

// Message is one syslog message, split as far as its header allowed.
// Parsing never fails: what cannot be read as a header stays in Text.
// Timestamps are kept as sent (device clocks are often unset or in local
// time; backupd acts on arrival time, never on these).
type Message struct {
	Format   Format
	Priority int // 0-191, or -1 when the message had no <PRI>
	Facility int // Priority / 8, or -1
	Severity int // Priority % 8, or -1

	Timestamp      string
	Hostname       string
	AppName        string
	ProcID         string
	MsgID          string // RFC 5424 only
	StructuredData string // RFC 5424 only, raw ("" when "-")
	Text           string // the message after the header: RFC 3164 MSG (tag included), RFC 5424 MSG
}

// matchText is what the patterns look at: the text, behind the RFC 5424
// MSGID when there is one (Junos in structured-data mode puts UI_COMMIT
// there rather than in the text).
func (m *Message) matchText() string {
	if m.MsgID != "" {
		return m.MsgID + ": " + m.Text
	}
	return m.Text
}

// Parse reads one syslog message (one datagram or one TCP frame, without
// its framing). It accepts what real network gear sends rather than only
// what the RFCs allow: a missing <PRI>, Cisco sequence numbers ("82: "),
// Cisco's "*" and "." timestamp marks (clock not set / not in sync),
// milliseconds and time zones, years before or after the time (NX-OS,
// ASA, Huawei, H3C), ISO timestamps, no hostname at all, and key=value or
// CSV bodies (FortiOS, PAN-OS).
func Parse(b []byte) Message {
	b = trimMessage(b)
	m := Message{Priority: -1, Facility: -1, Severity: -1}
	rest := b
	if pri, n, ok := parsePRI(rest); ok {
		m.Priority, m.Facility, m.Severity = pri, pri/8, pri%8
		rest = rest[n:]
		if parse5424(rest, &m) {
			m.Format = FormatRFC5424
			return m
		}
	}
	parse3164(rest, &m)
	return m
}

// trimMessage drops the framing leftovers devices send: trailing CR, LF
// and NUL, and leading spaces.
func trimMessage(b []byte) []byte {
	for len(b) > 0 {
		c := b[len(b)-1]
		if c != '\n' && c != '\r' && c != 0 && c != ' ' && c != '\t' {
			break
		}
		b = b[:len(b)-1]
	}
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// parsePRI reads "<N>" with N in 0..191 written in 1-3 digits.
func parsePRI(b []byte) (pri, n int, ok bool) {
	if len(b) < 3 || b[0] != '<' {
		return 0, 0, false
	}
	i := 1
	for i < len(b) && i <= 4 && isDigit(b[i]) {
		pri = pri*10 + int(b[i]-'0')
		i++
	}
	if i == 1 || i > 4 || i >= len(b) || b[i] != '>' || pri > 191 {
		return 0, 0, false
	}
	return pri, i + 1, true
}

// parse5424 reads the RFC 5424 header after the PRI. It reports false
// (leaving m untouched) when the bytes do not start with a version number
// and a space followed by six header fields.
func parse5424(b []byte, m *Message) bool {
	// VERSION: 1-2 digits, non-zero, then a space.
	i := 0
	for i < len(b) && i < 3 && isDigit(b[i]) {
		i++
	}
	if i == 0 || i > 2 || i >= len(b) || b[i] != ' ' || b[0] == '0' {
		return false
	}
	rest := b[i+1:]
	var f [5][]byte // TIMESTAMP HOSTNAME APP-NAME PROCID MSGID
	for k := range f {
		sp := bytes.IndexByte(rest, ' ')
		if sp <= 0 {
			if k == len(f)-1 && len(rest) > 0 {
				f[k], rest = rest, nil // MSGID at the very end, nothing after
				continue
			}
			return false
		}
		f[k], rest = rest[:sp], rest[sp+1:]
	}
	// The timestamp must look like one ("-" or starting with a digit), or
	// this is a 3164 line that happened to begin with a number.
	if ts := f[0]; !(len(ts) == 1 && ts[0] == '-') && !(len(ts) >= 10 && isDigit(ts[0]) && ts[4] == '-') {
		return false
	}
	nilv := func(v []byte) string {
		if len(v) == 1 && v[0] == '-' {
			return ""
		}
		return string(v)
	}
	sd, msg := splitSD(rest)
	m.Timestamp = nilv(f[0])
	m.Hostname = nilv(f[1])
	m.AppName = nilv(f[2])
	m.ProcID = nilv(f[3])
	m.MsgID = nilv(f[4])
	m.StructuredData = sd
	m.Text = strings.TrimPrefix(string(msg), "\ufeff") // the BOM RFC 5424 puts before UTF-8 text
	return true
}

// splitSD splits STRUCTURED-DATA from MSG. SD is "-" or one or more
// [id param="value" ...] elements, where a value may hold \" \\ and \].
// An element that never closes takes the rest: it is kept as SD, with no
// message text.
func splitSD(b []byte) (sd string, msg []byte) {
	if len(b) == 0 {
		return "", nil
	}
	if b[0] == '-' {
		if len(b) == 1 {
			return "", nil
		}
		if b[1] == ' ' {
			return "", b[2:]
		}
		return "", b // "-" glued to the text: lenient, treat all as text
	}
	if b[0] != '[' {
		return "", b // no SD at all (some senders omit the "-")
	}
	i := 0
	for i < len(b) && b[i] == '[' {
		inQuote := false
		j := i + 1
		for ; j < len(b); j++ {
			c := b[j]
			if inQuote {
				if c == '\\' && j+1 < len(b) {
					j++
					continue
				}
				if c == '"' {
					inQuote = false
				}
				continue
			}
			if c == '"' {
				inQuote = true
			} else if c == ']' {
				break
			}
		}
		if j >= len(b) {
			return string(b), nil
		}
		i = j + 1
	}
	sd = string(b[:i])
	if i < len(b) && b[i] == ' ' {
		i++
	}
	return sd, b[i:]
}

var months = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// parse3164 reads the BSD header leniently: an optional sequence number,
// an optional timestamp in one of the shapes devices use, then (only
// after a timestamp, as RFC 3164 says) a hostname and a tag.
func parse3164(b []byte, m *Message) {
	rest := skipSpaces(b)
	// NX-OS and some ASA configurations put ": " right after the PRI.
	if len(rest) > 0 && rest[0] == ':' {
		rest = skipSpaces(rest[1:])
	}
	// Cisco "service sequence-numbers": "82: " or Ruijie "226:Mar".
	if n := seqNumber(rest); n > 0 {
		rest = skipSpaces(rest[n:])
	}
	ts, n := timestamp(rest)
	if n == 0 {
		m.Format = FormatRaw
		m.Text = string(rest)
		return
	}
	m.Format = FormatRFC3164
	m.Timestamp = ts
	rest = skipSpaces(rest[n:])

	// Hostname: a plain host token (name, IPv4, IPv6) followed by a space.
	// A token ending in ':' or holding '[' is a tag, '%' starts Cisco
	// text, '=' and ',' start FortiOS / PAN-OS bodies: no hostname then.
	if tok, after, ok := nextToken(rest); ok && isHostToken(tok) {
		m.Hostname = string(tok)
		rest = skipSpaces(after)
	}
	// ASA and RouterOS put " : " between hostname (if any) and text.
	if len(rest) >= 2 && rest[0] == ':' && rest[1] == ' ' {
		rest = skipSpaces(rest[2:])
	}
	// Tag: "name[pid]:" or "name:". It stays in Text (RFC 3164's MSG is
	// TAG + CONTENT), so patterns see the line as an operator reads it.
	if tok, _, ok := nextToken(rest); ok {
		if app, pid, isTag := tag(tok); isTag {
			m.AppName, m.ProcID = app, pid
		}
	}
	m.Text = string(rest)
}

// seqNumber returns the length of a leading "digits:" sequence number
// (with its colon), or 0. "00:00:46:" (an uptime stamp) is not one: a
// sequence number's colon is followed by a space or a letter, never a
// digit.
func seqNumber(b []byte) int {
	i := 0
	for i < len(b) && i < 10 && isDigit(b[i]) {
		i++
	}
	if i == 0 || i >= len(b) || b[i] != ':' {
		return 0
	}
	if i+1 < len(b) && isDigit(b[i+1]) {
		return 0
	}
	return i + 1
}

// timestamp recognises the timestamp shapes network gear sends and
// returns it with the length consumed (its trailing ':' included), or 0:
//
//	Mmm dd hh:mm:ss            RFC 3164
//	*Mmm d hh:mm:ss.mmm UTC:   Cisco, clock not set (*) or not in sync (.)
//	Mmm dd yyyy hh:mm:ss       ASA, Huawei
//	Mmm dd hh:mm:ss:mmm yyyy   H3C
//	yyyy Mmm dd hh:mm:ss       NX-OS
//	yyyy-mm-ddThh:mm:ss(.f)(Z|±hh:mm) and yyyy-mm-dd hh:mm:ss
//	hh:mm:ss(.mmm):            Cisco uptime or time-only stamps
func timestamp(b []byte) (string, int) {
	i := 0
	if i < len(b) && (b[i] == '*' || b[i] == '.') {
		i++
	}
	start := i
	switch {
	case len(b)-i >= 3 && isMonth(b[i:]):
		i += 3
		j, ok := day(b, i)
		if !ok {
			return "", 0
		}
		i = j
		// optional year before the time
		if y := year(b, i); y > 0 && i+y < len(b) && b[i+y] == ' ' {
			i += y + 1
		}
		j, ok = clock(b, i)
		if !ok {
			return "", 0
		}
		i = j
		i = afterClock(b, i)
	case len(b)-i >= 5 && year(b, i) == 4 && b[i+4] == ' ' && isMonth(b[i+5:]):
		i += 5 + 3
		j, ok := day(b, i)
		if !ok {
			return "", 0
		}
		j, ok = clock(b, j)
		if !ok {
			return "", 0
		}
		i = afterClock(b, j)
	case len(b)-i >= 10 && year(b, i) == 4 && b[i+4] == '-' && isDigit(b[i+5]) && isDigit(b[i+6]) &&
		b[i+7] == '-' && isDigit(b[i+8]) && isDigit(b[i+9]):
		i += 10
		if i < len(b) && (b[i] == 'T' || b[i] == ' ') {
			if j, ok := clock(b, i+1); ok {
				i = j
				// fraction
				if i < len(b) && (b[i] == '.' || b[i] == ',') {
					k := i + 1
					for k < len(b) && isDigit(b[k]) {
						k++
					}
					if k > i+1 {
						i = k
					}
				}
				// zone
				if i < len(b) && b[i] == 'Z' {
					i++
				} else if i+3 <= len(b) && (b[i] == '+' || b[i] == '-') && isDigit(b[i+1]) && isDigit(b[i+2]) {
					k := i + 3
					if k < len(b) && b[k] == ':' {
						k++
					}
					if k+1 < len(b) && isDigit(b[k]) && isDigit(b[k+1]) {
						i = k + 2
					}
				}
			}
		}
	case len(b)-i >= 8 && isDigit(b[i]):
		j, ok := clock(b, i)
		if !ok {
			return "", 0
		}
		i = afterClock(b, j)
	default:
		return "", 0
	}
	end := i
	if i < len(b) && b[i] == ':' {
		i++
	}
	if i < len(b) && b[i] != ' ' {
		return "", 0 // glued to something: not a timestamp after all
	}
	return string(b[start:end]), i
}

// afterClock skips what follows hh:mm:ss: milliseconds (".123", or
// ":123" on H3C), a year after the time (H3C), a time zone name ("UTC",
// "CEST").
func afterClock(b []byte, i int) int {
	if i < len(b) && (b[i] == '.' || b[i] == ':') {
		k := i + 1
		for k < len(b) && k < i+10 && isDigit(b[k]) {
			k++
		}
		if k > i+1 {
			i = k
		}
	}
	if i < len(b) && b[i] == ' ' {
		if y := year(b, i+1); y == 4 && (i+5 == len(b) || b[i+5] == ' ' || b[i+5] == ':') {
			i += 5
		}
	}
	if i < len(b) && b[i] == ' ' {
		k := i + 1
		for k < len(b) && k < i+7 && b[k] >= 'A' && b[k] <= 'Z' {
			k++
		}
		// a zone name is 2-6 capitals ending the timestamp (":" or the end)
		if k-(i+1) >= 2 && (k == len(b) || b[k] == ':') {
			i = k
		}
	}
	return i
}

// day reads " d" or " dd" (one or two spaces before a one-digit day) and
// the space after it; it returns the index after that space.
func day(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != ' ' {
		return 0, false
	}
	i++
	if i < len(b) && b[i] == ' ' {
		i++
	}
	k := i
	for k < len(b) && k < i+2 && isDigit(b[k]) {
		k++
	}
	if k == i || k >= len(b) || b[k] != ' ' {
		return 0, false
	}
	return k + 1, true
}

// clock reads "h:mm:ss" or "hh:mm:ss" and returns the index after it.
func clock(b []byte, i int) (int, bool) {
	k := i
	for k < len(b) && k < i+2 && isDigit(b[k]) {
		k++
	}
	if k == i || k+6 > len(b) {
		return 0, false
	}
	if b[k] != ':' || !isDigit(b[k+1]) || !isDigit(b[k+2]) || b[k+3] != ':' || !isDigit(b[k+4]) || !isDigit(b[k+5]) {
		return 0, false
	}
	if k+6 < len(b) && isDigit(b[k+6]) {
		return 0, false
	}
	return k + 6, true
}

// year returns 4 when b[i:] starts with four digits, else 0.
func year(b []byte, i int) int {
	if i+4 <= len(b) && isDigit(b[i]) && isDigit(b[i+1]) && isDigit(b[i+2]) && isDigit(b[i+3]) {
		if i+4 == len(b) || !isDigit(b[i+4]) {
			return 4
		}
	}
	return 0
}

func isMonth(b []byte) bool {
	if len(b) < 3 {
		return false
	}
	for _, mo := range months {
		if b[0] == mo[0] && b[1] == mo[1] && b[2] == mo[2] {
			return true
		}
	}
	return false
}

// nextToken returns the bytes up to the next space and what follows the
// space; ok is false when no space follows (the token would be the whole
// remaining text).
func nextToken(b []byte) (tok, after []byte, ok bool) {
	sp := bytes.IndexByte(b, ' ')
	if sp <= 0 {
		return nil, nil, false
	}
	return b[:sp], b[sp+1:], true
}

// isHostToken reports whether tok looks like a hostname, an IPv4 or an
// IPv6 address: letters, digits, '.', '-', '_' and ':' (IPv6), not
// ending in ':' (that is a tag) and not starting with '%' (Cisco text).
func isHostToken(tok []byte) bool {
	if len(tok) == 0 || len(tok) > 255 || tok[len(tok)-1] == ':' {
		return false
	}
	if !isAlnum(tok[0]) {
		return false
	}
	for _, c := range tok {
		if !isAlnum(c) && c != '.' && c != '-' && c != '_' && c != ':' {
			return false
		}
	}
	return true
}

// tag reads "name[pid]:" or "name:" (name: letters, digits, '.', '-',
// '_', '/', at most 48 of them).
func tag(tok []byte) (app, pid string, ok bool) {
	if len(tok) < 2 || tok[len(tok)-1] != ':' || !isAlnum(tok[0]) {
		return "", "", false
	}
	t := tok[:len(tok)-1]
	if lb := bytes.IndexByte(t, '['); lb > 0 {
		if t[len(t)-1] != ']' {
			return "", "", false
		}
		pid = string(t[lb+1 : len(t)-1])
		t = t[:lb]
	}
	if len(t) > 48 {
		return "", "", false
	}
	for _, c := range t {
		if !isAlnum(c) && c != '.' && c != '-' && c != '_' && c != '/' {
			return "", "", false
		}
	}
	return string(t), pid, true
}

func skipSpaces(b []byte) []byte {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return b
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
