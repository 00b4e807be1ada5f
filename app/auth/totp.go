package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"
	"github.com/skip2/go-qrcode"
)

// A local account's second factor: RFC 6238 time-based one-time codes
// with what every authenticator app assumes (HMAC-SHA-1, six digits, a
// new code every 30 seconds), and one-time recovery codes for the day
// the phone is lost. Directory and provider accounts never get it: their
// own source asks for its second factor.

// TOTP parameters and the rules of its use.
const (
	// TOTPIssuer names backupd in the authenticator app.
	TOTPIssuer = "backupd"
	// TOTPPeriod is how long one code lasts.
	TOTPPeriod = 30 * time.Second
	// TOTPSkew is how many steps before and after the current one are
	// also accepted: a phone's clock a little off, a code typed as it
	// turned over.
	TOTPSkew = 1
	// TOTPSecretPurpose is what the sealed secret is bound to
	// (secret.Sealer).
	TOTPSecretPurpose = "totp secret"
	// TOTPMaxFailures wrong codes in a row lock the second factor for
	// TOTPLockout: ten guesses of a million every five minutes, and the
	// real user waits a while, never for ever.
	TOTPMaxFailures = 10
	TOTPLockout     = 5 * time.Minute
	// RecoveryCodeCount codes are made at a time.
	RecoveryCodeCount = 10
)

// totpSecretBytes is the secret's size: 160 bits, what RFC 4226
// recommends for HMAC-SHA-1.
const totpSecretBytes = 20

var totpOpts = hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// TOTPKey is a new second factor being set up: the secret (base32, as
// apps take it typed in) and the otpauth:// URL the QR code carries.
type TOTPKey struct {
	Secret string
	URL    string
}

// NewTOTPKey makes a random secret for account (the username) and its
// otpauth:// URL.
func NewTOTPKey(account string) (TOTPKey, error) {
	k, err := totp.Generate(totp.GenerateOpts{
		Issuer: TOTPIssuer, AccountName: account, Period: uint(TOTPPeriod / time.Second),
		SecretSize: totpSecretBytes, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1,
	})
	if err != nil {
		return TOTPKey{}, fmt.Errorf("new totp secret: %w", err)
	}
	return TOTPKey{Secret: k.Secret(), URL: k.URL()}, nil
}

// TOTPKeyFor is the otpauth:// URL of an existing secret (an enrolment
// shown again before it was confirmed).
func TOTPKeyFor(account, secret string) (TOTPKey, error) {
	raw, err := decodeSecret(secret)
	if err != nil {
		return TOTPKey{}, err
	}
	k, err := totp.Generate(totp.GenerateOpts{
		Issuer: TOTPIssuer, AccountName: account, Period: uint(TOTPPeriod / time.Second),
		Secret: raw, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1,
	})
	if err != nil {
		return TOTPKey{}, fmt.Errorf("totp url: %w", err)
	}
	return TOTPKey{Secret: k.Secret(), URL: k.URL()}, nil
}

