package devices

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"backupd/db"
	"backupd/web/ui/core"
)

// deviceSource is what the device's page and its edit form say of the
// inventory source the device is synced from: each sync sets the fields
// an update plans (name, host, port, platform, login method, group,
// credential, template) to the source's values, so an edit of them here
// lasts only until the next sync, and a device the sync disabled comes
// back by itself. A person reads it before editing rather than after
// the sync undid the edit.
type deviceSource struct {
	Name string
	// URL is the source's row on Settings → Inventory sources, "" for a
	// user who may not see that page (the name shows without a link).
	URL string
	// Managed says that the source sets the device's fields; Disabled,
	// when the sync disabled the device (it is gone from the source), not
	// a person, says so (zero otherwise).
	Managed, Disabled sourceSentence
}

// sourceSentence is a translated sentence cut where the source's name
// goes, so that the page can make the name a link.
type sourceSentence struct {
	Shown         bool
	Before, After string
}

// Stand-ins for the source's name and key while a sentence is cut: the
// values go in only after the cut, so that no name or key can move it.
const (
	sourceNameMark = "\x00name\x00"
	sourceKeyMark  = "\x00key\x00"
)

// deviceSourceOf is d's inventory source as the pages show it in the
// request's language, nil for a device made by hand or imported (or
// whose source was deleted since d was read: the device is made by hand
// from then on).
func (u *handlers) deviceSourceOf(r *http.Request, d db.Device) (*deviceSource, error) {
	if d.InventorySourceID == nil {
		return nil, nil
	}
	src, err := u.Store.InventorySource(r.Context(), *d.InventorySourceID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	key := ""
	if d.InventoryKey != nil {
		key = *d.InventoryKey
	}
	lang := core.LangOf(r)
	cut := func(text string) sourceSentence {
		before, after, _ := strings.Cut(text, sourceNameMark)
		return sourceSentence{Shown: true, Before: strings.ReplaceAll(before, sourceKeyMark, key),
			After: strings.ReplaceAll(after, sourceKeyMark, key)}
	}
	s := &deviceSource{Name: src.Name, Managed: cut(u.Text(lang, keyDetailSourceManaged, sourceNameMark, sourceKeyMark))}
	if d.DisabledBySync && !d.Enabled {
		s.Disabled = cut(u.Text(lang, keyDetailSourceDisabled, sourceNameMark))
	}
	if core.SessionOf(r).Can("settings.view") {
		s.URL = core.PathInventorySources + "#insync-row-" + strconv.FormatInt(src.ID, 10)
	}
	return s, nil
}
