package apiv1

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"backupd/app/collect/driver"
	"backupd/app/platforms"
	"backupd/db"
	"backupd/web"
)

// Template is a backup command template.
type Template struct {
	ID        int64  `json:"id" doc:"Template identifier."`
	Name      string `json:"name" doc:"Template name."`
	Platform  string `json:"platform" doc:"Device platform identifier."`
	Commands  string `json:"commands" doc:"Commands run on the device, one per line."`
	CreatedAt string `json:"created_at" doc:"Creation time, UTC, ISO 8601 without zone designator."`
}

func toTemplate(t db.Template) Template {
	return Template{ID: t.ID, Name: t.Name, Platform: t.Platform, Commands: t.Commands, CreatedAt: t.CreatedAt}
}

// Platform is a device platform identifier; the accepted values come from
// the driver registry.
type Platform string

// Schema is a built-in platform (an enum) or a custom one (the pattern
// every custom platform ID follows). The document does not change when an
// administrator defines a platform: which custom IDs exist is checked with
// the rest of the device (an unknown one is a validation error naming the
// accepted values).
func (Platform) Schema(huma.Registry) *huma.Schema {
	builtin := stringEnum(driver.BuiltinIDs(), "A built-in platform.")
	custom := &huma.Schema{Type: huma.TypeString, Pattern: platforms.IDPatternText,
		Description: "A platform an administrator defined (Settings, Platforms)."}
	return &huma.Schema{
		Type:        huma.TypeString,
		Description: "Device platform identifier: a built-in platform, or a custom one defined by an administrator.",
		AnyOf:       []*huma.Schema{builtin, custom},
	}
}

// unknownPlatform is the message for a platform value no platform has.
func unknownPlatform() string {
	return "unknown platform; accepted: " + strings.Join(driver.IDs(), ", ")
}

// checkPlatform refuses a custom platform ID no platform has (the schema
// accepts every ID of the custom form).
func checkPlatform(id string) error {
	if _, ok := driver.Lookup(id); !ok {
		return web.FieldInvalid("body", "platform", unknownPlatform())
	}
	return nil
}

func stringEnum(values []string, doc string) *huma.Schema {
	enum := make([]any, len(values))
	for i, v := range values {
		enum[i] = v
	}
	return &huma.Schema{Type: huma.TypeString, Enum: enum, Description: doc}
}

// TemplateCreate is the body of POST /templates.
type TemplateCreate struct {
	Name     string   `json:"name" minLength:"1" maxLength:"128" doc:"Template name; surrounding spaces are trimmed."`
	Platform Platform `json:"platform" doc:"Device platform identifier."`
	Commands *string  `json:"commands,omitempty" maxLength:"65536" doc:"Commands, one per line. Absent or blank: the platform's default commands."`
}

// TemplateUpdate is the body of PUT /templates/{template_id}.
type TemplateUpdate struct {
	Name     *string   `json:"name,omitempty" nullable:"false" minLength:"1" maxLength:"128" doc:"New name; absent keeps the stored value."`
	Platform *Platform `json:"platform,omitempty" nullable:"false" doc:"New platform; absent keeps the stored value."`
	Commands *string   `json:"commands,omitempty" nullable:"false" maxLength:"65536" doc:"New commands; absent keeps the stored value, empty restores the platform's default commands."`
}

// TransformSchema says in the schema what absent and null mean on PUT.
func (TemplateUpdate) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	s.Description = "Body of PUT /templates/{template_id}: a partial update, not a full replace. An absent field keeps its stored value; no field may be null. An empty commands string restores the platform's default commands."
	return s
}

type templateIDPath struct {
	TemplateID int64 `path:"template_id" minimum:"1" doc:"Template identifier."`
}

type templateOutput struct{ Body Template }

func templateError(err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return web.NewError(http.StatusNotFound, "RESOURCE_TEMPLATE_NOT_FOUND", "template not found")
	}
	return err
}

// commandsOrDefault normalises line endings and falls back to the
// platform's defaults for blank text.
func commandsOrDefault(commands, platform string) string {
	commands = strings.ReplaceAll(commands, "\r\n", "\n")
	if strings.TrimSpace(commands) == "" {
		return driver.DefaultCommands(platform)
	}
	return commands
}