// QRCodeDataURL is url as a QR code, a PNG in a data: URL for an <img>.
func QRCodeDataURL(url string) (string, error) {
	png, err := qrcode.Encode(url, qrcode.Medium, 240)
	if err != nil {
		return "", fmt.Errorf("qr code: %w", err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(png), nil
}

// TOTPStep is the time step t falls in.
func TOTPStep(t time.Time) int64 { return t.Unix() / int64(TOTPPeriod/time.Second) }

// TOTPResult is what CheckTOTP made of a code.
type TOTPResult int

const (
	// TOTPWrong: the code is no code of the window.
	TOTPWrong TOTPResult = iota
	// TOTPReplayed: the code is right but for a step already used.
	TOTPReplayed
	// TOTPOK: the code is right for a step after the last one used.
	TOTPOK
)

// ErrBadTOTPSecret is a stored secret that is no base32.
var ErrBadTOTPSecret = errors.New("the stored second-factor secret is unreadable")

// CheckTOTP checks code against secret at now: the current step and
// TOTPSkew on either side. A code is good once: a step at or before
// lastStep (the last one accepted) is TOTPReplayed. step is the step the
// code matched; the caller stores it (with a compare-and-set) as the new
// last step.
func CheckTOTP(secret, code string, now time.Time, lastStep int64) (step int64, res TOTPResult, err error) {
	code = NormalizeTOTPCode(code)
	if !LooksLikeTOTPCode(code) {
		return 0, TOTPWrong, nil
	}
	if _, err := decodeSecret(secret); err != nil {
		return 0, TOTPWrong, err
	}
	cur := TOTPStep(now)
	res = TOTPWrong
	// The latest step first: when a code matches two steps (one in a
	// million), the one not yet used wins.
	for s := cur + TOTPSkew; s >= cur-TOTPSkew; s-- {
		if s < 0 {
			continue
		}
		ok, err := hotp.ValidateCustom(code, uint64(s), secret, totpOpts)
		if err != nil {
			return 0, TOTPWrong, fmt.Errorf("check totp code: %w", err)
		}
		switch {
		case ok && s > lastStep:
			return s, TOTPOK, nil
		case ok:
			step, res = s, TOTPReplayed
		}
	}
	return step, res, nil
}

// TOTPCode is the code of secret at t, for tests and the CLI's checks.
func TOTPCode(secret string, t time.Time) (string, error) {
	return hotp.GenerateCodeCustom(secret, uint64(TOTPStep(t)), totpOpts)
}

func decodeSecret(secret string) ([]byte, error) {
	s := strings.ToUpper(strings.TrimRight(strings.ReplaceAll(secret, " ", ""), "="))
	raw, err := b32.DecodeString(s)
	if err != nil || len(raw) == 0 {
		return nil, ErrBadTOTPSecret
	}
	return raw, nil
}

// NormalizeTOTPCode drops the spaces and dashes people type or paste
// into a code ("123 456").
func NormalizeTOTPCode(code string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '\t' {
			return -1
		}
		return r
	}, strings.TrimSpace(code))
}

// LooksLikeTOTPCode reports whether code (normalised) is six digits.
func LooksLikeTOTPCode(code string) bool {
	if len(code) != otp.DigitsSix.Length() {
		return false
	}
	for _, c := range code {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Recovery codes are twelve characters of Crockford's base32 (no i, l,
// o or u: nothing to misread), 60 random bits each, shown as
// xxxx-xxxx-xxxx. They are stored as their SHA-256: random codes need no
// slow hash.
const (
	recoveryAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	recoveryChars    = 12
	recoveryGroup    = 4
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewRecoveryCodes makes RecoveryCodeCount recovery codes, as shown to
// the user, and their hashes, as stored.
func NewRecoveryCodes() (codes, hashes []string) {
	for len(codes) < RecoveryCodeCount {
		b := make([]byte, recoveryChars)
		if _, err := rand.Read(b); err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		var sb strings.Builder
		for i, v := range b {
			if i > 0 && i%recoveryGroup == 0 {
				sb.WriteByte('-')
			}
			sb.WriteByte(recoveryAlphabet[v&31])
		}
		code := sb.String()
		h := HashRecoveryCode(code)
		dup := false
		for _, o := range hashes {
			dup = dup || o == h
		}
		if !dup {
			codes, hashes = append(codes, code), append(hashes, h)
		}
	}
	return codes, hashes
}

// NormalizeRecoveryCode is a recovery code as typed, made comparable:
// lower case, no spaces or dashes, and the letters people confuse with
// digits (o, i, l) read as those digits.
func NormalizeRecoveryCode(code string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(code) {
		switch r {
		case ' ', '-', '\t', '\n', '\r':
			continue
		case 'o':
			r = '0'
		case 'i', 'l':
			r = '1'
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// LooksLikeRecoveryCode reports whether code, normalised, has the shape
// of a recovery code.
func LooksLikeRecoveryCode(code string) bool {
	n := NormalizeRecoveryCode(code)
	if len(n) != recoveryChars {
		return false
	}
	for i := 0; i < len(n); i++ {
		if strings.IndexByte(recoveryAlphabet, n[i]) < 0 {
			return false
		}
	}
	return true
}

// HashRecoveryCode is the stored form of a recovery code, typed in any
// of the ways NormalizeRecoveryCode accepts.
func HashRecoveryCode(code string) string {
	sum := sha256.Sum256([]byte("backupd recovery code\x00" + NormalizeRecoveryCode(code)))
	return hex.EncodeToString(sum[:])
}

// FormatTOTPSecret groups a base32 secret by four for typing it in.
func FormatTOTPSecret(secret string) string {
	var b bytes.Buffer
	for i, r := range secret {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}
