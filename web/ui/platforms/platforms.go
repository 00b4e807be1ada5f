// Package platforms is the room of how devices are reached: the
// platforms — the built-in ones (read only) and the ones an
// administrator defines (app/platforms), with import and export of the
// JSON definition and a "Test against a device" that runs a real session
// with the unsaved form and shows the captured text and the transcript,
// passwords masked. Reading needs settings.view, every change and the test
// settings.update (a platform is a setting of the appliance, as the
// notification channels are); testing against a stored device also needs
// backups.create and the device in the user's scope, since it logs in with
// the device's credential. The zones devices live in and the remote
// collectors that back up every zone but the server's own are here too
// (collectors.go).
//
// The custom platforms themselves — their definitions, checks and
// storage — are app/platforms, imported here as custom; the test session
// is backup.RunPlatformTest.
package platforms

import (
	"errors"
	"net/http"
	"strings"

	"backupd/app/collect/driver"
	custom "backupd/app/platforms"
	"backupd/db"
	"backupd/web/ui/core"
)

// handlers are the platforms and collectors pages.
type handlers struct{ *core.UI }

// Mount registers the platforms and collectors pages on mux.
func Mount(mux *http.ServeMux, c *core.UI) {
	u := &handlers{c}
	u.MountPage(mux, "GET "+core.PathPlatforms, "settings.view", u.platformsList)
	mux.Handle("GET /platforms/new", u.Page("settings.update", u.platformNewForm))
	mux.Handle("POST /platforms", u.Page("settings.update", u.platformCreate))
	mux.Handle("POST /platforms/import", u.Page("settings.update", u.platformImport))
	mux.Handle("GET /platforms/{id}", u.Page("settings.view", u.platformDetail))
	mux.Handle("GET /platforms/{id}/export", u.Page("settings.view", u.platformExport))
	mux.Handle("POST /platforms/{id}", u.Page("settings.update", u.platformUpdate))
	mux.Handle("POST /platforms/{id}/delete", u.Page("settings.update", u.platformDelete))

	u.MountPage(mux, "GET "+core.PathCollectors, "settings.view", u.collectorsPage)
	mux.Handle("POST /collectors/zones", u.Page("settings.update", u.createZone))
	mux.Handle("POST /collectors/tokens", u.Page("settings.update", u.createCollectorToken))
	mux.Handle("POST /collectors/{id}/revoke", u.Page("settings.update", u.revokeCollector))
	mux.Handle("POST /collectors/tokens/{id}/revoke", u.Page("settings.update", u.revokeCollectorToken))
}

const (
	// platformFieldMax bounds one form field; the definition's own bounds
	// (app/platforms) apply after.
	platformFieldMax = custom.MaxDocument
	// platformPreLoginRows is how many blank pre-login rows the form adds.
	platformPreLoginRows = 2
	// platformDeviceChoices bounds the devices the test offers by name.
	platformDeviceChoices = 500
)

var platformNotices = map[string]string{
	"created":  keyPlatCreated,
	"updated":  keyPlatUpdated,
	"deleted":  keyPlatDeleted,
	"imported": keyPlatImported,
}

// platformProblemKeys are the messages of a definition's problems; each
// takes the field's name, and those in platformProblemArg a detail too.
var platformProblemKeys = map[custom.Problem]string{
	custom.BadDocument:      keyPlatErrBadDocument,
	custom.TooLarge:         keyPlatErrTooLarge,
	custom.BadSchema:        keyPlatErrBadSchema,
	custom.Required:         keyPlatErrRequired,
	custom.BadID:            keyPlatErrBadID,
	custom.BuiltinID:        keyPlatErrBuiltinID,
	custom.TooLong:          keyPlatErrTooLong,
	custom.TooMany:          keyPlatErrTooManyRules,
	custom.BadPattern:       keyPlatErrBadPattern,
	custom.MatchesEmpty:     keyPlatErrMatchesEmpty,
	custom.NotPrintable:     keyPlatErrNotPrintable,
	custom.UnknownTransport: keyPlatErrUnknownTransport,
	custom.ExecNeedsSSH:     keyPlatErrExecNeedsSSH,
	custom.NoSecretGroup:    keyPlatErrNoSecretGroup,
	custom.SecretForm:       keyPlatErrSecretForm,

	custom.UnknownRestoreMethod: keyPlatErrUnknownRestoreMethod,
	custom.NotForMethod:         keyPlatErrNotForMethod,
	custom.OutOfRange:           keyPlatErrOutOfRange,
	custom.BadFile:              keyPlatErrBadFile,
}

