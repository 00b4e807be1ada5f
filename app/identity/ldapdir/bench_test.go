package ldapdir_test

import (
	"context"
	"testing"

	"backupd/app/auth"
	"backupd/app/identity/ldapdir"
	"backupd/internal/testldap"
)

// What a sign-in costs backupd, measured against a local slapd on
// loopback: a directory sign-in over LDAPS and over StartTLS (connect,
// TLS, service bind, search, user bind, groups), beside the yardstick of
// a local account's argon2id password check in the same run. Run with
//
//	go test ./app/identity/ldapdir -run '^$' -bench . -count 5
func BenchmarkSignIn(b *testing.B) {
	srv := testldap.Start(b)
	preset, _ := ldapdir.Preset("openldap")
	ldaps := srv.Settings(preset)
	starttls := ldaps
	starttls.URL, starttls.Security = srv.URL, ldapdir.SecurityStartTLS
	hash, err := auth.HashPassword(testldap.AlicePassword)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("local-argon2id", func(b *testing.B) {
		for b.Loop() {
			if ok, err := auth.VerifyPassword(hash, testldap.AlicePassword); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	for _, c := range []struct {
		name string
		dir  func() (*ldapdir.Directory, error)
	}{
		{"ldaps", func() (*ldapdir.Directory, error) { return ldapdir.New(ldaps, srv.ServicePassword) }},
		{"starttls", func() (*ldapdir.Directory, error) { return ldapdir.New(starttls, srv.ServicePassword) }},
	} {
		d, err := c.dir()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				e, err := d.Authenticate(ctx, "alice", testldap.AlicePassword)
				if err != nil || len(e.Groups) != 2 {
					b.Fatal(e, err)
				}
			}
		})
	}
}
