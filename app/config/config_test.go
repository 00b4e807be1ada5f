package config

import (
	"strings"
	"testing"
)

func TestValidateStore(t *testing.T) {
	for _, tc := range []struct {
		db, want string // want "" is valid
	}{
		{"", ""},
		{"postgres://backupd:pw@db.example:5432/backupd?sslmode=require", ""},
		{"postgresql://backupd@/backupd?host=/run/postgresql", ""},
		{"postgres://backupd:s3cret@db.example:5432", "names no database"},
		{"postgres://backupd:s3cret@db.example:5432/", "names no database"},
		{"mysql://root:s3cret@db/backupd", `it names "mysql://"`},
		{"./data/backupd.db", "it is not a URL"},
		{"postgres://backupd:s3cret@db.example:99999999999/x%zz", "cannot be read"},
	} {
		c := Defaults()
		c.DB = tc.db
		err := c.ValidateStore()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("--db %q: %v; want it accepted", tc.db, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("--db %q: %v; want an error saying %q", tc.db, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("--db %q: the error repeats the password: %v", tc.db, err)
		}
		if err2 := c.Validate(); (err == nil) != (err2 == nil) {
			t.Errorf("--db %q: Validate says %v, ValidateStore %v", tc.db, err2, err)
		}
	}
	c := Defaults()
	c.DataDir = " "
	if err := c.ValidateStore(); err == nil {
		t.Error("an empty --data was accepted")
	}
}
