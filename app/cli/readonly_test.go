package cli_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backupd/db"
)

// tree lists everything under root: each path with its kind, size and a
// hash of its content, so that a test sees any file created, removed or
// changed.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out = append(out, rel+"/")
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %x", rel, len(b), sha256.Sum256(b)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The commands that only look — platform list and export, the import dry
// runs — create nothing: not in a data directory that does not exist,
// not in an empty one, not in the working directory, and not in the
// temporary directory (a dry run without a store plans against an empty
// one made there and removed). Before issue 24 each of them created the
// database, secret.key and an admin user.
func TestReadOnlyCommandsCreateNothing(t *testing.T) {
	files := t.TempDir()
	oxidized := filepath.Join(files, "router.db")
	rancid := filepath.Join(files, "rancid.db")
	csv := filepath.Join(files, "devices.csv")
	for p, text := range map[string]string{
		oxidized: "core-1:ios:dc1:admin:s3cret\nedge-1:ios-xr7\n",
		rancid:   "rtr-1.example.net;ios-xr;up;\nsw-1.example.net;edgemax;up;\n",
		csv:      "name,host,platform\nsw-2,192.0.2.2,cisco_nxos\nsw-3,192.0.2.3,ios-sb\n",
	} {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, empty := range []bool{false, true} {
		t.Run(map[bool]string{false: "missing data directory", true: "empty data directory"}[empty], func(t *testing.T) {
			base, cwd, tmp := t.TempDir(), t.TempDir(), t.TempDir()
			data := filepath.Join(base, "data")
			if empty {
				if err := os.Mkdir(data, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			c := call{dir: cwd, env: []string{"TMPDIR=" + tmp}}
			before := [][]string{tree(t, base), tree(t, cwd), tree(t, tmp)}

			r := mustRun(t, c, "platform", "list", "--data", data)
			if !strings.Contains(r.stdout, "cisco_xr") || !strings.Contains(r.stderr, "no custom platforms") {
				t.Errorf("platform list:\n%s", r)
			}
			r = mustRun(t, c, "platform", "list", "--aliases", "--data", data)
			if !strings.Contains(r.stdout, "ios-xr7\tcisco_xr\n") {
				t.Errorf("platform list --aliases:\n%s", r)
			}
			r = mustRun(t, c, "platform", "export", "cisco_ios", "--data", data)
			if !strings.Contains(r.stdout, `"id": "custom_cisco_ios"`) {
				t.Errorf("platform export:\n%s", r)
			}
			mustFail(t, c, []string{`no platform with ID "custom_acme_os"`, "no backupd store yet"}, "platform", "export", "custom_acme_os", "--data", data)

			for _, args := range [][]string{
				{"import", "oxidized", oxidized, "--map", "name=0,model=1,group=2,username=3,password=4"},
				{"import", "rancid", rancid},
				{"import", "csv", csv},
			} {
				r = mustRun(t, c, append(args, "--dry-run", "--data", data)...)
				if strings.Count(r.stdout, "would create") < 2 || !strings.Contains(r.stderr, "nothing was created") {
					t.Errorf("%s:\n%s", strings.Join(args, " "), r)
				}
				if strings.Contains(r.stderr, "Created user") {
					t.Errorf("%s bootstrapped an admin:\n%s", strings.Join(args, " "), r)
				}
			}
			mustFail(t, c, []string{"SITE-B"}, "import", "csv", csv, "--zone", "SITE-B", "--dry-run", "--data", data)

			after := [][]string{tree(t, base), tree(t, cwd), tree(t, tmp)}
			for i, where := range []string{"data directory's parent", "working directory", "temporary directory"} {
				if !slices.Equal(before[i], after[i]) {
					t.Errorf("the %s changed:\nbefore %q\nafter  %q", where, before[i], after[i])
				}
			}
		})
	}
}

// On a store that exists (migrated, never started: no admin, no key) a
// dry run and a listing read it and leave every byte as it was: no
// admin user, no secret.key, no migration.
func TestDryRunLeavesExistingStoreAlone(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	mustRun(t, call{}, "migrate", "--data", data)
	routerDB := writeFile(t, "router.db", "core-1:ios:dc1:admin:s3cret\n")
	before := tree(t, data)
	r := mustRun(t, call{}, "import", "oxidized", routerDB, "--map", "name=0,model=1,group=2,username=3,password=4", "--dry-run", "--data", data)
	if !strings.Contains(r.stdout, "line 1: would create core-1: cisco_ios") || strings.Contains(r.stderr, "Created user") {
		t.Errorf("dry run:\n%s", r)
	}
	mustRun(t, call{}, "platform", "list", "--data", data)
	if after := tree(t, data); !slices.Equal(before, after) {
		t.Errorf("the data directory changed:\nbefore %q\nafter  %q", before, after)
	}
	if _, err := os.Stat(filepath.Join(data, "secret.key")); err == nil {
		t.Error("secret.key was created")
	}
	if _, err := os.Stat(filepath.Join(data, db.FileName)); err != nil {
		t.Fatal(err)
	}
}

// A dry run never makes up a key for a store that holds sealed logins:
// without DATA/secret.key it says what is missing instead of planning
// against credentials it cannot read.
func TestDryRunNeedsTheKeyOfStoredLogins(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	routerDB := writeFile(t, "router.db", "core-1:ios:dc1:admin:s3cret\n")
	mapping := []string{"--map", "name=0,model=1,group=2,username=3,password=4", "--data", data}
	mustRun(t, call{}, append([]string{"import", "oxidized", routerDB}, mapping...)...)
	key := filepath.Join(data, "secret.key")
	if err := os.Rename(key, key+".away"); err != nil {
		t.Fatal(err)
	}
	mustFail(t, call{}, []string{"1 credential(s) sealed", "secret.key"}, append([]string{"import", "oxidized", routerDB, "--dry-run"}, mapping...)...)
	if _, err := os.Stat(key); err == nil {
		t.Error("the dry run created a new secret.key")
	}
	if err := os.Rename(key+".away", key); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, call{}, append([]string{"import", "oxidized", routerDB, "--dry-run"}, mapping...)...)
	if !strings.Contains(r.stdout, "unchanged core-1") {
		t.Errorf("dry run with the key:\n%s", r)
	}
}
