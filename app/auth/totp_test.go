package auth_test

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
)

// rfcSecret is RFC 6238's SHA-1 test key ("12345678901234567890") in
// base32.
const rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

// The codes are RFC 6238's (appendix B, SHA-1) cut to six digits, as
// authenticator apps show them: the parameters are the apps'.
func TestTOTPKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		unix int64
		code string
	}{
		{59, "287082"}, {1111111109, "081804"}, {1111111111, "050471"},
		{1234567890, "005924"}, {2000000000, "279037"}, {20000000000, "353130"},
	} {
		at := time.Unix(c.unix, 0)
		got, err := auth.TOTPCode(rfcSecret, at)
		if err != nil || got != c.code {
			t.Errorf("code at %d = %q, %v; want %s", c.unix, got, err, c.code)
		}
		step, res, err := auth.CheckTOTP(rfcSecret, c.code, at, 0)
		if err != nil || res != auth.TOTPOK || step != c.unix/30 {
			t.Errorf("check at %d: step %d, result %v, %v; want step %d accepted", c.unix, step, res, err, c.unix/30)
		}
	}
}

// A code is accepted from the step before its own to the step after,
// and at no other time; each second of the window's edges is tried.
func TestTOTPWindowAtStepBoundaries(t *testing.T) {
	key, err := auth.NewTOTPKey("alice")
	if err != nil {
		t.Fatal(err)
	}
	const step = 60_000_000 // a step starting at a whole unix second: 1_800_000_000
	start := time.Unix(step*30, 0)
	code, err := auth.TOTPCode(key.Secret, start)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := auth.TOTPCode(key.Secret, start.Add(29*time.Second+999*time.Millisecond)); again != code {
		t.Fatalf("the code changed within its step: %s, %s", code, again)
	}
	for _, c := range []struct {
		offset time.Duration
		ok     bool
	}{
		{-30*time.Second - time.Millisecond, false}, // the last moment two steps before
		{-30 * time.Second, true},                   // the first moment of the step before
		{-time.Second, true},
		{0, true},
		{29 * time.Second, true},
		{30 * time.Second, true}, // the step after
		{59*time.Second + 999*time.Millisecond, true},
		{60 * time.Second, false}, // two steps after
		{-10 * time.Minute, false},
		{10 * time.Minute, false},
	} {
		got, res, err := auth.CheckTOTP(key.Secret, code, start.Add(c.offset), 0)
		if err != nil {
			t.Fatal(err)
		}
		if (res == auth.TOTPOK) != c.ok {
			t.Errorf("code of step %d at %+v: result %v, want accepted=%t", step, c.offset, res, c.ok)
		}
		if c.ok && got != step {
			t.Errorf("code at %+v matched step %d, want %d", c.offset, got, step)
		}
	}
}

// A code is good once: its step at or before the last accepted one is a
// replay, told apart from a wrong code; a later code still works.
func TestTOTPReplay(t *testing.T) {
	key, err := auth.NewTOTPKey("alice")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_015, 0)
	code, _ := auth.TOTPCode(key.Secret, now)
	step, res, err := auth.CheckTOTP(key.Secret, code, now, 0)
	if err != nil || res != auth.TOTPOK {
		t.Fatalf("first use: %v, %v", res, err)
	}
	if _, res, _ := auth.CheckTOTP(key.Secret, code, now, step); res != auth.TOTPReplayed {
		t.Errorf("the same code again: %v, want replayed", res)
	}
	if _, res, _ := auth.CheckTOTP(key.Secret, code, now.Add(20*time.Second), step); res != auth.TOTPReplayed {
		t.Errorf("the same code in the next step: %v, want replayed", res)
	}
	// The code of the step before the last accepted one, within the
	// window: also spent.
	prev, _ := auth.TOTPCode(key.Secret, now.Add(-30*time.Second))
	if _, res, _ := auth.CheckTOTP(key.Secret, prev, now, step); res != auth.TOTPReplayed {
		t.Errorf("an older code of the window: %v, want replayed", res)
	}
	next, _ := auth.TOTPCode(key.Secret, now.Add(30*time.Second))
	if got, res, _ := auth.CheckTOTP(key.Secret, next, now.Add(30*time.Second), step); res != auth.TOTPOK || got != step+1 {
		t.Errorf("the next step's code: step %d, %v", got, res)
	}
	// A code of the window's next step, used early, spends that step.
	if got, res, _ := auth.CheckTOTP(key.Secret, next, now, step); res != auth.TOTPOK || got != step+1 {
		t.Errorf("next step's code a step early: step %d, %v", got, res)
	}
	if _, res, _ := auth.CheckTOTP(key.Secret, code, now, step+1); res != auth.TOTPReplayed {
		t.Errorf("the current code after the next step's was used: %v, want replayed", res)
	}
}