var platformProblemArg = map[custom.Problem]bool{
	custom.BadDocument: true, custom.TooLarge: true, custom.BadSchema: true,
	custom.TooLong: true, custom.TooMany: true, custom.BadPattern: true,
	custom.UnknownTransport: true, custom.UnknownRestoreMethod: true, custom.NotForMethod: true,
	custom.OutOfRange: true,
}

// platformMsg is a message key with its arguments.
type platformMsg struct {
	Key  string
	Args []any
}

// platformRow is one platform of the list; Aliases are the names imports
// map to it, comma-separated, Restore its restore method ("" when it
// cannot restore).
type platformRow struct {
	ID, Name, Vendor, Transports, Defaults, Notes, Aliases, Restore string
	Devices, Templates                                              int
	Broken                                                          *platformMsg
}

type platformsPage struct {
	Builtins []platformRow
	Custom   []platformRow
	Notice   string
	Errors   []platformMsg
	Max      int
}

func platformRowOf(p driver.Platform) platformRow {
	return platformRow{ID: p.ID, Name: p.Name, Vendor: p.Vendor, Transports: strings.Join(p.TransportList(), ", "),
		Defaults: p.DefaultCommands, Notes: p.Notes, Aliases: strings.Join(p.Aliases, ", "), Restore: p.Restore.Method}
}

func (u *handlers) platformsList(w http.ResponseWriter, r *http.Request) error {
	// What the command line imported since this process started is
	// loaded here too (a definition that does not load shows as such in
	// the list).
	_ = custom.LoadStore(r.Context(), u.Store)
	return u.renderPlatforms(w, r, http.StatusOK, nil)
}

func (u *handlers) renderPlatforms(w http.ResponseWriter, r *http.Request, status int, errs []platformMsg) error {
	ctx := r.Context()
	p := platformsPage{Notice: core.Notice(r, platformNotices), Errors: errs, Max: db.MaxCustomPlatforms}
	lang := core.LangOf(r)
	for _, b := range driver.Builtins() {
		row := platformRowOf(b)
		row.Notes = PlatformNote(lang, b.ID, b.Notes)
		p.Builtins = append(p.Builtins, row)
	}
	stored, err := custom.ListStored(ctx, u.Store)
	if err != nil {
		return err
	}
	for _, s := range stored {
		row := platformRow{ID: s.PlatformID, Name: s.Def.Name, Vendor: s.Def.Vendor, Notes: s.Def.Notes}
		if pl, err := s.Def.Platform(); err == nil {
			row = platformRowOf(pl)
		} else {
			row.Broken = &platformMsg{Key: keyPlatBroken}
		}
		if row.Devices, row.Templates, err = u.Store.PlatformUse(ctx, s.PlatformID); err != nil {
			return err
		}
		p.Custom = append(p.Custom, row)
	}
	return u.Render(w, r, status, "platforms.html", keyPlatTitle, p)
}

// definitionMessages turns a definition's errors into the page's
// messages.
func definitionMessages(err error) []platformMsg {
	var errs custom.Errors
	if !errors.As(err, &errs) {
		return nil
	}
	out := make([]platformMsg, 0, len(errs))
	for _, e := range errs {
		key, ok := platformProblemKeys[e.Problem]
		if !ok {
			key = keyPlatErrOther
		}
		args := []any{e.Field}
		if platformProblemArg[e.Problem] {
			args = append(args, e.Arg)
		}
		out = append(out, platformMsg{Key: key, Args: args})
	}
	return out
}

// storeMessages explains a store refusal, or returns nil for an error
// the page cannot explain.
func storeMessages(err error, id string) []platformMsg {
	var inUse *db.PlatformInUseError
	switch {
	case errors.As(err, &inUse):
		return []platformMsg{{Key: keyPlatErrInUse, Args: []any{id, inUse.Devices, inUse.Templates}}}
	case errors.Is(err, db.ErrNameExists):
		return []platformMsg{{Key: keyPlatErrExists, Args: []any{id}}}
	case errors.Is(err, db.ErrTooManyPlatforms):
		return []platformMsg{{Key: keyPlatErrTooMany, Args: []any{db.MaxCustomPlatforms}}}
	}
	return definitionMessages(err)
}
