package devices

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"backupd/app/importer"
	"backupd/app/inventory"
	"backupd/db"
	"backupd/web/ui/core"
)

// The rows of an uploaded CSV file, checked against the same rules as
// the form; a group, credential, template or zone is named, not numbered.

// devicesImportInput is what rows are checked against: the names of the
// groups, credentials and templates, and the user's scope.
type devicesImportInput struct {
	allGroups bool
	// groups maps a folded name to the group, inScope to whether the user
	// may place devices in it.
	groups      map[string]db.Group
	inScope     map[int64]bool
	credentials map[string]int64
	// canUse says whether the user may attach a credential.
	canUse func(id int64) bool
	// templates maps platform, then folded name, to the ids of the
	// templates of that name (names need not be unique).
	templates map[string]map[string][]int64
	// zones maps a folded name to the zone's id.
	zones map[string]int64
}

func (u *handlers) devicesImportInput(ctx context.Context, s *core.Session) (*devicesImportInput, error) {
	groups, err := u.Store.AllGroups(ctx)
	if err != nil {
		return nil, err
	}
	creds, err := u.Store.DeviceCredentialChoices(ctx, db.CredentialScope{All: true})
	if err != nil {
		return nil, err
	}
	tpls, err := u.Store.DeviceTemplateChoices(ctx)
	if err != nil {
		return nil, err
	}
	zones, err := u.Store.ListZones(ctx)
	if err != nil {
		return nil, err
	}
	tree := core.NewGroupTree(groups)
	scope := s.Scope()
	in := &devicesImportInput{allGroups: scope.All, groups: map[string]db.Group{}, inScope: map[int64]bool{},
		canUse:      s.Principal().CanUseCredential,
		credentials: map[string]int64{}, templates: map[string]map[string][]int64{}, zones: map[string]int64{}}
	for _, z := range zones {
		in.zones[devicesFold(z.Name)] = z.ID
	}
	for _, g := range groups {
		in.groups[devicesFold(g.Name)] = g
		in.inScope[g.ID] = tree.Covers(scope, g.ID)
	}
	for _, c := range creds {
		in.credentials[devicesFold(c.Name)] = c.ID
	}
	for _, t := range tpls {
		if in.templates[t.Platform] == nil {
			in.templates[t.Platform] = map[string][]int64{}
		}
		k := devicesFold(t.Name)
		in.templates[t.Platform][k] = append(in.templates[t.Platform][k], t.ID)
	}
	return in, nil
}

// devicesFold folds ASCII letters only, as the database's NOCASE names do.
func devicesFold(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// parse reads the file: a header row naming the columns, then one device
// per row. It returns the devices with the line each came from, or the
// problems of every row, or an error about the whole file.
func (in *devicesImportInput) parse(data []byte) ([]db.Device, []int, []devicesImportProblem, *devicesMessage) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return nil, nil, nil, &devicesMessage{Key: keyDevicesImportNotUTF8}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, nil, &devicesMessage{Key: keyDevicesImportEmpty}
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	// Spreadsheets set to a decimal comma save with semicolons.
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if bytes.IndexByte(first, ';') >= 0 && bytes.IndexByte(first, ',') < 0 {
		cr.Comma = ';'
	}
	head, err := cr.Read()
	if err != nil {
		return nil, nil, nil, devicesCSVError(err)
	}
	cols, msg := devicesHeader(head)
	if msg != nil {
		return nil, nil, nil, msg
	}
	var (
		devices  []db.Device
		lines    []int
		problems []devicesImportProblem
		seen     = map[string]int{}
	)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, nil, devicesCSVError(err)
		}
		line, _ := cr.FieldPos(0)
		if devicesBlankRecord(rec) {
			continue
		}
		if len(devices) >= devicesImportRows {
			return nil, nil, nil, &devicesMessage{Key: keyDevicesImportTooManyRows, Args: []any{devicesImportRows}}
		}
		if len(rec) != len(cols) {
			problems = append(problems, devicesImportProblem{Line: line, Key: keyDevicesImportFieldCount, Args: []any{len(rec), len(cols)}})
			devices, lines = append(devices, db.Device{}), append(lines, line)
			continue
		}
		row := map[string]string{}
		for i, c := range cols {
			row[c] = importer.Unguard(strings.TrimSpace(rec[i]))
		}
		d, rowProblems := in.device(row)
		for _, p := range rowProblems {
			p.Line = line
			problems = append(problems, p)
		}
		if d.Name != "" {
			k := devicesFold(d.Name)
			if prev, dup := seen[k]; dup {
				problems = append(problems, devicesImportProblem{Line: line, Column: "name", Key: keyDevicesImportDuplicate, Args: []any{d.Name, prev}})
			} else {
				seen[k] = line
			}
		}
		devices, lines = append(devices, d), append(lines, line)
	}
	if len(devices) == 0 {
		return nil, nil, nil, &devicesMessage{Key: keyDevicesImportNoRows}
	}
	return devices, lines, problems, nil
}

