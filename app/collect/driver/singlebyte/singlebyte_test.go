package singlebyte

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

var sets = []struct {
	name string
	ref  encoding.Encoding
}{
	{"latin-1", charmap.ISO8859_1},
	{"windows-1252", charmap.Windows1252},
	{"windows-1251", charmap.Windows1251},
	{"koi8-r", charmap.KOI8R},
}

// Every byte decodes as charmap decodes it, alone and in one run.
func TestDecodeMatchesCharmap(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, s := range sets {
		c := ByName(s.name)
		if c == nil {
			t.Fatalf("no set %s", s.name)
		}
		for _, raw := range append([][]byte{all}, splitBytes(all)...) {
			want, err := s.ref.NewDecoder().Bytes(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Decode(raw); got != string(want) {
				t.Errorf("%s: Decode(%x) = %q, charmap %q", s.name, raw, got, want)
			}
		}
	}
}

func splitBytes(b []byte) [][]byte {
	var out [][]byte
	for i := range b {
		out = append(out, b[i:i+1])
	}
	return out
}

// Every rune encodes as charmap's encoder with ReplaceUnsupported encodes
// it, and so do strings with bytes that are not UTF-8.
func TestEncodeMatchesCharmap(t *testing.T) {
	var every strings.Builder
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if utf8.ValidRune(r) {
			every.WriteRune(r)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	samples := []string{every.String(), "", "a\xffb", "a\xe4\xb8", "\x80\xc3", "caf\xc3\xa9 \xef\xbf\xbd \xed\xa0\x80"}
	for range 2000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		samples = append(samples, string(b))
	}
	for _, s := range sets {
		c := ByName(s.name)
		for _, in := range samples {
			want, err := encoding.ReplaceUnsupported(s.ref.NewEncoder()).String(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Encode(in); !bytes.Equal(got, []byte(want)) {
				if len(in) > 40 {
					t.Errorf("%s: Encode of every rune differs from charmap", s.name)
					for r := rune(0x80); r <= utf8.MaxRune; r++ {
						w, _ := encoding.ReplaceUnsupported(s.ref.NewEncoder()).String(string(r))
						if g := c.Encode(string(r)); string(g) != w && utf8.ValidRune(r) {
							t.Errorf("%s: %U: %x, charmap %x", s.name, r, g, w)
							break
						}
					}
					continue
				}
				t.Errorf("%s: Encode(%q) = %x, charmap %x", s.name, in, got, want)
			}
		}
	}
	if ByName("utf-8") != nil || ByName("gbk") != nil {
		t.Error("ByName knows a set that is not single-byte")
	}
}