func TestTOTPCodeInput(t *testing.T) {
	now := time.Unix(59, 0)
	for in, want := range map[string]auth.TOTPResult{
		"287082":    auth.TOTPOK,
		" 287 082 ": auth.TOTPOK,
		"287-082":   auth.TOTPOK,
		"287083":    auth.TOTPWrong,
		"28708":     auth.TOTPWrong,
		"2870822":   auth.TOTPWrong,
		"28708a":    auth.TOTPWrong,
		"":          auth.TOTPWrong,
		"２８７０８２":    auth.TOTPWrong, // full-width digits are no code
	} {
		if _, res, err := auth.CheckTOTP(rfcSecret, in, now, 0); res != want || err != nil {
			t.Errorf("CheckTOTP(%q) = %v, %v; want %v", in, res, err, want)
		}
	}
	if _, _, err := auth.CheckTOTP("not base32!", "123456", now, 0); err == nil {
		t.Error("an unreadable secret checked without error")
	}
}

func TestTOTPKeyAndQRCode(t *testing.T) {
	key, err := auth.NewTOTPKey("alice")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[A-Z2-7]{32}$`).MatchString(key.Secret) {
		t.Errorf("secret %q: want 160 bits in base32", key.Secret)
	}
	u, err := url.Parse(key.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Scheme != "otpauth" || u.Host != "totp" || u.Path != "/backupd:alice" || q.Get("secret") != key.Secret ||
		q.Get("issuer") != "backupd" || q.Get("algorithm") != "SHA1" || q.Get("digits") != "6" || q.Get("period") != "30" {
		t.Errorf("otpauth URL %s", key.URL)
	}
	other, _ := auth.NewTOTPKey("alice")
	if other.Secret == key.Secret {
		t.Error("two keys share a secret")
	}
	again, err := auth.TOTPKeyFor("alice", key.Secret)
	if err != nil || again != key {
		t.Errorf("TOTPKeyFor = %+v, %v; want %+v", again, err, key)
	}
	img, err := auth.QRCodeDataURL(key.URL)
	if err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(img, "data:image/png;base64,"))
	if err != nil || !strings.HasPrefix(img, "data:image/png;base64,") || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("QR code is no PNG data URL: %.60s… (%v)", img, err)
	}
}

var recoveryShape = regexp.MustCompile(`^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$`)

func TestRecoveryCodes(t *testing.T) {
	codes, hashes := auth.NewRecoveryCodes()
	if len(codes) != 10 || len(hashes) != 10 {
		t.Fatalf("%d codes, %d hashes; want 10", len(codes), len(hashes))
	}
	seen := map[string]bool{}
	for i, c := range codes {
		if !recoveryShape.MatchString(c) {
			t.Errorf("code %q is not xxxx-xxxx-xxxx of the clear alphabet", c)
		}
		if seen[c] || seen[hashes[i]] {
			t.Errorf("code %q repeats", c)
		}
		seen[c], seen[hashes[i]] = true, true
		if hashes[i] != auth.HashRecoveryCode(c) || strings.Contains(hashes[i], strings.ReplaceAll(c, "-", "")) {
			t.Errorf("hash of %q is %q", c, hashes[i])
		}
		if !auth.LooksLikeRecoveryCode(c) {
			t.Errorf("code %q does not look like a recovery code", c)
		}
	}
	// Typed in any case, with spaces, without dashes, or with the
	// letters people confuse with 0 and 1: the same code.
	c := "ab0d-1fgh-jk1m"
	for _, typed := range []string{"AB0D-1FGH-JK1M", " ab0d 1fgh jk1m ", "ab0d1fghjk1m", "abOd-ifgh-jklm", "ABOD-IFGH-JKLM\n"} {
		if auth.HashRecoveryCode(typed) != auth.HashRecoveryCode(c) {
			t.Errorf("%q is not taken as %q", typed, c)
		}
		if !auth.LooksLikeRecoveryCode(typed) {
			t.Errorf("%q does not look like a recovery code", typed)
		}
	}
	for _, other := range []string{"ab0d-1fgh-jk1n", "ab0d-1fgh-jk1", "ab0d-1fgh-jk1mm", "123456", "ab0d-1fgh-jk1u"} {
		if auth.HashRecoveryCode(other) == auth.HashRecoveryCode(c) {
			t.Errorf("%q is taken as %q", other, c)
		}
	}
	for _, bad := range []string{"123456", "ab0d-1fgh-jk1", "ab0d-1fgh-jk1u", "ab0d-1fgh-jk1m7"} {
		if auth.LooksLikeRecoveryCode(bad) {
			t.Errorf("%q looks like a recovery code", bad)
		}
	}
	// Every character of the 32-letter alphabet turns up (5 bits each,
	// 60 bits a code), and nothing else.
	symbols := map[rune]bool{}
	for i := 0; i < 30; i++ {
		cs, _ := auth.NewRecoveryCodes()
		for _, c := range cs {
			for _, r := range strings.ReplaceAll(c, "-", "") {
				symbols[r] = true
			}
		}
	}
	if len(symbols) != 32 {
		t.Errorf("the codes use %d symbols, want 32", len(symbols))
	}
}
