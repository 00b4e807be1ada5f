package devsim

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"time"
)

// A doc is the text one command prints. Most lines are fixed; volatile
// lines are rendered again at every show, and a size line reports the
// byte count of what follows it (IOS "Current configuration : N bytes").
type doc []docLine

type docLine struct {
	text string
	vol  func(v volatile) string
	size string
}

// volatile is what a volatile line may depend on: the show counter, the
// device clock at that show, the time of the last configuration change
// and a generator seeded by both the device and the show.
type volatile struct {
	Show      int
	Now       time.Time
	ChangedAt time.Time
	R         *rand.Rand
}

func (d doc) render(v volatile) string {
	parts := make([]string, len(d))
	for i, l := range d {
		switch {
		case l.vol != nil:
			parts[i] = l.vol(v)
		default:
			parts[i] = l.text
		}
	}
	for i := len(d) - 1; i >= 0; i-- {
		if d[i].size == "" {
			continue
		}
		n := 0
		for _, p := range parts[i+1:] {
			n += len(p) + 1
		}
		parts[i] = fmt.Sprintf(d[i].size, n)
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "\n") + "\n"
}

// builder collects lines for a doc.
type builder struct{ d doc }

func (b *builder) l(lines ...string) {
	for _, s := range lines {
		b.d = append(b.d, docLine{text: s})
	}
}

func (b *builder) f(format string, a ...any) { b.l(fmt.Sprintf(format, a...)) }

func (b *builder) vol(fn func(v volatile) string) { b.d = append(b.d, docLine{vol: fn}) }

func (b *builder) sizeLine(format string) { b.d = append(b.d, docLine{size: format}) }

// model is the deterministic content of one device: everything derives
// from the seed, the hostname and the mutations applied so far.
type model struct {
	platform string
	host     string
	user     string
	seed     uint64
	words    []string // description words the device's character set can carry
	edits    map[int]uint64
	// issued are the secrets the configuration holds (secret's values,
	// as generated): what must never leave backupd in clear text, see
	// Device.Secrets. rotations counts each secret's changes
	// (Device.RotateSecret).
	issued    map[string]bool
	rotations map[string]uint64
}

func newModel(platform, host, user string, seed int64, encoding string) *model {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%s|%d", platform, host, seed)
	return &model{
		platform:  platform,
		host:      host,
		user:      user,
		seed:      h.Sum64(),
		words:     localWords(encoding),
		edits:     map[int]uint64{},
		issued:    map[string]bool{},
		rotations: map[string]uint64{},
	}
}

// rng returns a generator for one named purpose, so adding a field never
// shifts the values of the others.
func (m *model) rng(purpose string, n uint64) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(purpose))
	return rand.New(rand.NewPCG(m.seed^h.Sum64(), n*0x9e3779b97f4a7c15+1))
}

const cryptAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func randString(r *rand.Rand, n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// secret returns a stable random string in the given alphabet, e.g. the
// salt and digest of a password hash. A purpose's text before a colon
// names the secret ("user" for "user:salt"): RotateSecret changes all of
// it. Values of notSecret purposes (a serial number) are random text
// that is no secret.
func (m *model) secret(purpose string, n int, alphabet string) string {
	name, _, _ := strings.Cut(purpose, ":")
	s := randString(m.rng("secret:"+purpose, m.rotations[name]), n, alphabet)
	if !notSecret[name] {
		m.issued[s] = true
	}
	return s
}

// notSecret are the purposes of secret whose values a configuration may
// show: serial numbers, software IDs, a file's integrity digest.
var notSecret = map[string]bool{"serial": true, "swid": true, "swid2": true, "ssd": true}

func (m *model) sha512Crypt(purpose string) string {
	return "$6$" + m.secret(purpose+":salt", 16, cryptAlphabet) + "$" + m.secret(purpose, 86, cryptAlphabet)
}

func (m *model) ciscoType9(purpose string) string {
	return "$9$" + m.secret(purpose+":salt", 14, cryptAlphabet) + "$" + m.secret(purpose, 43, cryptAlphabet)
}

const hexDigits = "0123456789abcdef"
const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// unit is one repeated slice of configuration: a port, its VLAN, a
// subnet, a route and a filter rule. Configurations grow by adding units.
type unit struct {
	Index   int
	Slot    int
	Port    int
	Desc    string
	VLAN    int
	Net     string // "10.a.b" — the unit's /24
	Routed  bool
	Shut    bool
	Service int
	Remote  string // "192.0.2.x"
	Dest    string // "172.x.y.0" — a static route's destination /24
}

var services = []int{22, 53, 80, 123, 161, 443, 514, 830, 3389, 8080, 8443}

var descWords = []string{"uplink", "server", "printer", "ap", "camera", "voip", "core", "dist", "backup", "storage", "mgmt", "lab", "wan", "dmz", "hv", "db", "web", "ups"}

func (m *model) unit(i int) unit {
	r := m.rng("unit", uint64(i))
	u := unit{
		Index:   i,
		Slot:    i/48 + 1,
		Port:    i%48 + 1,
		VLAN:    10 + (i/4)%400*5 + i%4,
		Net:     fmt.Sprintf("10.%d.%d", 16+i/250%200, i%250),
		Routed:  i%4 == 0,
		Shut:    r.IntN(10) == 0,
		Service: services[r.IntN(len(services))],
		Remote:  fmt.Sprintf("192.0.2.%d", 1+r.IntN(254)),
		Dest:    fmt.Sprintf("172.%d.%d.0", 16+i/256%16, i%256),
	}
	u.Desc = m.description(r, i)
	if e, ok := m.edits[i]; ok {
		er := rand.New(rand.NewPCG(e, uint64(i)+7))
		u.Desc = fmt.Sprintf("%s-%s changed %04d", descWords[er.IntN(len(descWords))], m.host, er.IntN(10000))
		u.Service = services[er.IntN(len(services))]
		u.Shut = !u.Shut
	}
	return u
}

func (m *model) description(r *rand.Rand, i int) string {
	w := descWords[r.IntN(len(descWords))]
	if i%7 == 3 && len(m.words) > 0 {
		return fmt.Sprintf("%s %s-%02d", m.words[r.IntN(len(m.words))], w, r.IntN(100))
	}
	return fmt.Sprintf("%s-%s-%02d", w, strings.ToLower(m.host), r.IntN(100))
}

// mutate changes a few units for good, the way an operator's edit does.
func (m *model) mutate(seed int64, units int) {
	if units < 1 {
		return
	}
	r := rand.New(rand.NewPCG(uint64(seed), m.seed))
	for k := 0; k < 3; k++ {
		m.edits[r.IntN(units)] = r.Uint64()
	}
}

// localWords returns description words the encoding can represent, so a
// non-UTF-8 device prints real non-ASCII text rather than replacement
// characters.
func localWords(encoding string) []string {
	switch normEncoding(encoding) {
	case "latin-1", "windows-1252":
		return []string{"Büro", "Zürich", "Café", "Ørsted", "Señal", "Größe", "Lyon-Défense"}
	case "windows-1251", "koi8-r":
		return []string{"Москва", "Склад", "Офис", "Серверная"}
	case "gbk", "gb18030":
		return []string{"机房", "办公楼", "核心交换", "上海"}
	case "big5":
		return []string{"機房", "辦公室", "台北"}
	case "shift_jis", "euc-jp":
		return []string{"東京", "本社", "サーバ室"}
	case "euc-kr":
		return []string{"서울", "본사", "서버실"}
	default:
		return []string{"Büro", "Zürich", "机房", "東京", "Москва"}
	}
}

func ip(net string, host int) string { return fmt.Sprintf("%s.%d", net, host) }

// ciscoTime formats like IOS: "10:11:12 UTC Mon Jan 5 2026".
func ciscoTime(t time.Time) string { return t.UTC().Format("15:04:05 MST Mon Jan 2 2006") }
