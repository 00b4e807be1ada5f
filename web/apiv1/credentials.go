package apiv1

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"backupd/app/secret"
	"backupd/db"
	"backupd/web"
)

// Credential is a device login as the API shows it: never a secret.
type Credential struct {
	ID        int64   `json:"id" doc:"Credential identifier."`
	Name      string  `json:"name" doc:"Credential name, unique among credentials."`
	Username  string  `json:"username" doc:"Login name on the device."`
	Remarks   *string `json:"remarks" doc:"Free-text remarks."`
	CreatedAt string  `json:"created_at" doc:"Creation time, UTC, ISO 8601 without zone designator."`
}

func toCredential(c db.Credential) Credential {
	return Credential{ID: c.ID, Name: c.Name, Username: c.Username, Remarks: c.Remarks, CreatedAt: c.CreatedAt}
}

// CredentialCreate is the body of POST /credentials.
type CredentialCreate struct {
	Name           string  `json:"name" minLength:"1" maxLength:"128" doc:"Credential name, unique among credentials; surrounding spaces are trimmed."`
	Username       string  `json:"username" maxLength:"128" doc:"Login name on the device; may be empty for devices that ask only for a password."`
	Password       *string `json:"password,omitempty" nullable:"true" maxLength:"1024" doc:"Login password. Write-only: stored encrypted, never returned."`
	EnablePassword *string `json:"enable_password,omitempty" nullable:"true" maxLength:"1024" doc:"Enable (privileged mode) password, or null. Write-only: stored encrypted, never returned."`
	PrivateKey     *string `json:"private_key,omitempty" nullable:"true" maxLength:"16384" doc:"PEM private key for SSH key login. Write-only: stored encrypted, never returned."`
	Remarks        *string `json:"remarks,omitempty" nullable:"true" maxLength:"2000" doc:"Free-text remarks."`
}

// CredentialUpdate is the body of PUT /credentials/{credential_id}.
type CredentialUpdate struct {
	Name           *string `json:"name,omitempty" nullable:"false" minLength:"1" maxLength:"128" doc:"New name; absent keeps the stored value."`
	Username       *string `json:"username,omitempty" nullable:"false" maxLength:"128" doc:"New login name; absent keeps the stored value."`
	Password       *string `json:"password,omitempty" nullable:"true" maxLength:"1024" doc:"New password; absent keeps the stored one, null clears it. Write-only."`
	EnablePassword *string `json:"enable_password,omitempty" nullable:"true" maxLength:"1024" doc:"New enable password; absent keeps the stored one, null clears it. Write-only."`
	PrivateKey     *string `json:"private_key,omitempty" nullable:"true" maxLength:"16384" doc:"New private key; absent keeps the stored one, null clears it. Write-only."`
	Remarks        *string `json:"remarks,omitempty" nullable:"true" maxLength:"2000" doc:"New remarks; absent keeps the stored value, null clears them."`
}

// TransformSchema says in the schema what absent and null mean on PUT.
func (CredentialUpdate) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	s.Description = "Body of PUT /credentials/{credential_id}: a partial update, not a full replace. An absent field keeps its stored value. An explicit null clears password, enable_password, private_key or remarks; name and username cannot be null."
	return s
}

type credentialIDPath struct {
	CredentialID int64 `path:"credential_id" minimum:"1" doc:"Credential identifier."`
}

type credentialOutput struct{ Body Credential }

func credentialError(err error) error {
	switch {
	case errors.Is(err, db.ErrNotFound):
		return web.NewError(http.StatusNotFound, "RESOURCE_CREDENTIAL_NOT_FOUND", "credential not found")
	case errors.Is(err, db.ErrNameExists):
		return web.NewError(http.StatusConflict, "RESOURCE_CREDENTIAL_NAME_EXISTS", "a credential with this name already exists")
	case errors.Is(err, db.ErrInUse):
		return web.NewError(http.StatusConflict, "RESOURCE_CREDENTIAL_IN_USE", "devices still use the credential; change them first")
	}
	return err
}

// seal returns the sealed form of a secret, nil for an absent or null one.
func (a *API) seal(v *string, purpose string) []byte {
	if v == nil {
		return nil
	}
	return a.deps.Sealer.Seal(*v, purpose)
}

