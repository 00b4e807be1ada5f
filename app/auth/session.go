package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"backupd/db"
)

// NewSessionToken returns a random web-session token (32 bytes, URL-safe
// base64) for the cookie, and the id the session is stored under.
func NewSessionToken() (token, id string) {
	token = randomToken()
	return token, SessionID(token)
}

// SessionID is the stored id of a session token: its SHA-256 in hex. A
// copy of the database therefore holds no usable session.
func SessionID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewCSRFSecret returns a random per-session secret that state-changing
// requests must echo.
func NewCSRFSecret() string { return randomToken() }

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// UserPrincipal is a user signed in to the web interface (KeyID 0): every
// permission its roles grant, the credentials they let it use one by
// one, and its device-group scope. Callers build it
// per request from fresh grants, so a role change applies at once.
func UserPrincipal(userID int64, username string, allGroups bool, groupIDs []int64, g db.Grants) *Principal {
	perms := map[string]bool{}
	for _, p := range Permissions {
		if g.All || g.Permissions[p] {
			perms[p] = true
		}
	}
	return &Principal{UserID: userID, Username: username, AllGroups: allGroups, GroupIDs: groupIDs, perms: perms,
		credentials: g.Credentials}
}
