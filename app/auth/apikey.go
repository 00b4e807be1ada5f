package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// KeyScheme starts every API key so that secret scanners and people can
// tell what it is: bkd_<prefix>_<secret>.
const KeyScheme = "bkd_"

// NewAPIKey returns a fresh key, its visible prefix (stored, used to find the
// row) and the SHA-256 of the whole key (stored, compared). The secret part
// carries 256 bits of entropy, so a fast hash is the right one here.
func NewAPIKey() (key, prefix string, hash []byte) {
	p := make([]byte, 5)
	s := make([]byte, 32)
	if _, err := rand.Read(p); err != nil {
		panic(err)
	}
	if _, err := rand.Read(s); err != nil {
		panic(err)
	}
	prefix = hex.EncodeToString(p)
	key = KeyScheme + prefix + "_" + base64.RawURLEncoding.EncodeToString(s)
	return key, prefix, HashAPIKey(key)
}

// HashAPIKey is the stored form of a key.
func HashAPIKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// APIKeyPrefix extracts the prefix from a presented key; ok is false when
// the key is not shaped like one of ours.
func APIKeyPrefix(key string) (prefix string, ok bool) {
	rest, found := strings.CutPrefix(key, KeyScheme)
	if !found || len(key) > 128 {
		return "", false
	}
	prefix, secret, found := strings.Cut(rest, "_")
	if !found || len(prefix) != 10 || len(secret) < 40 {
		return "", false
	}
	return prefix, true
}