// devicesHeader maps the header row to column names: trimmed, any case,
// "Login method" for login_method. Unknown or repeated columns are
// refused (a typo must not silently drop a column), and so are missing
// required ones.
func devicesHeader(head []string) ([]string, *devicesMessage) {
	cols := make([]string, len(head))
	for i, h := range head {
		c := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(h)), " ", "_")
		switch {
		case !slices.Contains(importer.CSVColumns, c):
			return nil, &devicesMessage{Key: keyDevicesImportUnknownColumn, Args: []any{strings.TrimSpace(h), strings.Join(importer.CSVColumns, ", ")}}
		case slices.Contains(cols[:i], c):
			return nil, &devicesMessage{Key: keyDevicesImportRepeatedColumn, Args: []any{c}}
		}
		cols[i] = c
	}
	for _, c := range devicesRequiredColumns {
		if !slices.Contains(cols, c) {
			return nil, &devicesMessage{Key: keyDevicesImportMissingColumn, Args: []any{c}}
		}
	}
	return cols, nil
}

// devicesCSVError says where a file stops being CSV.
func devicesCSVError(err error) *devicesMessage {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &devicesMessage{Key: keyDevicesImportBadCSV, Args: []any{pe.Line}}
	}
	return &devicesMessage{Key: keyDevicesImportBadCSV, Args: []any{1}}
}

func devicesBlankRecord(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// device checks one row against the same rules as the form; a group,
// credential, template or zone is named, not numbered. An empty zone is
// the local one.
func (in *devicesImportInput) device(row map[string]string) (db.Device, []devicesImportProblem) {
	var problems []devicesImportProblem
	bad := func(col, key string, args ...any) {
		problems = append(problems, devicesImportProblem{Column: col, Key: key, Args: args})
	}
	d := inventory.NewDevice()
	d.Name, d.Host, d.Platform = row["name"], row["host"], row["platform"]
	if m := row["login_method"]; m != "" {
		d.LoginMethod = strings.ToLower(m)
	}
	d.Port = inventory.DefaultPort(d.LoginMethod)
	if d.Port == 0 {
		d.Port = inventory.DefaultPort(inventory.DefaultLoginMethod)
	}
	if p := row["port"]; p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			n = -1
		}
		d.Port = n
	}
	if e := row["encoding"]; e != "" {
		d.Encoding = strings.ToLower(e)
	}
	switch strings.ToLower(row["enabled"]) {
	case "", "true", "yes", "y", "1", "on":
	case "false", "no", "n", "0", "off":
		d.Enabled = false
	default:
		bad("enabled", keyDevicesImportEnabled)
	}
	if r := row["remarks"]; r != "" {
		d.Remarks = &r
	}
	for _, fe := range inventory.CheckDevice(&d) {
		// A file has no list to choose from: say what was written.
		switch fe.Field {
		case "platform":
			bad(fe.Field, keyDevicesImportPlatform, d.Platform)
		case "login_method":
			bad(fe.Field, keyDevicesImportLoginMethod, d.LoginMethod)
		case "encoding":
			bad(fe.Field, keyDevicesImportEncoding, d.Encoding)
		default:
			m := devicesFieldMessage(fe)
			bad(fe.Field, m.Key, m.Args...)
		}
	}

	switch name := row["group"]; {
	case name == "" && !in.allGroups:
		bad("group", keyDevicesErrGroupRequired)
	case name == "":
	default:
		g, ok := in.groups[devicesFold(name)]
		switch {
		case !ok:
			bad("group", keyDevicesImportNoGroup, name)
		case !in.inScope[g.ID]:
			bad("group", keyDevicesImportGroupOutside, name)
		default:
			d.GroupID = &g.ID
		}
	}
	if name := row["credential"]; name != "" {
		switch id, ok := in.credentials[devicesFold(name)]; {
		case !ok:
			bad("credential", keyDevicesImportNoCredential, name)
		case !in.canUse(id):
			bad("credential", keyDevicesImportCredentialUse, name)
		default:
			d.CredentialID = &id
		}
	}
	if name := row["zone"]; name != "" {
		if id, ok := in.zones[devicesFold(name)]; ok {
			d.ZoneID = id
		} else {
			bad("zone", keyDevicesImportNoZone, name)
		}
	}
	if name := row["template"]; name != "" {
		switch ids := in.templates[d.Platform][devicesFold(name)]; len(ids) {
		case 0:
			bad("template", keyDevicesImportNoTemplate, name, d.Platform)
		case 1:
			d.TemplateID = &ids[0]
		default:
			bad("template", keyDevicesImportAmbiguousTemplate, len(ids), d.Platform, name)
		}
	}
	return d, problems
}
