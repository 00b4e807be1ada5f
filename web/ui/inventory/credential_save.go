package inventory

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"

	"backupd/app/secret"
	"backupd/db"
	"backupd/web/ui/core"
)

// Reading the credential form, sealing what was typed, and saving it.

// credentialInput is the credential form as posted. The secrets live
// here only until they are sealed.
type credentialInput struct {
	name, username, remarks              string
	password, enable, key                string
	clearPassword, clearEnable, clearKey bool
}

// readCredentialForm reads and checks the form; a non-empty key says what
// to correct.
func readCredentialForm(r *http.Request) (credentialInput, string, []any) {
	var in credentialInput
	var fits [6]bool
	in.name, fits[0] = core.Field(r, "name", invMaxName)
	in.username, fits[1] = core.Field(r, "username", invMaxUsername)
	in.password, fits[2] = core.Field(r, "password", invMaxSecret)
	in.enable, fits[3] = core.Field(r, "enable_password", invMaxSecret)
	in.key, fits[4] = core.Field(r, "private_key", invMaxKey)
	in.remarks, fits[5] = core.Field(r, "remarks", invMaxRemarks)
	in.name, in.username = strings.TrimSpace(in.name), strings.TrimSpace(in.username)
	in.remarks = strings.TrimSpace(in.remarks)
	in.clearPassword, in.clearEnable, in.clearKey = core.Checked(r, "clear_password"), core.Checked(r, "clear_enable_password"), core.Checked(r, "clear_private_key")
	switch {
	case in.name == "":
		return in, keyInvNameMissing, nil
	case !fits[0]:
		return in, keyInvNameTooLong, []any{invMaxName}
	case !fits[1]:
		return in, keyInvCredUsernameTooLong, []any{invMaxUsername}
	case !fits[2]:
		return in, keyInvCredPasswordTooLong, []any{invMaxSecret}
	case !fits[3]:
		return in, keyInvCredEnableTooLong, []any{invMaxSecret}
	case !fits[4]:
		return in, keyInvCredKeyTooLong, []any{invMaxKey}
	case !fits[5]:
		return in, keyInvRemarksTooLong, []any{invMaxRemarks}
	case in.password != "" && in.clearPassword, in.enable != "" && in.clearEnable, in.key != "" && in.clearKey:
		return in, keyInvCredSetAndClear, nil
	}
	if in.key != "" {
		// Refuse now what the backup would fail on later: the engine
		// parses the key the same way and has no passphrase to give.
		in.key = strings.TrimSpace(in.key) + "\n"
		var missing *ssh.PassphraseMissingError
		if _, err := ssh.ParsePrivateKey([]byte(in.key)); errors.As(err, &missing) {
			return in, keyInvCredKeyPassphrase, nil
		} else if err != nil {
			return in, keyInvCredKeyInvalid, nil
		}
	}
	return in, "", nil
}

// typedSecret reports whether any secret field was filled in.
func (in credentialInput) typedSecret() bool {
	return in.password != "" || in.enable != "" || in.key != ""
}

// formPage is the form as typed, for showing it again: never a secret.
func (in credentialInput) formPage(key string, args []any) credentialFormPage {
	return credentialFormPage{Name: in.name, Username: in.username, Remarks: in.remarks,
		ClearPassword: in.clearPassword, ClearEnable: in.clearEnable, ClearKey: in.clearKey,
		Retype: in.typedSecret(), Error: key, Args: args}
}

// invSeal seals a typed secret as the public API does (its seal
// helper): same sealer, same purpose, so the engine opens it.
func (u *handlers) invSeal(plain, purpose string) []byte {
	return u.Sealer.Seal(plain, purpose)
}

