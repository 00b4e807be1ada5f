package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

// A capture full of the characters HTML escaping would blow up six-fold
// travels as it is, and reads back the same.
func TestEncodeBodyKeepsConfigurationCharacters(t *testing.T) {
	text := strings.Repeat("ip prefix-list P seq 5 permit 10.0.0.0/8 le 24 & <x>\n", 1000)
	body, err := encodeBody(map[string]string{"text": text})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(text) + 1000 + 20; len(body) > want {
		t.Fatalf("body is %d bytes for %d bytes of text (want at most %d): escaped", len(body), len(text), want)
	}
	var back map[string]string
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	if back["text"] != text {
		t.Fatal("the text did not read back the same")
	}
}
