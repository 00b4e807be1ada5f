package devsim

import (
	"fmt"
	"strings"

	"backupd/app/collect/driver/singlebyte"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// Encodings lists the character sets a simulated device can print in,
// the same names as the device `encoding` field.
var Encodings = []string{
	"utf-8", "gbk", "gb18030", "big5", "shift_jis", "euc-jp", "euc-kr",
	"latin-1", "windows-1252", "windows-1251", "koi8-r",
}

// charsets are the multi-byte sets; package singlebyte has the others.
var charsets = map[string]encoding.Encoding{
	"gbk":       simplifiedchinese.GBK,
	"gb18030":   simplifiedchinese.GB18030,
	"big5":      traditionalchinese.Big5,
	"shift_jis": japanese.ShiftJIS,
	"euc-jp":    japanese.EUCJP,
	"euc-kr":    korean.EUCKR,
}

func normEncoding(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "", "utf8", "utf-8":
		return "utf-8"
	case "latin1", "iso-8859-1", "iso8859-1":
		return "latin-1"
	case "sjis", "shift-jis":
		return "shift_jis"
	}
	return n
}

// encoder converts the UTF-8 text the simulator builds into the bytes a
// device with that character set sends. Characters the set cannot hold
// become its replacement byte, as on a real device.
type encoder func(s string) []byte

func newEncoder(name string) (encoder, error) {
	n := normEncoding(name)
	if n == "utf-8" {
		return func(s string) []byte { return []byte(s) }, nil
	}
	if sb := singlebyte.ByName(n); sb != nil {
		return sb.Encode, nil
	}
	cs, ok := charsets[n]
	if !ok {
		return nil, fmt.Errorf("devsim: unknown encoding %q", name)
	}
	return func(s string) []byte {
		out, err := encoding.ReplaceUnsupported(cs.NewEncoder()).String(s)
		if err != nil {
			return []byte(s)
		}
		return []byte(out)
	}, nil
}
