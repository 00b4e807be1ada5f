package driver

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestDecode decodes bytes as the devices send them, written out by hand
// from the character set tables (not produced by the library under test).
func TestDecode(t *testing.T) {
	for _, c := range []struct {
		encoding string
		raw      []byte
		want     string
	}{
		{"gbk", []byte(" description \xd6\xd0\xce\xc4\xbb\xfa\xb7\xbf"), " description 中文机房"},
		{"GBK", []byte("\xd6\xd0\xce\xc4"), "中文"},
		{"gb18030", []byte("\xd6\xd0\xce\xc4 \x81\x30\x81\x30"), "中文 \u0080"},
		{"big5", []byte("\xa4\xa4\xa4\xe5"), "中文"},
		{"shift_jis", []byte("\x93\xfa\x96\x7b"), "日本"},
		{"euc-jp", []byte("\xc6\xfc\xcb\xdc"), "日本"},
		{"euc-kr", []byte("\xc7\xd1\xb1\xb9"), "한국"},
		{"latin-1", []byte("snmp-server location Caf\xe9 M\xfcller"), "snmp-server location Café Müller"},
		{"windows-1252", []byte("price \x80 5"), "price € 5"},
		{"windows-1251", []byte("\xef\xf0\xe8\xe2\xe5\xf2"), "привет"},
		{"koi8-r", []byte("\xd0\xd2\xc9\xd7\xc5\xd4"), "привет"},
		{"utf-8", []byte("description 東京"), "description 東京"},
		{"", []byte("hostname R1"), "hostname R1"},
		// Invalid UTF-8 is kept, the bad bytes replaced: never a failure.
		{"utf-8", []byte("description Caf\xe9\r\nend"), "description Caf\uFFFD\r\nend"},
		{"", []byte("\xff\xfe ok"), "\uFFFD ok"},
	} {
		got, err := Decode(c.encoding, c.raw)
		if err != nil {
			t.Errorf("%s: %v", c.encoding, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.encoding, got, c.want)
		}
	}
}

// TestDecodeEveryEncoding: every listed encoding is known, keeps ASCII as
// it is, and turns any byte soup into valid UTF-8 without failing.
func TestDecodeEveryEncoding(t *testing.T) {
	soup := make([]byte, 0, 512)
	for i := 0; i < 256; i++ {
		soup = append(soup, byte(i), byte(255-i))
	}
	for _, enc := range Encodings {
		got, err := Decode(enc, []byte("interface Gi0/1\r\n description uplink #1 > core\r\n"))
		if err != nil || got != "interface Gi0/1\r\n description uplink #1 > core\r\n" {
			t.Errorf("%s: ASCII changed: %q, %v", enc, got, err)
		}
		got, err = Decode(enc, soup)
		if err != nil || !utf8.ValidString(got) {
			t.Errorf("%s: arbitrary bytes: valid UTF-8 %v, err %v", enc, utf8.ValidString(got), err)
		}
	}
	if _, err := Decode("ebcdic", []byte("x")); err == nil || !strings.Contains(err.Error(), `unknown encoding "ebcdic"`) {
		t.Errorf("unknown encoding: err = %v", err)
	}
}
