package core

import (
	"time"

	"backupd/app/config"
	"backupd/db"
)

// TimeText shows t in the interface's time zone, to the minute, as
// $.Time does; "—" for the zero time.
func (u *UI) TimeText(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(u.Location).Format("2006-01-02 15:04")
}

// DefaultZone is the IANA name of the zone the interface shows times in,
// for what keeps a zone of its own (a schedule): "Local" names no zone a
// schedule can keep, and config knows how to name the host's.
func (u *UI) DefaultZone() string {
	if name := u.Location.String(); name != "" && name != "Local" {
		if _, err := time.LoadLocation(name); err == nil {
			return name
		}
	}
	return config.Config{}.ZoneName()
}

// StoredTimeText shows a time as the store keeps it (db.TimeFormat) in
// the interface's zone; "" for none, the text as it is when it does not
// parse.
func (u *UI) StoredTimeText(s *string) string {
	if s == nil || *s == "" {
		return ""
	}
	t, err := time.Parse(db.TimeFormat, *s)
	if err != nil {
		return *s
	}
	return u.TimeText(t)
}

// StoredISO is a time as the store keeps it, for a <time datetime>; ""
// for none.
func StoredISO(s *string) string {
	if s == nil {
		return ""
	}
	t, err := time.Parse(db.TimeFormat, *s)
	if err != nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