func invRemarks(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (u *handlers) createCredential(w http.ResponseWriter, r *http.Request) error {
	in, bad, args := readCredentialForm(r)
	fail := func(status int, key string, args ...any) error {
		p := in.formPage(key, args)
		p.ClearPassword, p.ClearEnable, p.ClearKey = false, false, false
		return u.Render(w, r, status, "credentials_form.html", keyInvTitleNewCredential, p)
	}
	if bad != "" {
		return fail(http.StatusUnprocessableEntity, bad, args...)
	}
	c := db.Credential{Name: in.name, Username: in.username, Remarks: invRemarks(in.remarks)}
	if in.password != "" {
		c.Password = u.invSeal(in.password, secret.PurposePassword)
	}
	if in.enable != "" {
		c.EnablePassword = u.invSeal(in.enable, secret.PurposeEnablePassword)
	}
	if in.key != "" {
		c.PrivateKey = u.invSeal(in.key, secret.PurposePrivateKey)
	}
	c, err := u.Store.CreateCredential(r.Context(), c)
	switch {
	case errors.Is(err, db.ErrNameExists):
		return fail(http.StatusConflict, keyInvCredNameExists, in.name)
	case err != nil:
		return err
	}
	u.Audit(r, "credential.create", "credential", c.ID, map[string]any{"name": c.Name,
		"secrets": invSecretNames(c.Password != nil, c.EnablePassword != nil, c.PrivateKey != nil)})
	core.RedirectNotice(w, r, "/credentials", "created")
	return nil
}

// invSecretNames names the secrets that are set, for the audit log.
func invSecretNames(password, enable, key bool) []string {
	out := []string{}
	for _, s := range []struct {
		set  bool
		name string
	}{{password, "password"}, {enable, "enable_password"}, {key, "private_key"}} {
		if s.set {
			out = append(out, s.name)
		}
	}
	return out
}

// invErrNoChange stops an update that would change nothing.
var invErrNoChange = errors.New("nothing to change")

func (u *handlers) updateCredential(w http.ResponseWriter, r *http.Request) error {
	stored, err := u.pathCredential(r)
	if err != nil {
		return err
	}
	in, bad, args := readCredentialForm(r)
	fail := func(status int, key string, args ...any) error {
		return u.renderCredentialForm(w, r, status, stored, in.formPage(key, args), true)
	}
	if bad != "" {
		return fail(http.StatusUnprocessableEntity, bad, args...)
	}
	var fields []string
	c, err := u.Store.UpdateCredential(r.Context(), stored.ID, func(c *db.Credential) error {
		fields = u.applyCredentialInput(c, in)
		if len(fields) == 0 {
			return invErrNoChange
		}
		return nil
	})
	switch {
	case errors.Is(err, invErrNoChange):
		core.RedirectNotice(w, r, "/credentials/"+strconv.FormatInt(stored.ID, 10), "unchanged")
		return nil
	case errors.Is(err, db.ErrNameExists):
		return fail(http.StatusConflict, keyInvCredNameExists, in.name)
	case err != nil:
		return err
	}
	u.Audit(r, "credential.update", "credential", c.ID, map[string]any{"fields": fields, "name": c.Name})
	core.RedirectNotice(w, r, "/credentials", "updated")
	return nil
}

// applyCredentialInput changes c as the form asks and names the fields
// it changed. A blank secret keeps the stored one; a ticked box removes
// it.
func (u *handlers) applyCredentialInput(c *db.Credential, in credentialInput) []string {
	var fields []string
	if c.Name != in.name {
		c.Name, fields = in.name, append(fields, "name")
	}
	if c.Username != in.username {
		c.Username, fields = in.username, append(fields, "username")
	}
	if old := invRemarks(in.remarks); (c.Remarks == nil) != (old == nil) || (old != nil && *c.Remarks != *old) {
		c.Remarks, fields = old, append(fields, "remarks")
	}
	for _, s := range []struct {
		field, typed, purpose string
		clear                 bool
		stored                *[]byte
	}{
		{"password", in.password, secret.PurposePassword, in.clearPassword, &c.Password},
		{"enable_password", in.enable, secret.PurposeEnablePassword, in.clearEnable, &c.EnablePassword},
		{"private_key", in.key, secret.PurposePrivateKey, in.clearKey, &c.PrivateKey},
	} {
		switch {
		case s.typed != "":
			*s.stored, fields = u.invSeal(s.typed, s.purpose), append(fields, s.field)
		case s.clear && *s.stored != nil:
			*s.stored, fields = nil, append(fields, s.field)
		}
	}
	return fields
}

func (u *handlers) deleteCredential(w http.ResponseWriter, r *http.Request) error {
	c, err := u.pathCredential(r)
	if err != nil {
		return err
	}
	err = u.Store.DeleteCredential(r.Context(), c.ID)
	switch {
	case errors.Is(err, db.ErrInUse):
		return u.renderCredentialForm(w, r, http.StatusConflict, c, credentialFormPage{Error: keyInvCredInUse, Args: []any{c.Name}}, false)
	case err != nil:
		return err
	}
	u.Audit(r, "credential.delete", "credential", c.ID, map[string]any{"name": c.Name})
	core.RedirectNotice(w, r, "/credentials", "deleted")
	return nil
}
