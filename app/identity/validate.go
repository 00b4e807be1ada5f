package identity

import (
	"errors"
	"strings"

	"backupd/app/identity/ldapdir"
	"backupd/app/identity/oidc"
	"backupd/db"
)

// FieldError is a setting that cannot work, named by its field (the
// JSON name in db.LDAPSettings or db.OIDCSettings), with what is wrong in
// plain English.
type FieldError struct {
	Field   string
	Message string
}

// FieldErrors are every problem of a refused configuration, in the order
// of the form.
type FieldErrors []FieldError

func (fe FieldErrors) Error() string {
	parts := make([]string, len(fe))
	for i, e := range fe {
		parts[i] = e.Field + ": " + e.Message
	}
	return "the settings were not saved: " + strings.Join(parts, "; ")
}

// ValidateLDAP checks LDAP settings field by field. Settings turned off
// and never filled in are fine.
func ValidateLDAP(s db.LDAPSettings) error {
	if !s.Enabled && s.URL == "" {
		return nil
	}
	err := ldapdir.Validate(s)
	var lf ldapdir.FieldErrors
	if errors.As(err, &lf) {
		out := make(FieldErrors, len(lf))
		for i, e := range lf {
			out[i] = FieldError{Field: e.Field, Message: e.Message}
		}
		return out
	}
	return err
}

// ValidateOIDC checks OpenID Connect settings field by field. Settings
// turned off and never filled in are fine.
func ValidateOIDC(s db.OIDCSettings) error {
	if !s.Enabled && s.Issuer == "" {
		return nil
	}
	var out FieldErrors
	for _, e := range oidc.Validate(s) {
		out = append(out, FieldError{Field: e.Field, Message: e.Message})
	}
	if len(out) > 0 {
		return out
	}
	return nil
}
