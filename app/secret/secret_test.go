package secret_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backupd/app/secret"
)

func newKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func newSealer(t *testing.T, key []byte) *secret.Sealer {
	t.Helper()
	s, err := secret.New(key)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func TestSealOpenRoundTrip(t *testing.T) {
	s := newSealer(t, newKey(t))
	for _, plain := range []string{"", "x", "hunter2-Secret!", "пароль с пробелами", strings.Repeat("A", 10000)} {
		sealed := s.Seal(plain, "credential.password")
		got, err := s.Open(sealed, "credential.password")
		if err != nil {
			t.Fatalf("Open(Seal(%.20q)): %v", plain, err)
		}
		if got != plain {
			t.Fatalf("round trip: got %.20q, want %.20q", got, plain)
		}
	}
}

func TestSealIsRandomised(t *testing.T) {
	s := newSealer(t, newKey(t))
	a := s.Seal("same", "p")
	b := s.Seal("same", "p")
	if bytes.Equal(a, b) {
		t.Fatal("sealing the same plaintext twice gave identical bytes; the nonce is not random")
	}
}

func TestSealedBytesNeverContainPlaintext(t *testing.T) {
	s := newSealer(t, newKey(t))
	for _, plain := range []string{"correct horse battery staple", "enable-secret-123", strings.Repeat("z", 64)} {
		sealed := s.Seal(plain, "credential.password")
		if bytes.Contains(sealed, []byte(plain)) {
			t.Fatalf("sealed bytes contain the plaintext %q", plain)
		}
		// Not even a recognisable chunk of it.
		if len(plain) >= 8 && bytes.Contains(sealed, []byte(plain[:8])) {
			t.Fatalf("sealed bytes contain the start of the plaintext %q", plain[:8])
		}
	}
}

func TestOpenWithOtherPurposeFails(t *testing.T) {
	s := newSealer(t, newKey(t))
	sealed := s.Seal("s3cret", "credential.password")
	if _, err := s.Open(sealed, "credential.enable_password"); !errors.Is(err, secret.ErrCorrupt) {
		t.Fatalf("Open with another purpose: err = %v, want ErrCorrupt", err)
	}
	if _, err := s.Open(sealed, ""); !errors.Is(err, secret.ErrCorrupt) {
		t.Fatalf("Open with empty purpose: err = %v, want ErrCorrupt", err)
	}
}

func TestOpenTamperedFails(t *testing.T) {
	s := newSealer(t, newKey(t))
	sealed := s.Seal("s3cret-value", "p")
	for i := range sealed {
		bad := bytes.Clone(sealed)
		bad[i] ^= 0x01
		if got, err := s.Open(bad, "p"); !errors.Is(err, secret.ErrCorrupt) {
			t.Fatalf("flipping byte %d: Open = %q, %v; want ErrCorrupt", i, got, err)
		}
	}
	for _, bad := range [][]byte{nil, {}, sealed[:1], sealed[:len(sealed)-1], append(bytes.Clone(sealed), 0)} {
		if _, err := s.Open(bad, "p"); !errors.Is(err, secret.ErrCorrupt) {
			t.Fatalf("Open(%d bytes): err = %v, want ErrCorrupt", len(bad), err)
		}
	}
}

func TestOpenWithWrongKeyFails(t *testing.T) {
	a := newSealer(t, newKey(t))
	b := newSealer(t, newKey(t))
	sealed := a.Seal("s3cret", "p")
	if _, err := b.Open(sealed, "p"); !errors.Is(err, secret.ErrCorrupt) {
		t.Fatalf("Open with another key: err = %v, want ErrCorrupt", err)
	}
}

func TestNewRejectsWrongKeyLength(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		if _, err := secret.New(make([]byte, n)); err == nil {
			t.Errorf("New with a %d-byte key succeeded; want an error", n)
		}
	}
}

