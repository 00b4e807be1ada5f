// Package secret seals device secrets (passwords, enable passwords, private
// keys) with AES-256-GCM under the data directory's key, so that a copied
// database alone reveals nothing.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeyFile is the key's file name inside the data directory.
const KeyFile = "secret.key"

// EnvKey overrides the key file: 32 bytes as 64 hex digits or base64.
const EnvKey = "BACKUPD_SECRET_KEY"

// version is the first byte of every sealed value, so the format can change.
const version byte = 1

// Sealer seals and opens secrets.
type Sealer struct {
	aead   cipher.AEAD
	fp     string
	macKey []byte
}

// New returns a Sealer for a 32-byte key.
func New(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(fingerprintLabel))
	fp := hex.EncodeToString(mac.Sum(nil))
	mac = hmac.New(sha256.New, key)
	mac.Write([]byte(macLabel))
	return &Sealer{aead: aead, fp: fp, macKey: mac.Sum(nil)}, nil
}

// macLabel derives the key of MAC from the data directory's key.
const macLabel = "backupd mac key"

// MAC authenticates data as written by a backupd holding this key (every
// node of one installation shares it): HMAC-SHA256 under a key derived
// from the data directory's key, with purpose bound in, so that a MAC
// made for one use never passes for another. It reveals nothing of the
// key.
func (s *Sealer) MAC(purpose string, data []byte) []byte {
	mac := hmac.New(sha256.New, s.macKey)
	mac.Write([]byte(purpose))
	mac.Write([]byte{0})
	mac.Write(data)
	return mac.Sum(nil)
}

// fingerprintLabel is what the key's fingerprint is the HMAC of.
const fingerprintLabel = "backupd key fingerprint"

// Fingerprint names the key without revealing it: hex of
// HMAC-SHA256(key, "backupd key fingerprint"). Nodes sharing one
// PostgreSQL store compare it to find a node started with another key.
func (s *Sealer) Fingerprint() string { return s.fp }

// LoadOrCreate reads the key from BACKUPD_SECRET_KEY, or from dataDir's key
// file, creating the file (mode 0600, 32 random bytes) when missing.
func LoadOrCreate(dataDir string) (*Sealer, error) {
	if v := strings.TrimSpace(os.Getenv(EnvKey)); v != "" {
		key, err := decodeKey(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvKey, err)
		}
		return New(key)
	}
	path := filepath.Join(dataDir, KeyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			// Another process created it first; use theirs.
			return LoadOrCreate(dataDir)
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		if _, err := f.Write(key); err != nil {
			f.Close()
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("%s must hold exactly 32 bytes, it holds %d", path, len(key))
	}
	return New(key)
}

// Load is LoadOrCreate for a data directory that must already have its
// key: nothing is created.
func Load(dataDir string) (*Sealer, error) {
	if v := strings.TrimSpace(os.Getenv(EnvKey)); v != "" {
		return LoadOrCreate(dataDir)
	}
	path := filepath.Join(dataDir, KeyFile)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return LoadOrCreate(dataDir)
}

func decodeKey(v string) ([]byte, error) {
	if b, err := hex.DecodeString(v); err == nil && len(b) == 32 {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil && len(b) == 32 {
			return b, nil
		}
	}
	return nil, errors.New("want 32 bytes as 64 hex digits or base64")
}

// Purposes bound into the sealed secrets of a credential.
const (
	PurposePassword       = "credential.password"
	PurposeEnablePassword = "credential.enable_password"
	PurposePrivateKey     = "credential.private_key"
	// The git mirror's deploy key and HTTPS token.
	PurposeGitKey   = "git_mirror.ssh_key"
	PurposeGitToken = "git_mirror.https_token"
	// PurposeGitCommit is the MAC purpose of the git mirror's commits.
	PurposeGitCommit = "git_mirror.commit"
	// PurposeInventoryToken is an inventory source's API token (NetBox's,
	// or the one an HTTP JSON source sends in its token header).
	PurposeInventoryToken = "inventory_source.token"
)

// Seal encrypts plaintext. purpose (for example "credential.password") is
// bound into the result so a sealed value cannot be moved to another field.
func (s *Sealer) Seal(plaintext, purpose string) []byte {
	n := s.aead.NonceSize()
	out := make([]byte, 1+n, 1+n+len(plaintext)+s.aead.Overhead())
	out[0] = version
	if _, err := rand.Read(out[1:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return s.aead.Seal(out, out[1:], []byte(plaintext), []byte(purpose))
}

// ErrCorrupt means a sealed value cannot be opened: wrong key, wrong field,
// or damaged bytes.
var ErrCorrupt = errors.New("sealed secret cannot be opened (wrong secret.key?)")

// Open decrypts a value from Seal with the same purpose.
func (s *Sealer) Open(sealed []byte, purpose string) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < 1+n+s.aead.Overhead() || sealed[0] != version {
		return "", ErrCorrupt
	}
	plain, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], []byte(purpose))
	if err != nil {
		return "", ErrCorrupt
	}
	return string(plain), nil
}
