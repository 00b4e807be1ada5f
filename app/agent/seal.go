// Package agent is the remote collector of a zone: `backupd collector`
// running inside a network the server cannot reach. It dials out to the
// server, takes its zone's jobs, collects from the devices with the normal
// collect engine and uploads what it captured; the server does the rest.
// Users call it a collector; the package is named agent so that it does
// not read like app/collect, which talks to the devices, and its server
// side is web/agentapi.
//
// This file is the sealing of a job's device secrets: each collector has
// an X25519 key pair made at enrolment, the server knows only its public
// key, and seals a job's secrets to it (NaCl's anonymous box: an
// ephemeral X25519 key, XSalsa20-Poly1305). Only that collector opens
// them, and only for the attempt they were sealed for; it keeps them in
// memory for that job alone.
package agent

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"golang.org/x/crypto/nacl/box"
)

// KeySize is the size of a collector's public and private keys.
const KeySize = 32

// KeyPair is a collector's sealing key pair.
type KeyPair struct {
	Public  [KeySize]byte
	Private [KeySize]byte
}

// NewKeyPair makes a fresh key pair.
func NewKeyPair() (KeyPair, error) {
	pub, priv, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return KeyPair{}, fmt.Errorf("collector key: %w", err)
	}
	return KeyPair{Public: *pub, Private: *priv}, nil
}

// LogValue keeps the private key out of logs.
func (k KeyPair) LogValue() slog.Value { return slog.StringValue("public:" + EncodeKey(k.Public)) }

// String keeps the private key out of formatted output.
func (k KeyPair) String() string { return "collector key public:" + EncodeKey(k.Public) }

// EncodeKey is a key as it travels and is stored: unpadded URL-safe
// base64.
func EncodeKey(k [KeySize]byte) string { return base64.RawURLEncoding.EncodeToString(k[:]) }

// DecodeKey reads a key written by EncodeKey.
func DecodeKey(s string) ([KeySize]byte, error) {
	var k [KeySize]byte
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) != KeySize {
		return k, errors.New("a collector key is 32 bytes in unpadded URL-safe base64")
	}
	copy(k[:], raw)
	return k, nil
}

// Secrets are a device credential's opened secrets, as a collector needs
// them for one job. They never reach a log or a formatted string.
type Secrets struct {
	Username       string `json:"username"`
	Password       string `json:"password,omitempty"`
	EnablePassword string `json:"enable_password,omitempty"`
	PrivateKey     []byte `json:"private_key,omitempty"`
}

// LogValue keeps the secrets out of logs.
func (Secrets) LogValue() slog.Value { return slog.StringValue("[secrets]") }

// String keeps the secrets out of formatted output.
func (Secrets) String() string { return "[secrets]" }

// GoString keeps the secrets out of %#v.
func (Secrets) GoString() string { return "[secrets]" }

// sealedSecrets binds the secrets to the attempt they are for.
type sealedSecrets struct {
	Attempt string `json:"attempt"`
	Secrets
}

// ErrOpen is a sealed value this collector cannot open: sealed for
// another collector, for another attempt, or damaged.
var ErrOpen = errors.New("the job's credential cannot be opened by this collector (sealed for another collector or attempt, or damaged)")

// SealSecrets seals s to the collector public key for one attempt (the
// backup ID of the job's claim): only the holder of the private key can
// open it, and only as that attempt's.
func SealSecrets(to [KeySize]byte, attempt string, s Secrets) ([]byte, error) {
	msg, err := json.Marshal(sealedSecrets{Attempt: attempt, Secrets: s})
	if err != nil {
		return nil, fmt.Errorf("seal secrets: %w", err)
	}
	out, err := box.SealAnonymous(nil, msg, &to, rand.Reader)
	clear(msg)
	if err != nil {
		return nil, fmt.Errorf("seal secrets: %w", err)
	}
	return out, nil
}

// OpenSecrets opens secrets sealed to k for attempt.
func (k KeyPair) OpenSecrets(sealed []byte, attempt string) (Secrets, error) {
	msg, ok := box.OpenAnonymous(nil, sealed, &k.Public, &k.Private)
	if !ok {
		return Secrets{}, ErrOpen
	}
	defer clear(msg)
	var v sealedSecrets
	if err := json.Unmarshal(msg, &v); err != nil || v.Attempt != attempt {
		return Secrets{}, ErrOpen
	}
	return v.Secrets, nil
}
