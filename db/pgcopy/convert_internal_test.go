package pgcopy

import (
	"bytes"
	"testing"
	"time"
)

// What SQLite hands back is converted for the PostgreSQL column it goes
// to, and a value no column of that type could hold is an error, never a
// guess.
func TestConvertForPostgres(t *testing.T) {
	at := time.Date(2024, 5, 6, 7, 8, 9, 0, time.FixedZone("CEST", 2*3600))
	for _, tc := range []struct {
		v    any
		typ  string
		want any
		size int
	}{
		{nil, "text", nil, 0},
		{[]byte("blob"), "bytea", []byte("blob"), 4},
		{"text", "bytea", []byte("text"), 4},
		{int64(7), "int8", int64(7), 8},
		{true, "int4", int64(1), 8},
		{false, "int2", int64(0), 8},
		{float64(3), "int8", int64(3), 8},
		{"42", "int8", int64(42), 8},
		{[]byte("43"), "int8", int64(43), 8},
		{"name", "citext", "name", 4},
		{[]byte("raw"), "text", "raw", 3},
		{int64(5), "text", "5", 8},
		{1.5, "text", "1.5", 8},
		{true, "text", "true", 8},
		{at, "text", "2024-05-06T05:08:09", 8},
	} {
		got, size, err := convertForPostgres(tc.v, tc.typ)
		if err != nil {
			t.Errorf("%T %v into %s: %v", tc.v, tc.v, tc.typ, err)
			continue
		}
		if b, ok := tc.want.([]byte); ok {
			if g, ok := got.([]byte); !ok || !bytes.Equal(g, b) {
				t.Errorf("%T %v into %s = %#v, want %#v", tc.v, tc.v, tc.typ, got, tc.want)
			}
		} else if got != tc.want {
			t.Errorf("%T %v into %s = %#v, want %#v", tc.v, tc.v, tc.typ, got, tc.want)
		}
		if size != tc.size {
			t.Errorf("%T %v into %s: size %d, want %d", tc.v, tc.v, tc.typ, size, tc.size)
		}
	}
	for _, tc := range []struct {
		v   any
		typ string
	}{
		{"forty-two", "int8"},
		{int64(1), "bytea"},
		{1.5, "bytea"},
		{at, "int8"},
	} {
		if got, _, err := convertForPostgres(tc.v, tc.typ); err == nil {
			t.Errorf("%T %v into %s = %#v, want an error", tc.v, tc.v, tc.typ, got)
		}
	}
}
