// Package redact masks the secrets inside configurations wherever a
// configuration leaves the store: the git mirror, notifications, the web
// pages, the CLI and, when the administrator asks, the public API. The
// store itself keeps every configuration whole.
//
// A secret is replaced by a marker, <secret:3f9a1c>, whose tag is a keyed
// hash of the secret (HMAC under a key derived from the data directory's
// key and the device): a rotated password still shows as a changed line,
// yet neither value can be read back, and equal secrets on two devices
// give different tags.
package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"

	"backupd/app/collect/driver"
	"backupd/app/secret"
)

// Marker is how every masked secret starts; a tag of TagLen hex digits
// and ">" follow.
const Marker = "<secret:"

// TagLen is the number of hex digits of a marker's tag.
const TagLen = 6

// tagPurpose binds the per-device keys to this use of the data
// directory's key.
const tagPurpose = "config secret tag"

// Keyring makes the maskers of an installation: every node sharing a
// store shares the data directory's key, so they write equal markers.
type Keyring struct{ sealer *secret.Sealer }

// NewKeyring returns a keyring under the data directory's key.
func NewKeyring(sealer *secret.Sealer) *Keyring { return &Keyring{sealer: sealer} }

// Masker masks the configurations of one device. It is not safe for
// concurrent use; make one per goroutine.
type Masker struct {
	secrets *driver.Secrets
	mac     hash.Hash
	sum     []byte
	tag     [TagLen]byte
}

// Device returns the masker of a device of platform.
func (k *Keyring) Device(deviceID int64, platform string) *Masker {
	return k.DeviceWith(deviceID, driver.SecretsOf(platform))
}

// DeviceWith returns the masker of a device with the secret rules of a
// platform outside the registry (one being tried: driver.Prepare).
func (k *Keyring) DeviceWith(deviceID int64, secrets *driver.Secrets) *Masker {
	key := k.sealer.MAC(tagPurpose, []byte(strconv.FormatInt(deviceID, 10)))
	return &Masker{secrets: secrets, mac: hmac.New(sha256.New, key)}
}

// Mark is the marker that stands for secret.
func (m *Masker) Mark(secret string) string {
	m.mac.Reset()
	m.mac.Write([]byte(secret))
	m.sum = m.mac.Sum(m.sum[:0])
	hex.Encode(m.tag[:], m.sum[:TagLen/2])
	return Marker + string(m.tag[:]) + ">"
}

// Text masks every secret of a configuration. Lines stay lines: the
// masked text has as many, in the same order, so a line number means the
// same line in both.
func (m *Masker) Text(text string) string { return m.secrets.Mask(text, m.Mark, nil) }