func (a *API) registerTemplates() {
	register(a, operation(http.MethodGet, "/templates", "list-templates", "Templates", "templates.view",
		"List templates", "Returns one page of templates ordered by id.", nil),
		func(ctx context.Context, in *ListParams) (*struct{ Body Page[Template] }, error) {
			page, err := listPage(*in, func(limit, off int) ([]db.Template, int, error) {
				return a.deps.Store.ListTemplates(ctx, limit, off)
			}, toTemplate)
			return &struct{ Body Page[Template] }{page}, err
		})

	register(a, operation(http.MethodGet, "/templates/{template_id}", "get-template", "Templates", "templates.view",
		"Get a template", "Returns one template.", Codes{http.StatusNotFound: {{"RESOURCE_TEMPLATE_NOT_FOUND", "no template has this id.", "template not found"}}}),
		func(ctx context.Context, in *templateIDPath) (*templateOutput, error) {
			t, err := a.deps.Store.GetTemplate(ctx, in.TemplateID)
			if err != nil {
				return nil, templateError(err)
			}
			return &templateOutput{toTemplate(t)}, nil
		})

	register(a, operation(http.MethodPost, "/templates", "create-template", "Templates", "templates.create",
		"Create a template", "Creates a template. When commands is absent or blank, the platform's default commands are filled in. Commands run on devices as given: keep modifying or destructive commands out of them.", nil),
		func(ctx context.Context, in *struct{ Body TemplateCreate }) (*templateOutput, error) {
			name, err := trimmedName("name", in.Body.Name)
			if err != nil {
				return nil, err
			}
			platform := string(in.Body.Platform)
			if err := checkPlatform(platform); err != nil {
				return nil, err
			}
			commands := ""
			if in.Body.Commands != nil {
				commands = *in.Body.Commands
			}
			t, err := a.deps.Store.CreateTemplate(ctx, db.Template{Name: name, Platform: platform, Commands: commandsOrDefault(commands, platform)})
			if err != nil {
				return nil, err
			}
			a.audit(ctx, "template.create", "template", t.ID, map[string]any{"name": t.Name, "platform": t.Platform})
			return &templateOutput{toTemplate(t)}, nil
		})

	register(a, operation(http.MethodPut, "/templates/{template_id}", "update-template", "Templates", "templates.update",
		"Update a template", "Changes the fields provided; absent fields keep their stored values. Empty commands restore the default commands of the (possibly new) platform.", Codes{http.StatusNotFound: {{"RESOURCE_TEMPLATE_NOT_FOUND", "no template has this id.", "template not found"}}}),
		func(ctx context.Context, in *struct {
			TemplateID int64 `path:"template_id" minimum:"1" doc:"Template identifier."`
			Body       TemplateUpdate
		}) (*templateOutput, error) {
			b := in.Body
			var name string
			if b.Name != nil {
				n, err := trimmedName("name", *b.Name)
				if err != nil {
					return nil, err
				}
				name = n
			}
			if b.Platform != nil {
				if err := checkPlatform(string(*b.Platform)); err != nil {
					return nil, err
				}
			}
			t, err := a.deps.Store.UpdateTemplate(ctx, in.TemplateID, func(t *db.Template) error {
				if b.Name != nil {
					t.Name = name
				}
				if b.Platform != nil {
					t.Platform = string(*b.Platform)
				}
				if b.Commands != nil {
					t.Commands = commandsOrDefault(*b.Commands, t.Platform)
				}
				return nil
			})
			if err != nil {
				return nil, templateError(err)
			}
			a.audit(ctx, "template.update", "template", t.ID, map[string]any{"fields": sentFields(ctx), "name": t.Name, "platform": t.Platform})
			return &templateOutput{toTemplate(t)}, nil
		})

	register(a, operation(http.MethodDelete, "/templates/{template_id}", "delete-template", "Templates", "templates.delete",
		"Delete a template", "Deletes a template. Devices that used it fall back to their platform's default commands.", Codes{http.StatusNotFound: {{"RESOURCE_TEMPLATE_NOT_FOUND", "no template has this id.", "template not found"}}}),
		func(ctx context.Context, in *templateIDPath) (*deleteOutput, error) {
			if err := a.deps.Store.DeleteTemplate(ctx, in.TemplateID); err != nil {
				return nil, templateError(err)
			}
			a.audit(ctx, "template.delete", "template", in.TemplateID, nil)
			return deleted(), nil
		})
}
