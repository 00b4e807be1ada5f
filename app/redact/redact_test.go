package redact_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"backupd/app/redact"
	"backupd/app/secret"
)

func keyring(t *testing.T, b byte) *redact.Keyring {
	t.Helper()
	s, err := secret.New(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return redact.NewKeyring(s)
}

var marker = regexp.MustCompile(`<secret:[0-9a-f]{6}>`)

const config = "hostname r1\n!\nenable secret 9 $9$abcdefghij$ABCDEFGHIJKLMNOP\nsnmp-server community Publ1cRO RO\n!\nend\n"

// A marker stands for its secret on one device: the same secret gives
// the same tag there, another secret (a rotation) another tag, and the
// same secret on another device, or under another data directory key,
// another tag.
func TestMarkersAreKeyedPerDevice(t *testing.T) {
	k := keyring(t, 1)
	a := k.Device(1, "cisco_ios").Text(config)
	if a != k.Device(1, "cisco_ios").Text(config) {
		t.Fatal("masking the same text twice differs")
	}
	if strings.Contains(a, "Publ1cRO") || strings.Contains(a, "$9$") {
		t.Fatalf("a secret survives:\n%s", a)
	}
	marks := marker.FindAllString(a, -1)
	if len(marks) != 2 || marks[0] == marks[1] {
		t.Fatalf("markers %v, want two different ones:\n%s", marks, a)
	}
	if got, want := strings.Count(a, "\n"), strings.Count(config, "\n"); got != want {
		t.Errorf("masked text has %d lines, want %d", got, want)
	}
	rotated := strings.Replace(config, "Publ1cRO", "Publ1cR0", 1)
	b := k.Device(1, "cisco_ios").Text(rotated)
	if marker.FindAllString(b, -1)[1] == marks[1] {
		t.Error("a rotated community keeps its tag")
	}
	if marker.FindAllString(b, -1)[0] != marks[0] {
		t.Error("an unchanged secret changed its tag")
	}
	if other := k.Device(2, "cisco_ios").Text(config); marker.FindAllString(other, -1)[1] == marks[1] {
		t.Error("two devices with the same community get the same tag")
	}
	if other := keyring(t, 2).Device(1, "cisco_ios").Text(config); marker.FindAllString(other, -1)[1] == marks[1] {
		t.Error("another data directory key gives the same tag")
	}
}
