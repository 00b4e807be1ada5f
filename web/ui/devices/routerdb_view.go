package devices

import (
	"fmt"
	"strconv"
	"strings"

	"backupd/app/importer"
	"backupd/db"
)

// What the router.db import page shows of a plan: the file's layout as
// read, an Oxidized configuration's mapping, and the plan's lines.

// devicesRouterDBLayout is the delimiter and columns a router.db was read
// with, shown above its lines, with a note (a message key) and the map
// the note names.
type devicesRouterDBLayout struct {
	Delimiter, Columns string
	NoteKey, NoteMap   string
}

// devicesRouterDBLayoutOf describes how parsed was read; defaultMap says
// that an Oxidized file was read with the default column map.
func devicesRouterDBLayoutOf(parsed *importer.Parsed, defaultMap bool) *devicesRouterDBLayout {
	l := &devicesRouterDBLayout{Delimiter: strconv.Quote(parsed.Delimiter)}
	switch parsed.Format {
	case importer.Oxidized:
		l.Columns = parsed.Map.String()
		if defaultMap {
			l.NoteKey, l.NoteMap = keyDevicesRouterDBLayoutDefault, importer.LegacyMap().String()
		}
	case importer.Rancid:
		l.Columns, l.NoteKey = "name;type;state[;comment]", keyDevicesRouterDBLayoutRancid3
		if parsed.Delimiter == ":" {
			l.Columns, l.NoteKey = "name:type:state[:comment]", keyDevicesRouterDBLayoutRancid2
		}
	}
	return l
}

// devicesRouterDBOxidized shows how an Oxidized configuration is read:
// the importer's OxidizedMapping with message keys for its words. Logins
// appear as the fields a level sets, never their values.
type devicesRouterDBOxidized struct {
	DelimiterKey, Delimiter string
	Columns                 string
	Ignored                 []string
	Global                  []string // message keys of the fields set
	Model, Input            string
	Levels                  []devicesRouterDBLevel
	ModelMap, GroupMap      []string
}

type devicesRouterDBLevel struct {
	Key    string
	Args   []any
	Fields []string // message keys
}

var devicesOxidizedFields = map[string]string{
	"username": keyDevicesOxidizedFieldUsername, "password": keyDevicesOxidizedFieldPassword, "enable": keyDevicesOxidizedFieldEnablePasword,
}

func devicesOxidizedView(m importer.OxidizedMapping) *devicesRouterDBOxidized {
	keys := func(fields []string) []string {
		out := make([]string, len(fields))
		for i, f := range fields {
			out[i] = devicesOxidizedFields[f]
		}
		return out
	}
	v := &devicesRouterDBOxidized{DelimiterKey: keyDevicesOxidizedDelimiter, Delimiter: m.Delimiter, Columns: m.Columns,
		Ignored: m.Ignored, Global: keys(m.Global), Model: m.Model, Input: m.Input, ModelMap: m.ModelMap, GroupMap: m.GroupMap}
	if m.Regexp {
		v.DelimiterKey = keyDevicesOxidizedDelimiterRegexp
	}
	for _, l := range m.Levels {
		lv := devicesRouterDBLevel{Fields: keys(l.Fields)}
		switch l.Kind {
		case "model":
			lv.Key, lv.Args = keyDevicesOxidizedLevelModel, []any{l.Model}
		case "group":
			lv.Key, lv.Args = keyDevicesOxidizedLevelGroup, []any{l.Group}
		default:
			lv.Key, lv.Args = keyDevicesOxidizedLevelGroupModel, []any{l.Group, l.Model}
		}
		v.Levels = append(v.Levels, lv)
	}
	return v
}

// devicesRouterDBLine is one line of the file: its action (a message
// key) and the device, or why it is skipped (Key, Args).
type devicesRouterDBLine struct {
	Line   int
	Name   string
	Action string
	Key    string
	Args   []any
}

