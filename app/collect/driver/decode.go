package driver

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

// charsets maps every multi-byte name in Encodings to its decoder; the
// single-byte ones (latin-1, windows-1252, windows-1251, koi8-r) are
// package singlebyte's.
var charsets = map[string]encoding.Encoding{
	"gbk":       simplifiedchinese.GBK,
	"gb18030":   simplifiedchinese.GB18030,
	"big5":      traditionalchinese.Big5,
	"shift_jis": japanese.ShiftJIS,
	"euc-jp":    japanese.EUCJP,
	"euc-kr":    korean.EUCKR,
}

// charset returns the decoder for an encoding name: a multi-byte one, a
// single-byte one, or neither for UTF-8.
func charset(name string) (encoding.Encoding, *singlebyte.Charset, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" || n == "utf-8" {
		return nil, nil, nil
	}
	if sb := singlebyte.ByName(n); sb != nil {
		return nil, sb, nil
	}
	cs, ok := charsets[n]
	if !ok {
		return nil, nil, fmt.Errorf("unknown encoding %q (known: %s)", name, strings.Join(Encodings, ", "))
	}
	return cs, nil, nil
}

// Decode turns what a device printed in encoding (one of Encodings, ""
// meaning utf-8) into UTF-8. Bytes that are not valid in the encoding
// become U+FFFD; only an unknown encoding is an error, so a device that
// prints stray bytes still gets backed up.
func Decode(encoding string, raw []byte) (string, error) {
	cs, sb, err := charset(encoding)
	if err != nil {
		return "", err
	}
	if sb != nil {
		return sb.Decode(raw), nil
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
