package ui_test

import (
	"net/http"
	"strings"
	"testing"

	"backupd/app/auth"
	"backupd/app/secret"
)

// The router.db form reads Oxidized's documented layout by default and
// says above the lines which delimiter and columns it used; a file of
// backupd's earlier default layout is pointed to its column map, and a
// line where a password would become the username is refused.
func TestDevicesImportRouterDBLayout(t *testing.T) {
	e := newEnv(t)
	e.createUser("op", "operator-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("op", "operator-password-1")
	expectBody(t, "form default", b.get("/devices/import"), `name="map" value="name=0,model=1,username=2,password=3,enable=4"`)

	routerDB := "rtr01.local:ios:oxidized:5uP3R53cR3T:T0p53cR3t\nrtr02.local:junos:netops:plain-pw\n"
	secrets := []string{"5uP3R53cR3T", "T0p53cR3t", "plain-pw"}
	p := b.uploadRouterDB(map[string]string{"format": "oxidized", "dry_run": "1"}, map[string]string{"file": routerDB}, "")
	expect(t, "dry run", p, http.StatusOK, "")
	expectBody(t, "dry run", p, `<div id="routerdb-layout">`, "Read with:", "Delimiter: <code>&#34;:&#34;</code>",
		"Columns: <code>name=0,model=1,username=2,password=3,enable=4</code>",
		"This is Oxidized&#39;s documented layout, name:model:username:password:enable",
		"needs the column map <code>name=0,model=1,group=2,username=3,password=4</code>",
		"Dry run, nothing changed: 2 would be created")
	if strings.Index(p.body, `id="routerdb-layout"`) > strings.Index(p.body, `id="routerdb-lines"`) {
		t.Error("the column map is not shown above the lines")
	}
	for _, s := range secrets {
		if strings.Contains(p.body, s) {
			t.Errorf("the page shows %q", s)
		}
	}

	p = b.uploadRouterDB(map[string]string{"format": "oxidized"}, map[string]string{"file": routerDB}, "")
	expectBody(t, "import", p, "Imported: 2 created, 0 updated, 0 unchanged, 0 lines skipped.")
	d := devicesByName(t, e, "rtr01.local")
	if d.CredentialID == nil {
		t.Fatal("no credential")
	}
	c, err := e.store.GetCredential(t.Context(), *d.CredentialID)
	if err != nil {
		t.Fatal(err)
	}
	pw, err1 := e.sealer.Open(c.Password, secret.PurposePassword)
	en, err2 := e.sealer.Open(c.EnablePassword, secret.PurposeEnablePassword)
	if c.Username != "oxidized" || pw != "5uP3R53cR3T" || en != "T0p53cR3t" || err1 != nil || err2 != nil {
		t.Errorf("login %q %q (%v) %q (%v)", c.Username, pw, err1, en, err2)
	}

	// The earlier default as the map: no note, and the shifted line is
	// refused without showing its value.
	legacy := map[string]string{"format": "oxidized", "map": "name=0,model=1,group=2,username=3,password=4", "dry_run": "1"}
	p = b.uploadRouterDB(legacy, map[string]string{"file": "rtr03.local:ios:oxidized:5uP3R53cR3T:T0p53cR3t\nok:ios\n"}, "")
	expect(t, "legacy map", p, http.StatusOK, "")
	expectBody(t, "legacy map", p, "Columns: <code>name=0,model=1,group=2,username=3,password=4</code>",
		"The username column (3) holds what looks like a password: the columns seem shifted")
	if strings.Contains(p.body, "This is Oxidized") || strings.Contains(p.body, "5uP3R53cR3T") {
		t.Error("legacy map: the note of the default, or the password, is shown")
	}

	b.header.Set("Accept-Language", "zh-CN")
	p = b.uploadRouterDB(map[string]string{"format": "rancid", "dry_run": "1"}, map[string]string{"file": "r1:cisco:up\n2001:db8::1:cisco:up\n"}, "")
	b.header.Del("Accept-Language")
	expect(t, "rancid 2", p, http.StatusOK, "")
	expectBody(t, "rancid 2", p, "列： <code>name:type:state[:comment]</code>", "RANCID 3 之前的格式",
		"该行包含 IPv6 地址，但此 router.db 用“:”分隔字段")
	p = b.uploadRouterDB(map[string]string{"format": "rancid", "dry_run": "1"}, map[string]string{"file": "r1:cisco:up\n2001:db8::1:cisco:up\n"}, "")
	expectBody(t, "rancid 2 in English", p, "The format before RANCID 3",
		"The line holds an IPv6 address, but this router.db separates its fields with “:”", "RANCID 3 uses “;” for this reason")
	if strings.Contains(p.body, "State “”") {
		t.Error("the IPv6 line is explained by its state")
	}
	p = b.uploadRouterDB(map[string]string{"format": "oxidized", "map": "name=0,model=1,ip=2", "dry_run": "1"}, map[string]string{"file": "r9:ios:999.1.1.1\nok:ios\n"}, "")
	expectBody(t, "999.1.1.1", p, "“999.1.1.1” is not an IPv4 address (four numbers from 0 to 255, without leading zeros)")
}

// The import page never shows a password of a skipped line: not with a
// wrong delimiter, not for a 3 MB line (the largest upload is 5 MB), and
// control bytes are escaped, in English and in Chinese, on the real
// server.
func TestDevicesImportRouterDBSkipsShowNoSecrets(t *testing.T) {
	e := newEnv(t)
	e.createUser("op", "operator-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("op", "operator-password-1")
	b.get("/devices/import")
	secrets := []string{"Pw-Secret-1", "Secret-2", "Secret-4", "Secret-5", "Secret-6", "Secret-7"}
	huge := strings.Repeat("A", 3<<20)
	file := strings.Join([]string{
		"ok-1:ios:admin:pw",
		"r1,192.0.2.1,ios,admin,Pw-Secret-1",
		"r2,192.0.2.2,ios,admin,pa:ss-Secret-2",
		"r4;ios;admin;Secret-4:Secret-4",
		"r\x00x:ios:admin:Secret-5",
		huge + "Secret-6",
		huge[:1<<20] + ":ios:admin:Secret-7",
		"\x1b[2J\x1b[31mred\x07:ios:admin:Secret-7",
		"sw-1:juniper:junos:Secret-7",
	}, "\n") + "\n"
	for _, lang := range []string{"en", "zh-CN"} {
		b.header.Set("Accept-Language", lang)
		for _, dry := range []string{"1", ""} {
			form := map[string]string{"format": "oxidized"}
			if dry != "" {
				form["dry_run"] = dry
			}
			p := b.uploadRouterDB(form, map[string]string{"file": file}, "")
			expect(t, lang+" upload", p, http.StatusOK, "")
			for _, s := range secrets {
				if strings.Contains(p.body, s) {
					t.Errorf("%s: the page shows %q", lang, s)
				}
			}
			if len(p.body) > 200<<10 || strings.ContainsAny(p.body, "\x00\x1b\x07") {
				t.Errorf("%s: page of %d bytes, control bytes %v", lang, len(p.body), strings.ContainsAny(p.body, "\x00\x1b\x07"))
			}
			want := []string{`<td class="num">2</td><td></td>`, `r\x00x`, `\x1b[2J\x1b[31mred\x07`, strings.Repeat("A", 128) + "…</td>"}
			if lang == "en" {
				want = append(want, "1 fields, at least 2 expected. The line (34 bytes) is not shown: is the delimiter right?",
					"The name column holds “,”: the file seems to use another delimiter than “:”. The line is not shown.",
					"1 fields, at least 2 expected. The line (3145736 bytes) is not shown",
					"The name column holds a control character (shown escaped).",
					"The username column (2) holds a platform or model name")
			} else {
				want = append(want, "共 1 个字段，至少需要 2 个。该行（34 字节）不予显示", "名称列中含有“,”", "name 列含有控制字符")
			}
			expectBody(t, lang, p, want...)
		}
	}
	b.header.Del("Accept-Language")
	if n := devicesCount(t, e); n != 1 {
		t.Errorf("%d devices, want 1", n)
	}
}
