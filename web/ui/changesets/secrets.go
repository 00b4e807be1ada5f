package changesets

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"backupd/app/collect/driver"
	"backupd/app/redact"
	"backupd/db"
	"backupd/web/ui/core"
)

// How the change set pages show the secrets in what a set sends: as the
// restore pages show a preview's (core.Secrets: masked for everyone when
// the setting masks views; shown, and audited, to a user who may reveal
// them and asks). Each device's lines are masked with that device's
// masker, as config push-status masks them and as that device's
// configuration is masked. The body (and a template's variables) is no
// device's configuration: it is masked with the secret rules of each
// platform among the set's devices, each with the masker of the set's
// first device of that platform, so that a snippet's secret shows with
// the marker of that device's lines. In a template, an action where a
// secret would be ({{.Vars.pw}}) is kept, as it says nothing itself; the
// variables such actions name are masked in the list of variables, and
// so is any variable whose value a device's lines show as a secret.
// Session transcripts and failures are masked when stored, whatever the
// page says.

// setMasker masks the texts of one change set for one page.
type setMasker struct {
	// keys is nil when the page shows the secrets.
	keys *redact.Keyring
	// platform is each device's platform; first the set's first device
	// of each platform, in the set's order.
	platform map[int64]string
	first    []int64
	maskers  map[int64]*redact.Masker
	// found are the secrets the devices' lines hold, with the device.
	found []foundSecret
}

// foundSecret is a secret found in a device's lines.
type foundSecret struct {
	text   string
	device int64
}

// masker is the masker of what targets send, as sec shows it: it looks
// up the platform of each device when the page masks.
func (u *handlers) masker(ctx context.Context, sec core.Secrets, targets []db.ChangeSetTarget) (*setMasker, error) {
	m := &setMasker{keys: sec.Keys, platform: map[int64]string{}, maskers: map[int64]*redact.Masker{}}
	if m.keys == nil {
		return m, nil
	}
	seen := map[string]bool{}
	for _, t := range targets {
		if _, ok := m.platform[t.DeviceID]; ok {
			continue
		}
		d, err := u.Store.GetDevice(ctx, t.DeviceID)
		switch {
		case errors.Is(err, db.ErrNotFound):
			// Deleted meanwhile: the rules every platform has.
			d.Platform = ""
		case err != nil:
			return nil, err
		}
		m.platform[t.DeviceID] = d.Platform
		if !seen[d.Platform] {
			seen[d.Platform] = true
			m.first = append(m.first, t.DeviceID)
		}
	}
	return m, nil
}

// deviceMasker is device's masker and its platform's secret rules.
func (m *setMasker) deviceMasker(device int64) (*redact.Masker, *driver.Secrets) {
	p := m.platform[device]
	mk, ok := m.maskers[device]
	if !ok {
		mk = m.keys.Device(device, p)
		m.maskers[device] = mk
	}
	return mk, driver.SecretsOf(p)
}

// lines is what the dry run rendered for t, masked with its device's
// masker (as redact.Masker.Text masks), each secret remembered for the
// variables.
func (m *setMasker) lines(t db.ChangeSetTarget) string {
	if t.Rendered == nil {
		return ""
	}
	if m.keys == nil {
		return *t.Rendered
	}
	mk, rules := m.deviceMasker(t.DeviceID)
	return rules.Mask(*t.Rendered, func(s string) string {
		m.found = append(m.found, foundSecret{text: s, device: t.DeviceID})
		return mk.Mark(s)
	}, nil)
}

// templateAction is one action of a template, on one line.
var templateAction = regexp.MustCompile(`\{\{.*?\}\}`)

// varRef is a variable an action names.
var varRef = regexp.MustCompile(`\.Vars\.([A-Za-z_][A-Za-z0-9_]*)`)

// wholeMarker is a marker alone: a secret another platform's rules
// masked already.
var wholeMarker = regexp.MustCompile(`^` + regexp.QuoteMeta(redact.Marker) + `[0-9a-f]{` + strconv.Itoa(redact.TagLen) + `}>$`)

// Placeholders stand for a template's actions while the body is masked:
// no space in them, so that a rule takes one for a secret's value.
const (
	placeOpen  = "\uE000"
	placeClose = "\uE001"
)

var placeholder = regexp.MustCompile(placeOpen + `[0-9]+` + placeClose)

// body is the change set's body as the page shows it, and the variables
// an action names where a secret is, with the masker of the platform
// whose rules found it.
func (m *setMasker) body(c db.ChangeSet) (string, map[string]*redact.Masker) {
	vars := map[string]*redact.Masker{}
	if m.keys == nil {
		return c.Body, vars
	}
	text := c.Body
	var actions []string
	if c.Kind == db.ChangeSetTemplate {
		text = templateAction.ReplaceAllStringFunc(text, func(a string) string {
			actions = append(actions, a)
			return placeOpen + strconv.Itoa(len(actions)-1) + placeClose
		})
	}
	back := func(s string) string {
		return placeholder.ReplaceAllStringFunc(s, func(p string) string {
			i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, placeOpen), placeClose))
			if err != nil || i >= len(actions) {
				return p
			}
			return actions[i]
		})
	}
	for _, id := range m.first {
		mk, rules := m.deviceMasker(id)
		text = rules.Mask(text, func(s string) string {
			if wholeMarker.MatchString(s) {
				return s
			}
			for _, p := range placeholder.FindAllString(s, -1) {
				for _, v := range varRef.FindAllStringSubmatch(back(p), -1) {
					if vars[v[1]] == nil {
						vars[v[1]] = mk
					}
				}
			}
			if strings.TrimSpace(placeholder.ReplaceAllString(s, "")) == "" {
				// Actions only: they say nothing; the variables do.
				return s
			}
			return mk.Mark(back(s))
		}, nil)
	}
	return back(text), vars
}

// variable is a template variable's value as the page shows it: masked
// when an action names it where a secret is (inBody, from body), or when
// a device's lines hold it as a secret. Call it after lines for every
// device.
func (m *setMasker) variable(key, value string, inBody map[string]*redact.Masker) string {
	if m.keys == nil || value == "" {
		return value
	}
	if mk := inBody[key]; mk != nil {
		return mk.Mark(value)
	}
	for _, f := range m.found {
		if f.text == value || strings.Contains(value, f.text) || (len(value) >= 4 && strings.Contains(f.text, value)) {
			mk, _ := m.deviceMasker(f.device)
			return mk.Mark(value)
		}
	}
	return value
}

// secretsFor is core.SecretsFor for a page of change set c, audited on
// target; a refused form's page (a POST) links the set's page to reveal
// or hide, never the form's address.
func (u *handlers) secretsFor(r *http.Request, c db.ChangeSet, targetType string, targetID int64, details map[string]any) (core.Secrets, error) {
	sec, err := u.SecretsFor(r, targetType, targetID, details)
	if err != nil || r.Method == http.MethodGet {
		return sec, err
	}
	sec.HideURL = core.ChangeSetPath(c.ID)
	sec.RevealURL = sec.HideURL + "?" + core.ParamReveal + "=1"
	return sec, nil
}
