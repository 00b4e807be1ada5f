package driver

import (
	"fmt"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// charsets maps every name in Encodings but utf-8 to its decoder.
var charsets = map[string]encoding.Encoding{
	"gbk":          simplifiedchinese.GBK,
	"gb18030":      simplifiedchinese.GB18030,
	"big5":         traditionalchinese.Big5,
	"shift_jis":    japanese.ShiftJIS,
	"euc-jp":       japanese.EUCJP,
	"euc-kr":       korean.EUCKR,
	"latin-1":      charmap.ISO8859_1,
	"windows-1252": charmap.Windows1252,
	"windows-1251": charmap.Windows1251,
	"koi8-r":       charmap.KOI8R,
}

// charset returns the decoder for an encoding name; nil means UTF-8.
func charset(name string) (encoding.Encoding, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" || n == "utf-8" {
		return nil, nil
	}
	cs, ok := charsets[n]
	if !ok {
		return nil, fmt.Errorf("unknown encoding %q (known: %s)", name, strings.Join(Encodings, ", "))
	}
	return cs, nil
}

// Decode turns what a device printed in encoding (one of Encodings, ""
// meaning utf-8) into UTF-8. Bytes that are not valid in the encoding
// become U+FFFD; only an unknown encoding is an error, so a device that
// prints stray bytes still gets backed up.
func Decode(encoding string, raw []byte) (string, error) {
	cs, err := charset(encoding)
	if err != nil {
		return "", err
	}
	if cs == nil {
		return strings.ToValidUTF8(string(raw), "\uFFFD"), nil
	}
	out, err := cs.NewDecoder().Bytes(raw)
	if err != nil {
		return "", fmt.Errorf("decode %s: %w", encoding, err)
	}
	// The decoders replace invalid sequences already; this guards the
	// promise of valid UTF-8 should one of them ever pass bytes through.
	return strings.ToValidUTF8(string(out), "\uFFFD"), nil
}
