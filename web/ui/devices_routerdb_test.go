package ui_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backupd/app/auth"
	"backupd/app/secret"
)

// uploadRouterDB posts the router.db form with its files; csrf "" is the
// page's token.
func (b *browser) uploadRouterDB(fields map[string]string, files map[string]string, csrf string) page {
	b.e.t.Helper()
	if csrf == "" {
		csrf = b.csrf
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", csrf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	for field, content := range files {
		fw, err := mw.CreateFormFile(field, field+".txt")
		if err != nil {
			b.e.t.Fatal(err)
		}
		_, _ = io.WriteString(fw, content)
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, b.e.srv.URL+"/devices/import/router-db", &body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", b.e.srv.URL)
	return b.do(req)
}

func TestDevicesImportRouterDB(t *testing.T) {
	e := newEnv(t)
	e.createUser("op", "operator-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("op", "operator-password-1")
	p := b.get("/devices/import")
	expectBody(t, "import page", p, `action="/devices/import/router-db#routerdb"`, `name="cloginrc"`, "Import from Oxidized or RANCID")

	routerDB := "# Oxidized\r\ncore-1:ios:dc1:admin:s3cret\r\ncore-2:nxos:dc1:admin:s3cret\r\nodd:nosuchmodel\r\n2001:db8::1:ios\r\n"
	oxidized := map[string]string{"format": "oxidized", "delimiter": ":", "map": "name=0,model=1,group=2,username=3,password=4"}
	dry := map[string]string{"dry_run": "1"}
	for k, v := range oxidized {
		dry[k] = v
	}

	t.Run("a wrong CSRF token changes nothing", func(t *testing.T) {
		p := b.uploadRouterDB(oxidized, map[string]string{"file": routerDB}, "forged")
		if p.status != http.StatusForbidden {
			t.Fatalf("forged token: %d", p.status)
		}
		if n := devicesCount(t, e); n != 0 {
			t.Fatalf("%d devices after a forged upload", n)
		}
	})

	t.Run("dry run", func(t *testing.T) {
		p := b.uploadRouterDB(dry, map[string]string{"file": routerDB}, "")
		expect(t, "dry run", p, http.StatusOK, "")
		expectBody(t, "dry run", p, "Dry run, nothing changed: 2 would be created, 0 updated, 0 unchanged, 2 lines skipped.",
			"<code>dc1</code>", "<code>Imported oxidized 1</code>", "Unknown model “nosuchmodel”.",
			"The line holds an IPv6 address, which contains the delimiter “:”", "cisco_nxos at core-2")
		if strings.Contains(p.body, "s3cret") {
			t.Error("the page shows a password")
		}
		if n := devicesCount(t, e); n != 0 {
			t.Fatalf("the dry run created %d devices", n)
		}
	})

	t.Run("import, then again", func(t *testing.T) {
		p := b.uploadRouterDB(oxidized, map[string]string{"file": routerDB}, "")
		expect(t, "import", p, http.StatusOK, "")
		expectBody(t, "import", p, "Imported: 2 created, 0 updated, 0 unchanged, 2 lines skipped.")
		c1 := devicesByName(t, e, "core-1")
		if c1.Platform != "cisco_ios" || c1.GroupID == nil || c1.CredentialID == nil {
			t.Fatalf("core-1 = %+v", c1)
		}
		cred, err := e.store.GetCredential(t.Context(), *c1.CredentialID)
		if err != nil {
			t.Fatal(err)
		}
		if pw, err := e.sealer.Open(cred.Password, secret.PurposePassword); err != nil || pw != "s3cret" {
			t.Fatalf("the credential's password opens to %q (%v)", pw, err)
		}
		p = b.uploadRouterDB(oxidized, map[string]string{"file": routerDB}, "")
		expectBody(t, "again", p, "Imported: 0 created, 0 updated, 2 unchanged, 2 lines skipped.")
		if n := devicesCount(t, e); n != 2 {
			t.Fatalf("%d devices after importing twice, want 2", n)
		}
		var imports int
		for _, a := range e.auditEntries() {
			if a.Action == "device.import" {
				imports++
				if a.Details["format"] != "oxidized" || strings.Contains(a.Username, "s3cret") {
					t.Errorf("audit entry %+v", a)
				}
			}
		}
		if imports != 1 {
			t.Errorf("%d audit entries for imports, want 1 (the unchanged one writes none)", imports)
		}
	})

	t.Run("RANCID in Chinese", func(t *testing.T) {
		b.header.Set("Accept-Language", "zh-CN")
		defer b.header.Del("Accept-Language")
		p := b.uploadRouterDB(map[string]string{"format": "rancid", "group": "networking"},
			map[string]string{"file": "r1;juniper;up\nr2;cisco;down\n", "cloginrc": "add user * rancid\nadd password * pw\n"}, "")
		expect(t, "rancid", p, http.StatusOK, "")
		expectBody(t, "rancid", p, "已导入：创建 1 个，更新 0 个，无变化 0 个，跳过 1 行。", "状态为“down”")
		if d := devicesByName(t, e, "r1"); d.Platform != "juniper_junos" || d.GroupID == nil || d.CredentialID == nil {
			t.Errorf("r1 = %+v", d)
		}
	})

	t.Run("nothing importable", func(t *testing.T) {
		p := b.uploadRouterDB(oxidized, map[string]string{"file": "# nothing\nx:nosuch\n"}, "")
		expect(t, "nothing", p, http.StatusUnprocessableEntity, "")
		expectBody(t, "nothing", p, "No line of the file can be imported.", "Unknown model “nosuch”.")
		p = b.uploadRouterDB(map[string]string{"format": "oxidized", "map": "name=0"}, map[string]string{"file": routerDB}, "")
		expect(t, "bad map", p, http.StatusUnprocessableEntity, "")
		expectBody(t, "bad map", p, "The file cannot be imported: column map: the model column is required.")
	})

	t.Run("into a zone", func(t *testing.T) {
		if strings.Contains(b.get("/devices/import").body, `id="routerdb-zone"`) {
			t.Error("a zone choice with only the local zone")
		}
		zone, err := e.store.CreateZone(t.Context(), "Site-A")
		if err != nil {
			t.Fatal(err)
		}
		expectBody(t, "zone choice", b.get("/devices/import"), `<select id="routerdb-zone" name="zone"`, `<option value="Site-A">Site-A</option>`)
		before := devicesCount(t, e)
		withZone := func(zone string) map[string]string {
			f := map[string]string{"zone": zone}
			for k, v := range oxidized {
				f[k] = v
			}
			return f
		}
		p := b.uploadRouterDB(withZone("Nowhere"), map[string]string{"file": "z-1:ios\n"}, "")
		expect(t, "unknown zone", p, http.StatusUnprocessableEntity, "")
		expectBody(t, "unknown zone", p, "There is no zone named “Nowhere”.", "Nothing was imported.")
		if n := devicesCount(t, e); n != before {
			t.Fatalf("%d devices after an unknown zone, want %d", n, before)
		}
		p = b.uploadRouterDB(withZone("Site-A"), map[string]string{"file": "z-1:ios\ncore-1:ios:dc1:admin:s3cret\n"}, "")
		expect(t, "zone import", p, http.StatusOK, "")
		expectBody(t, "zone import", p, "Imported: 1 created, 1 updated, 0 unchanged, 0 lines skipped.", "cisco_ios at z-1, zone Site-A", "zone")
		for _, name := range []string{"z-1", "core-1"} {
			if d := devicesByName(t, e, name); d.ZoneID != zone.ID {
				t.Errorf("%s is in zone %d, want %d", name, d.ZoneID, zone.ID)
			}
		}
		// Without a zone, existing devices stay in theirs.
		p = b.uploadRouterDB(oxidized, map[string]string{"file": "z-1:ios\n"}, "")
		expectBody(t, "no zone", p, "Imported: 0 created, 0 updated, 1 unchanged")
		var zoned bool
		for _, a := range e.auditEntries() {
			zoned = zoned || a.Action == "device.import" && a.Details["zone"] == "Site-A"
		}
		if !zoned {
			t.Error("no audit entry names the zone")
		}
	})

	t.Run("refused without the permission or the whole tree", func(t *testing.T) {
		before := devicesCount(t, e)
		e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
		v := e.browser()
		v.mustLogin("viewer", "viewer-password-1")
		v.get("/devices")
		if p := v.uploadRouterDB(oxidized, map[string]string{"file": "new-1:ios\n"}, ""); p.status != http.StatusForbidden {
			t.Errorf("viewer: %d", p.status)
		}
		g, err := e.store.CreateGroup(t.Context(), "Branch", nil)
		if err != nil {
			t.Fatal(err)
		}
		e.createUser("scoped", "scoped-password-1", auth.RoleOperator, false, g.ID)
		s := e.browser()
		s.mustLogin("scoped", "scoped-password-1")
		s.get("/devices/import")
		p := s.uploadRouterDB(oxidized, map[string]string{"file": "new-1:ios\n"}, "")
		expect(t, "scoped", p, http.StatusForbidden, "")
		expectBody(t, "scoped", p, "Importing a router.db needs a user who sees every group.")
		// devices.create alone may add devices, but not the groups and
		// credentials a file needs.
		if _, err := e.store.CreateRole(t.Context(), "Adder", "", []string{"devices.view", "devices.create"}); err != nil {
			t.Fatal(err)
		}
		e.createUser("adder", "adder-password-1", "Adder", true)
		a := e.browser()
		a.mustLogin("adder", "adder-password-1")
		a.get("/devices/import")
		p = a.uploadRouterDB(oxidized, map[string]string{"file": "new-1:ios:new-group\n"}, "")
		expect(t, "no groups.create", p, http.StatusForbidden, "")
		expectBody(t, "no groups.create", p, "This import needs the permission groups.create, which your role lacks.")
		if n := devicesCount(t, e); n != before {
			t.Errorf("%d devices after refused uploads, want %d", n, before)
		}
		p = a.uploadRouterDB(oxidized, map[string]string{"file": "new-1:ios\n"}, "")
		expectBody(t, "devices.create suffices for plain devices", p, "Imported: 1 created")
	})
}

// The router.db form also takes Oxidized's configuration file: its
// delimiter, maps and logins are used, the mapping is shown (which logins
// are set, never a password), the path it names on the Oxidized host is
// never read, and what cannot be used says why.
func TestDevicesImportRouterDBOxidizedConfig(t *testing.T) {
	e := newEnv(t)
	e.createUser("op", "operator-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("op", "operator-password-1")
	expectBody(t, "import page", b.get("/devices/import"), `name="oxidized_config"`, "Oxidized configuration (optional)")

	secretFile := filepath.Join(t.TempDir(), "server-side.db")
	if err := os.WriteFile(secretFile, []byte("server-only:ios\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := `---
username: oxidized
password: S3cr3tx
vars:
  enable: En4ble-global
groups:
  lab:
    username: labuser
    password: L4b-pw
source:
  default: csv
  csv:
    file: ` + secretFile + `
    delimiter: !ruby/regexp /:/
    map:
      name: 0
      ip: 1
      model: 2
      username: 3
      password: 4
      group: 6
    vars_map:
      enable: 5
      ssh_port: 7
`
	routerDB := "rtr01.local:192.168.1.1:ios:oxidized:5uP3R53cR3T:T0p53cR3t\nrtr02.local:192.168.1.2:ios\nsw01.local:192.168.1.3:procurve::::lab\n"
	secrets := []string{"S3cr3tx", "5uP3R53cR3T", "T0p53cR3t", "En4ble-global", "L4b-pw"}
	// The form's delimiter and map are for files without a configuration:
	// with one they are not used.
	form := map[string]string{"format": "oxidized", "delimiter": ";", "map": "name=0,model=1", "dry_run": "1"}
	files := map[string]string{"file": routerDB, "oxidized_config": config}

	p := b.uploadRouterDB(form, files, "")
	expect(t, "dry run", p, http.StatusOK, "")
	expectBody(t, "dry run", p, "Dry run, nothing changed: 3 would be created, 0 updated, 0 unchanged, 0 lines skipped.",
		"Read as the Oxidized configuration says:", "Delimiter: <code>&#34;:&#34;</code>",
		"Columns: <code>name=0,ip=1,model=2,username=3,password=4,enable=5,group=6</code>",
		"Not read (backupd has no such setting): <code>vars_map.ssh_port=7</code>",
		"Lines without their own login take the global username, password, enable password",
		"Group lab has its own username, password", "cisco_ios at 192.168.1.1", "hp_procurve at 192.168.1.3")
	if strings.Contains(p.body, "server-only") {
		t.Error("the import read the file the configuration names on the server")
	}
	for _, s := range secrets {
		if strings.Contains(p.body, s) {
			t.Errorf("the page shows the password %q", s)
		}
	}
	if n := devicesCount(t, e); n != 0 {
		t.Fatalf("the dry run created %d devices", n)
	}

	b.header.Set("Accept-Language", "zh-CN")
	p = b.uploadRouterDB(form, files, "")
	b.header.Del("Accept-Language")
	expectBody(t, "in Chinese", p, "按 Oxidized 配置读取：", "分组 lab 自带 用户名, 密码")

	delete(form, "dry_run")
	p = b.uploadRouterDB(form, files, "")
	expect(t, "import", p, http.StatusOK, "")
	expectBody(t, "import", p, "Imported: 3 created, 0 updated, 0 unchanged, 0 lines skipped.")
	for name, want := range map[string][3]string{
		"rtr01.local": {"oxidized", "5uP3R53cR3T", "T0p53cR3t"},
		"rtr02.local": {"oxidized", "S3cr3tx", "En4ble-global"},
		"sw01.local":  {"labuser", "L4b-pw", "En4ble-global"},
	} {
		d := devicesByName(t, e, name)
		if d.CredentialID == nil {
			t.Fatalf("%s has no credential", name)
		}
		c, err := e.store.GetCredential(t.Context(), *d.CredentialID)
		if err != nil {
			t.Fatal(err)
		}
		pw, err1 := e.sealer.Open(c.Password, secret.PurposePassword)
		en, err2 := e.sealer.Open(c.EnablePassword, secret.PurposeEnablePassword)
		if got := [3]string{c.Username, pw, en}; got != want || err1 != nil || err2 != nil {
			t.Errorf("%s: login %q (%v, %v), want %q", name, got, err1, err2, want)
		}
		if bytes.Contains(c.Password, []byte(want[1])) {
			t.Errorf("%s: the password is stored in clear", name)
		}
	}

	for _, tc := range []struct{ config, routerDB, want string }{
		{"source:\n  default: sql\n", routerDB, "The Oxidized configuration cannot be used: the Oxidized configuration uses the &#34;sql&#34; source"},
		{"source: [\n", routerDB, "The Oxidized configuration cannot be used: the Oxidized configuration is not YAML"},
		{"source:\n  csv:\n    gpg: true\n    map:\n      name: 0\n      model: 1\n", "-----BEGIN PGP MESSAGE-----\n\nhQEMA\n",
			"The file cannot be imported: the router.db is encrypted with GPG"},
	} {
		before := devicesCount(t, e)
		p := b.uploadRouterDB(map[string]string{"format": "oxidized"}, map[string]string{"file": tc.routerDB, "oxidized_config": tc.config}, "")
		expect(t, tc.want, p, http.StatusUnprocessableEntity, "")
		expectBody(t, tc.want, p, tc.want)
		if n := devicesCount(t, e); n != before {
			t.Errorf("%d devices after a refused upload, want %d", n, before)
		}
	}
}
