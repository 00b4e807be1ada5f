package gitmirror

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"backupd/db"
)

// maxNameBytes bounds one path element, well under the 255 bytes most
// filesystems allow, leaving room for a collision suffix.
const maxNameBytes = 200

// SafeName turns a device or group name into one path element: letters
// and digits of any script, '.', '-' and '_' are kept, everything else
// (slashes, spaces, control characters) becomes '_'; a leading '.' (".",
// "..", ".git") becomes '_', and the result is never empty. '@' never
// appears in a safe name: it marks collision suffixes.
func SafeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len()+utf8.RuneLen(r) > maxNameBytes {
			break
		}
		switch {
		case r == '.' || r == '-' || r == '_':
			b.WriteRune(r)
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case r >= utf8.RuneSelf && r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" {
		return "_"
	}
	if s[0] == '.' {
		s = "_" + s[1:]
	}
	return s
}

// Layout maps each device to its file in the mirror (slash-separated):
// its safe name, under a folder per group (and parent group) when groups
// is set. Names that collide (ignoring case, so a clone on macOS or
// Windows works too), or that a group folder already takes, get the
// device's id as a suffix ("core@12"); the device with the lowest id keeps
// the plain name, so the layout is the same whatever order the devices
// come in.
func Layout(versions []db.MirrorVersion, groups map[int64][]string, useGroups bool) map[int64]string {
	type dev struct {
		id   int64
		base string
	}
	devs := make([]dev, 0, len(versions))
	seen := map[int64]bool{}
	dirs := map[string]bool{}
	for _, v := range versions {
		if seen[v.DeviceID] {
			continue
		}
		seen[v.DeviceID] = true
		base := SafeName(v.Name)
		if useGroups && v.GroupID != nil {
			var parts []string
			for _, g := range groups[*v.GroupID] {
				parts = append(parts, SafeName(g))
				dirs[strings.ToLower(strings.Join(parts, "/"))] = true
			}
			if len(parts) > 0 {
				base = strings.Join(parts, "/") + "/" + base
			}
		}
		devs = append(devs, dev{v.DeviceID, base})
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].id < devs[j].id })
	used := map[string]bool{}
	out := make(map[int64]string, len(devs))
	for _, d := range devs {
		p := d.base
		if key := strings.ToLower(p); used[key] || dirs[key] {
			p += "@" + strconv.FormatInt(d.id, 10)
		}
		used[strings.ToLower(p)] = true
		out[d.id] = p
	}
	return out
}