func (a *API) registerCredentials() {
	register(a, operation(http.MethodGet, "/credentials", "list-credentials", "Credentials", "credentials.view",
		"List credentials", "Returns one page of credentials ordered by id. Secrets are never included.", nil),
		func(ctx context.Context, in *ListParams) (*struct{ Body Page[Credential] }, error) {
			page, err := listPage(*in, func(limit, off int) ([]db.Credential, int, error) {
				return a.deps.Store.ListCredentials(ctx, limit, off)
			}, toCredential)
			return &struct{ Body Page[Credential] }{page}, err
		})

	register(a, operation(http.MethodGet, "/credentials/{credential_id}", "get-credential", "Credentials", "credentials.view",
		"Get a credential", "Returns one credential. Secrets are never included.", Codes{http.StatusNotFound: {{"RESOURCE_CREDENTIAL_NOT_FOUND", "no credential has this id.", "credential not found"}}}),
		func(ctx context.Context, in *credentialIDPath) (*credentialOutput, error) {
			c, err := a.deps.Store.GetCredential(ctx, in.CredentialID)
			if err != nil {
				return nil, credentialError(err)
			}
			return &credentialOutput{toCredential(c)}, nil
		})

	register(a, operation(http.MethodPost, "/credentials", "create-credential", "Credentials", "credentials.create",
		"Create a credential", "Creates a credential. password, enable_password and private_key are stored encrypted and never returned.", Codes{http.StatusConflict: {{"RESOURCE_CREDENTIAL_NAME_EXISTS", "another credential has this name.", "a credential with this name already exists"}}}),
		func(ctx context.Context, in *struct{ Body CredentialCreate }) (*credentialOutput, error) {
			name, err := trimmedName("name", in.Body.Name)
			if err != nil {
				return nil, err
			}
			c, err := a.deps.Store.CreateCredential(ctx, db.Credential{
				Name:           name,
				Username:       strings.TrimSpace(in.Body.Username),
				Password:       a.seal(in.Body.Password, secret.PurposePassword),
				EnablePassword: a.seal(in.Body.EnablePassword, secret.PurposeEnablePassword),
				PrivateKey:     a.seal(in.Body.PrivateKey, secret.PurposePrivateKey),
				Remarks:        in.Body.Remarks,
			})
			if err != nil {
				return nil, credentialError(err)
			}
			a.audit(ctx, "credential.create", "credential", c.ID, map[string]any{"name": c.Name})
			return &credentialOutput{toCredential(c)}, nil
		})

	register(a, operation(http.MethodPut, "/credentials/{credential_id}", "update-credential", "Credentials", "credentials.update",
		"Update a credential", "Changes the fields provided; absent fields keep their stored values. A provided null clears enable_password, password, private_key or remarks.", Codes{http.StatusNotFound: {{"RESOURCE_CREDENTIAL_NOT_FOUND", "no credential has this id.", "credential not found"}}, http.StatusConflict: {{"RESOURCE_CREDENTIAL_NAME_EXISTS", "another credential has this name.", "a credential with this name already exists"}}}),
		func(ctx context.Context, in *struct {
			CredentialID int64 `path:"credential_id" minimum:"1" doc:"Credential identifier."`
			Body         CredentialUpdate
		}) (*credentialOutput, error) {
			// Which keys were sent at all: null (clear) differs from absent (keep).
			sent := sentKeys(ctx)
			b := in.Body
			var name string
			if b.Name != nil {
				n, err := trimmedName("name", *b.Name)
				if err != nil {
					return nil, err
				}
				name = n
			}
			c, err := a.deps.Store.UpdateCredential(ctx, in.CredentialID, func(c *db.Credential) error {
				if b.Name != nil {
					c.Name = name
				}
				if b.Username != nil {
					c.Username = strings.TrimSpace(*b.Username)
				}
				if sent["password"] {
					c.Password = a.seal(b.Password, secret.PurposePassword)
				}
				if sent["enable_password"] {
					c.EnablePassword = a.seal(b.EnablePassword, secret.PurposeEnablePassword)
				}
				if sent["private_key"] {
					c.PrivateKey = a.seal(b.PrivateKey, secret.PurposePrivateKey)
				}
				if sent["remarks"] {
					c.Remarks = b.Remarks
				}
				return nil
			})
			if err != nil {
				return nil, credentialError(err)
			}
			a.audit(ctx, "credential.update", "credential", c.ID, map[string]any{"fields": sentFields(ctx), "name": c.Name})
			return &credentialOutput{toCredential(c)}, nil
		})

	register(a, operation(http.MethodDelete, "/credentials/{credential_id}", "delete-credential", "Credentials", "credentials.delete",
		"Delete a credential", "Deletes a credential. A credential still used by a device cannot be deleted.", Codes{http.StatusNotFound: {{"RESOURCE_CREDENTIAL_NOT_FOUND", "no credential has this id.", "credential not found"}}, http.StatusConflict: {{"RESOURCE_CREDENTIAL_IN_USE", "devices still use the credential.", "devices still use the credential; change them first"}}}),
		func(ctx context.Context, in *credentialIDPath) (*deleteOutput, error) {
			if err := a.deps.Store.DeleteCredential(ctx, in.CredentialID); err != nil {
				return nil, credentialError(err)
			}
			a.audit(ctx, "credential.delete", "credential", in.CredentialID, nil)
			return deleted(), nil
		})
}
