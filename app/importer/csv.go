package importer

import (
	"backupd/db"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CSV is backupd's own device list, as the devices page exports it.
const CSV = "csv"

// CSVColumns are the columns of backupd's CSV, in the export's order.
// An import takes them in any order; name, host and platform are
// required. Groups, credentials and zones are named; a credential or a
// zone must exist (a CSV holds no secret), a group is created when
// missing. zone came last, after the others, so that older files keep
// their order.
var CSVColumns = []string{"name", "host", "port", "platform", "login_method", "group", "credential", "template", "encoding", "enabled", "remarks", "zone"}

// More reasons, of CSV lines.
const (
	ReasonBadPort      = "bad_port"
	ReasonBadEnabled   = "bad_enabled"
	ReasonNoCredential = "no_credential"
	ReasonNoTemplate   = "no_template"
	ReasonNoZone       = "no_zone"
	// ReasonCredentialUse skips a line that would use a credential the
	// importing user may not use (BuildFor).
	ReasonCredentialUse = "credential_use"
)

// ParseCSV reads backupd's CSV (comma or, as spreadsheets set to a
// decimal comma write it, semicolon separated; a byte order mark and
// CRLF are fine).
func ParseCSV(data []byte) (*Parsed, error) {
	if len(data) > MaxBytes {
		return nil, &FileError{fmt.Sprintf("the file is larger than %d MiB", MaxBytes>>20)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FileError{"the file is empty"}
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if bytes.IndexByte(first, ';') >= 0 && bytes.IndexByte(first, ',') < 0 {
		cr.Comma = ';'
	}
	head, err := cr.Read()
	if err != nil {
		return nil, csvError(err)
	}
	cols := make([]string, len(head))
	for i, h := range head {
		c := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(h)), " ", "_")
		switch {
		case !contains(CSVColumns, c):
			return nil, &FileError{fmt.Sprintf("the header has an unknown column %q; known: %s", strings.TrimSpace(h), strings.Join(CSVColumns, ", "))}
		case contains(cols[:i], c):
			return nil, &FileError{fmt.Sprintf("the header names the column %s twice", c)}
		}
		cols[i] = c
	}
	for _, need := range []string{"name", "host", "platform"} {
		if !contains(cols, need) {
			return nil, &FileError{"the header lacks the required column " + need}
		}
	}
	p := &Parsed{Format: CSV, Delimiter: string(cr.Comma)}
	res, seen := resolver{}, map[string]int{}
	offset := cr.InputOffset()
	for n := 0; n < MaxLines; n++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return p, nil
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := cr.FieldPos(0)
		size := cr.InputOffset() - offset
		offset = cr.InputOffset()
		row := map[string]string{}
		blank := true
		for i, c := range cols {
			if i < len(rec) {
				row[c] = Unguard(strings.TrimSpace(rec[i]))
				blank = blank && row[c] == ""
			}
		}
		if blank {
			continue
		}
		skip := func(code string, args ...any) {
			p.Skipped = append(p.Skipped, newSkip(line, row["name"], code, args...))
		}
		if len(rec) != len(cols) {
			// Not the header's columns: not shown.
			p.Skipped = append(p.Skipped, newSkip(line, "", ReasonFieldCount, len(rec), len(cols), int(size)))
			continue
		}
		e := Entry{Line: line, Name: row["name"], Host: row["host"], Model: row["platform"], Group: row["group"],
			LoginMethod: strings.ToLower(row["login_method"]), Credential: row["credential"], Template: row["template"],
			Encoding: strings.ToLower(row["encoding"]), Zone: row["zone"]}
		if v := row["port"]; v != "" {
			port, err := strconv.Atoi(v)
			if err != nil || port < 1 || port > 65535 {
				skip(ReasonBadPort, v)
				continue
			}
			e.Port = port
		}
		switch strings.ToLower(row["enabled"]) {
		case "":
		case "true", "yes", "y", "1", "on":
			t := true
			e.Enabled = &t
		case "false", "no", "n", "0", "off":
			f := false
			e.Enabled = &f
		default:
			skip(ReasonBadEnabled, row["enabled"])
			continue
		}
		if v, ok := row["remarks"]; ok {
			e.Remarks = &v
		}
		p.add(res, seen, e)
	}
	return nil, &FileError{fmt.Sprintf("the file has more than %d rows", MaxLines)}
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &FileError{fmt.Sprintf("not valid CSV at line %d: %v", pe.Line, pe.Err)}
	}
	return &FileError{"not valid CSV: " + err.Error()}
}

// Spreadsheets run a cell that starts with one of these as a formula: an
// export puts an apostrophe before such a cell, an import takes it off.
const formulaStart = "=+-@\t\r"

// Guard protects a CSV cell from being run as a formula.
func Guard(s string) string {
	if s != "" && strings.ContainsRune(formulaStart, rune(s[0])) {
		return "'" + s
	}
	return s
}

// Unguard undoes Guard.
func Unguard(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.ContainsRune(formulaStart, rune(s[1])) {
		return s[1:]
	}
	return s
}

// CSVNames turns a device's group, credential, template and zone ids
// into the names the CSV carries.
type CSVNames struct {
	groups, credentials, templates, zones map[int64]string
}

// LoadCSVNames reads the names of every group, credential, template and
// zone.
func LoadCSVNames(ctx context.Context, store *db.Store) (*CSVNames, error) {
	n := &CSVNames{groups: map[int64]string{}, credentials: map[int64]string{}, templates: map[int64]string{}, zones: map[int64]string{}}
	zones, err := store.ListZones(ctx)
	if err != nil {
		return nil, err
	}
	for _, z := range zones {
		n.zones[z.ID] = z.Name
	}
	groups, err := store.AllGroups(ctx)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		n.groups[g.ID] = g.Name
	}
	creds, err := store.DeviceCredentialChoices(ctx, db.CredentialScope{All: true})
	if err != nil {
		return nil, err
	}
	for _, c := range creds {
		n.credentials[c.ID] = c.Name
	}
	tpls, err := store.DeviceTemplateChoices(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range tpls {
		n.templates[t.ID] = t.Name
	}
	return n, nil
}

// Record is a device as a CSV row in CSVColumns' order: names (the zone's
// always, "local" too, so that a re-import puts it back), never a secret,
// every cell guarded against spreadsheet formulas.
func (n *CSVNames) Record(d db.Device) []string {
	ref := func(m map[int64]string, id *int64) string {
		if id == nil {
			return ""
		}
		return m[*id]
	}
	remarks := ""
	if d.Remarks != nil {
		remarks = *d.Remarks
	}
	rec := []string{d.Name, d.Host, strconv.Itoa(d.Port), d.Platform, d.LoginMethod,
		ref(n.groups, d.GroupID), ref(n.credentials, d.CredentialID), ref(n.templates, d.TemplateID),
		d.Encoding, strconv.FormatBool(d.Enabled), remarks, n.zones[max(d.ZoneID, db.LocalZone)]}
	for i := range rec {
		rec[i] = Guard(rec[i])
	}
	return rec
}
