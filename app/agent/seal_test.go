package agent_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"backupd/app/agent"
)

func keyPair(t *testing.T) agent.KeyPair {
	t.Helper()
	k, err := agent.NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var testSecrets = agent.Secrets{Username: "backup", Password: "Sealed-Pa55word", EnablePassword: "Sealed-En4ble",
	PrivateKey: []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nsealed-key-body\n")}

// Secrets sealed for collector A open at A for the attempt they were
// sealed for, and nowhere else: not at collector B, not as another
// attempt, not after a byte changed.
func TestSealedSecretsOpenOnlyForTheirCollectorAndAttempt(t *testing.T) {
	a, b := keyPair(t), keyPair(t)
	sealed, err := agent.SealSecrets(a.Public, "attempt-1", testSecrets)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{testSecrets.Password, testSecrets.EnablePassword, "sealed-key-body", "backup"} {
		if bytes.Contains(sealed, []byte(s)) {
			t.Fatalf("the sealed value shows %q", s)
		}
	}
	got, err := a.OpenSecrets(sealed, "attempt-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Username != testSecrets.Username || got.Password != testSecrets.Password ||
		got.EnablePassword != testSecrets.EnablePassword || !bytes.Equal(got.PrivateKey, testSecrets.PrivateKey) {
		t.Fatal("the opened secrets differ from the sealed ones")
	}
	if _, err := b.OpenSecrets(sealed, "attempt-1"); !errors.Is(err, agent.ErrOpen) {
		t.Fatalf("collector B opened A's secrets: %v", err)
	}
	if _, err := a.OpenSecrets(sealed, "attempt-2"); !errors.Is(err, agent.ErrOpen) {
		t.Fatalf("secrets of one attempt opened as another's: %v", err)
	}
	for i := range sealed {
		damaged := bytes.Clone(sealed)
		damaged[i] ^= 0x01
		if _, err := a.OpenSecrets(damaged, "attempt-1"); !errors.Is(err, agent.ErrOpen) {
			t.Fatalf("a sealed value with byte %d changed opened: %v", i, err)
		}
	}
	for _, short := range [][]byte{nil, {}, sealed[:10], sealed[:len(sealed)-1]} {
		if _, err := a.OpenSecrets(short, "attempt-1"); !errors.Is(err, agent.ErrOpen) {
			t.Fatalf("a truncated value (%d bytes) opened: %v", len(short), err)
		}
	}
	// Two seals of the same secrets differ (a fresh ephemeral key each).
	again, err := agent.SealSecrets(a.Public, "attempt-1", testSecrets)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(again, sealed) {
		t.Fatal("two seals of the same secrets are identical")
	}
}

// Neither the secrets nor the private key reach a log line or a
// formatted string, however they are printed.
func TestSecretsAndKeysStayOutOfLogs(t *testing.T) {
	k := keyPair(t)
	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&buf, nil), slog.NewJSONHandler(&buf, nil)} {
		slog.New(h).Info("job", "secrets", testSecrets, "key", k)
	}
	fmt.Fprintf(&buf, "%v %+v %#v %s %v %+v %s", testSecrets, testSecrets, testSecrets, testSecrets, k, k, k)
	out := buf.String()
	for _, s := range []string{testSecrets.Password, testSecrets.EnablePassword, "sealed-key-body",
		agent.EncodeKey(k.Private), fmt.Sprint(k.Private[:])} {
		if strings.Contains(out, s) {
			t.Fatalf("output shows a secret %q:\n%s", s, out)
		}
	}
	if !strings.Contains(out, agent.EncodeKey(k.Public)) {
		t.Fatal("the public key, which is not secret, should name the key pair")
	}
}

func TestDecodeKey(t *testing.T) {
	k := keyPair(t)
	got, err := agent.DecodeKey(agent.EncodeKey(k.Public))
	if err != nil || got != k.Public {
		t.Fatalf("round trip: %v", err)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("A", 42), strings.Repeat("A", 44), "!!!"} {
		if _, err := agent.DecodeKey(bad); err == nil {
			t.Fatalf("DecodeKey(%q) accepted", bad)
		}
	}
}
