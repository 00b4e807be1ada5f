package inventory

import (
	"context"
	"strings"

	"backupd/db"
)

// MaxTargetDevices bounds a list of devices named one by one as the
// target of a schedule or a notification rule; larger fleets are
// targeted by group.
const MaxTargetDevices = 5000

// TargetNames splits a list of device names as typed into a form — one
// a line, or separated by commas — into names, blanks and repeats (in
// any case) left out.
func TargetNames(text string) []string {
	var names []string
	seen := map[string]bool{}
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' }) {
		name := strings.TrimSpace(line)
		if name == "" || seen[strings.ToLower(name)] {
			continue
		}
		seen[strings.ToLower(name)] = true
		names = append(names, name)
	}
	return names
}

// DevicesNamed finds the devices of scope that names name (in any case,
// as names are unique): their ids, by name, and the names no device of
// scope has, in the order given. A device outside scope is as missing as
// one that does not exist.
func DevicesNamed(ctx context.Context, store *db.Store, scope db.Scope, names []string) (ids []int64, missing []string, err error) {
	refs, err := store.ScheduleDevicesByName(ctx, scope, names)
	if err != nil {
		return nil, nil, err
	}
	found := map[string]bool{}
	ids = make([]int64, len(refs))
	for i, d := range refs {
		ids[i] = d.ID
		found[strings.ToLower(d.Name)] = true
	}
	for _, n := range names {
		if !found[strings.ToLower(n)] {
			missing = append(missing, n)
		}
	}
	return ids, missing, nil
}