func TestLoadOrCreateCreatesKeyFileOnceAndReusesIt(t *testing.T) {
	t.Setenv(secret.EnvKey, "")
	dir := filepath.Join(t.TempDir(), "data") // not there yet
	s1, err := secret.LoadOrCreate(dir)
	if err != nil {
		t.Fatalf("LoadOrCreate: %v", err)
	}
	path := filepath.Join(dir, secret.KeyFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("key file not created: %v", err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("key file mode = %o, want 600", mode)
	}
	key1, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(key1) != 32 {
		t.Fatalf("key file holds %d bytes, want 32", len(key1))
	}
	if bytes.Equal(key1, make([]byte, 32)) {
		t.Fatal("key file holds only zero bytes")
	}

	sealed := s1.Seal("kept across restarts", "p")
	s2, err := secret.LoadOrCreate(dir)
	if err != nil {
		t.Fatalf("second LoadOrCreate: %v", err)
	}
	key2, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(key1, key2) {
		t.Fatal("second LoadOrCreate replaced the key file")
	}
	if got, err := s2.Open(sealed, "p"); err != nil || got != "kept across restarts" {
		t.Fatalf("reloaded sealer: Open = %q, %v", got, err)
	}
	// The file is the key: a sealer made from its bytes opens the value.
	if got, err := newSealer(t, key1).Open(sealed, "p"); err != nil || got != "kept across restarts" {
		t.Fatalf("sealer from key file bytes: Open = %q, %v", got, err)
	}
}

func TestLoadOrCreateRejectsDamagedKeyFile(t *testing.T) {
	t.Setenv(secret.EnvKey, "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, secret.KeyFile), []byte("too short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := secret.LoadOrCreate(dir); err == nil || !strings.Contains(err.Error(), "32 bytes") {
		t.Fatalf("LoadOrCreate with a 9-byte key file: err = %v, want an error about 32 bytes", err)
	}
}

func TestEnvKeyOverridesKeyFile(t *testing.T) {
	key := newKey(t)
	reference := newSealer(t, key)
	encodings := map[string]string{
		"hex":           hex.EncodeToString(key),
		"hex upper":     strings.ToUpper(hex.EncodeToString(key)),
		"base64":        base64.StdEncoding.EncodeToString(key),
		"base64 raw":    base64.RawStdEncoding.EncodeToString(key),
		"base64 url":    base64.URLEncoding.EncodeToString(key),
		"padded spaces": "  " + hex.EncodeToString(key) + "\n",
	}
	for name, v := range encodings {
		t.Run(name, func(t *testing.T) {
			t.Setenv(secret.EnvKey, v)
			dir := t.TempDir()
			// A key file that must be ignored.
			if err := os.WriteFile(filepath.Join(dir, secret.KeyFile), newKey(t), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := secret.LoadOrCreate(dir)
			if err != nil {
				t.Fatalf("LoadOrCreate: %v", err)
			}
			if got, err := s.Open(reference.Seal("from env", "p"), "p"); err != nil || got != "from env" {
				t.Fatalf("env sealer cannot open a value sealed with the env key: %q, %v", got, err)
			}
			if got, err := reference.Open(s.Seal("to env", "p"), "p"); err != nil || got != "to env" {
				t.Fatalf("value sealed by env sealer cannot be opened with the env key: %q, %v", got, err)
			}
		})
	}
}

func TestEnvKeyDoesNotCreateKeyFile(t *testing.T) {
	t.Setenv(secret.EnvKey, hex.EncodeToString(newKey(t)))
	dir := t.TempDir()
	if _, err := secret.LoadOrCreate(dir); err != nil {
		t.Fatalf("LoadOrCreate: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, secret.KeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("key file exists although %s is set: %v", secret.EnvKey, err)
	}
}

func TestBadEnvKeyErrors(t *testing.T) {
	for name, v := range map[string]string{
		"not hex or base64": "this is not a key!",
		"31 bytes hex":      hex.EncodeToString(make([]byte, 31)),
		"33 bytes hex":      hex.EncodeToString(make([]byte, 33)),
		"16 bytes base64":   base64.StdEncoding.EncodeToString(make([]byte, 16)),
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(secret.EnvKey, v)
			dir := t.TempDir()
			_, err := secret.LoadOrCreate(dir)
			if err == nil {
				t.Fatal("LoadOrCreate succeeded with a bad env key")
			}
			if !strings.Contains(err.Error(), secret.EnvKey) {
				t.Errorf("error %q does not name %s", err, secret.EnvKey)
			}
			if _, err := os.Stat(filepath.Join(dir, secret.KeyFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a bad env key fell back to creating a key file")
			}
		})
	}
}

func TestFingerprintNamesTheKeyWithoutShowingIt(t *testing.T) {
	k1 := bytes.Repeat([]byte{1}, 32)
	k2 := bytes.Repeat([]byte{2}, 32)
	a, _ := secret.New(k1)
	b, _ := secret.New(k1)
	c, _ := secret.New(k2)
	if a.Fingerprint() != b.Fingerprint() || a.Fingerprint() == c.Fingerprint() {
		t.Fatalf("fingerprints: same key %s/%s, other key %s", a.Fingerprint(), b.Fingerprint(), c.Fingerprint())
	}
	mac := hmac.New(sha256.New, k1)
	mac.Write([]byte("backupd key fingerprint"))
	if want := hex.EncodeToString(mac.Sum(nil)); a.Fingerprint() != want {
		t.Errorf("fingerprint %s, want HMAC-SHA256(key, label) %s", a.Fingerprint(), want)
	}
	if strings.Contains(a.Fingerprint(), hex.EncodeToString(k1)) {
		t.Error("the fingerprint shows the key")
	}
}

// A MAC is the same for every holder of the key, differs with the key,
// the purpose or the data, and is neither the key nor its fingerprint.
func TestMACDependsOnKeyPurposeAndData(t *testing.T) {
	k1 := bytes.Repeat([]byte{1}, 32)
	a, _ := secret.New(k1)
	b, _ := secret.New(k1)
	c, _ := secret.New(bytes.Repeat([]byte{2}, 32))
	m := a.MAC("p", []byte("data"))
	if !hmac.Equal(m, b.MAC("p", []byte("data"))) {
		t.Fatal("two sealers with one key give different MACs")
	}
	for name, other := range map[string][]byte{
		"other key":     c.MAC("p", []byte("data")),
		"other purpose": a.MAC("q", []byte("data")),
		"other data":    a.MAC("p", []byte("datA")),
		"shifted":       a.MAC("pd", []byte("ata")),
	} {
		if hmac.Equal(m, other) {
			t.Errorf("%s: same MAC", name)
		}
	}
	if len(m) != sha256.Size || bytes.Contains(m, k1[:8]) || hex.EncodeToString(m) == a.Fingerprint() {
		t.Fatalf("MAC %x", m)
	}
}