// devicesRouterDBReasons and devicesRouterDBActions are the messages of
// the importer's reasons and actions.
var (
	devicesRouterDBReasons = map[string]string{
		importer.ReasonBlankName: keyDevicesRouterDBBlankName, importer.ReasonNoModel: keyDevicesRouterDBNoModel,
		importer.ReasonUnknownModel: keyDevicesRouterDBUnknownModel, importer.ReasonBadHost: keyDevicesRouterDBBadHost,
		importer.ReasonIPv6Delimiter: keyDevicesRouterDBIPv6, importer.ReasonDuplicate: keyDevicesRouterDBDuplicate,
		importer.ReasonNotUp: keyDevicesRouterDBNotUp, importer.ReasonFieldCount: keyDevicesRouterDBFieldCount,
		importer.ReasonInvalid: keyDevicesRouterDBInvalid, importer.ReasonBadGroup: keyDevicesRouterDBBadGroup,
		importer.ReasonCredentialUse: keyDevicesRouterDBCredentialUse, importer.ReasonOtherDelimiter: keyDevicesRouterDBOtherDelimiter,
		importer.ReasonControl: keyDevicesRouterDBControl, importer.ReasonBadIPv4: keyDevicesRouterDBBadIPv4,
		importer.ReasonRancidColon: keyDevicesRouterDBRancidColon,
	}
	devicesRouterDBShifted = map[string]string{
		importer.LooksIP: keyDevicesRouterDBShiftedIP, importer.LooksHash: keyDevicesRouterDBShiftedHash,
		importer.LooksSecret: keyDevicesRouterDBShiftedSecret, importer.LooksPlatform: keyDevicesRouterDBShiftedPlatform,
	}
	devicesRouterDBActions = map[string]string{
		importer.Create: keyDevicesRouterDBCreate, importer.Update: keyDevicesRouterDBUpdate, importer.Unchanged: keyDevicesRouterDBUnchanged,
	}
)

// devicesRouterDBLines lists the plan's lines in file order: the skipped
// ones first, since they need attention, then the others; at most
// devicesRouterDBShown, with the count of those left out.
func devicesRouterDBLines(plan *importer.Plan) ([]devicesRouterDBLine, int) {
	var out []devicesRouterDBLine
	total := len(plan.Skipped) + len(plan.Rows)
	for _, s := range plan.Skipped {
		if len(out) == devicesRouterDBShown {
			break
		}
		key, args := devicesRouterDBReasons[s.Code], s.Args
		switch {
		case (s.Code == importer.ReasonInvalid || s.Code == importer.ReasonCredentialUse) && len(args) > 0:
			args = []any{args[0]}
		case s.Code == importer.ReasonShifted && len(args) == 3:
			key, args = devicesRouterDBShifted[fmt.Sprint(args[2])], args[:2]
		case s.Code == importer.ReasonFieldCount && len(args) == 3:
			if n, ok := args[2].(int); ok && n > 0 {
				key = keyDevicesRouterDBFieldCountBytes
			} else {
				args = args[:2]
			}
		}
		out = append(out, devicesRouterDBLine{Line: s.Line, Name: s.Name, Action: keyDevicesRouterDBSkip, Key: key, Args: args})
	}
	for _, row := range plan.Rows {
		if len(out) == devicesRouterDBShown {
			break
		}
		l := devicesRouterDBLine{Line: row.Line, Name: row.Device.Name, Action: devicesRouterDBActions[row.Action]}
		switch row.Action {
		case importer.Create:
			l.Key, l.Args = keyDevicesRouterDBCreateDetail, []any{row.Device.Platform, row.Device.Host}
			if row.Device.ZoneID != db.LocalZone {
				l.Key, l.Args = keyDevicesRouterDBCreateZone, []any{row.Device.Platform, row.Device.Host, row.Zone}
			}
		case importer.Update:
			l.Key, l.Args = keyDevicesRouterDBUpdateDetail, []any{strings.Join(row.Changes, ", ")}
		}
		out = append(out, l)
	}
	return out, total - len(out)
}
