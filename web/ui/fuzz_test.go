package ui_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"backupd/app/auth"
	"backupd/db"
	"backupd/internal/dbtest"
)

// Issue 11, defect 4: FuzzDevicesImport uploads fuzzed CSV files through
// the real import form (a signed-in operator scoped to one group, CSRF
// token, multipart upload) over a real SQLite store, in English or
// Chinese, and checks:
//
//   - the answer is 303 (imported), 422 (refused) or 413 (too large),
//     never a 5xx;
//   - all or nothing: a refused file leaves the devices as they were and
//     says "nothing was imported" in the page's language; an accepted one
//     adds exactly the count the redirect names;
//   - the messages are clear: no catalog key and no broken fmt verb
//     ("%!d(…)") in the page.
//
// Imported devices are deleted again so the store keeps its fixture size.
func FuzzDevicesImport(f *testing.F) {
	e := newEnv(f)
	ctx := context.Background()
	lab, err := e.store.CreateGroup(ctx, "Lab", nil)
	if err != nil {
		f.Fatal(err)
	}
	if _, err := e.store.CreateGroup(ctx, "Other", nil); err != nil {
		f.Fatal(err)
	}
	if _, err := e.store.CreateCredential(ctx, db.Credential{Name: "Lab Login", Username: "u"}); err != nil {
		f.Fatal(err)
	}
	for _, name := range []string{"full", "twin", "twin"} {
		if _, err := e.store.CreateTemplate(ctx, db.Template{Name: name, Platform: "huawei_vrp", Commands: "display current-configuration"}); err != nil {
			f.Fatal(err)
		}
	}
	e.createUser("op", "operator-password-1", auth.RoleOperator, false, lab.ID)
	b := e.browser()
	b.mustLogin("op", "operator-password-1")
	if p := b.get("/devices/import"); p.status != http.StatusOK || b.csrf == "" {
		f.Fatalf("import form: %d", p.status)
	}
	// The fixture device whose name an import may not take.
	if _, err := dbtest.Poke(f, e.store).ExecContext(ctx, `INSERT INTO devices (name, host, port, platform, login_method, group_id, created_at, updated_at)
		VALUES ('existing', '192.0.2.99', 22, 'cisco_ios', 'ssh', ?, ?, ?)`, lab.ID, db.Now(), db.Now()); err != nil {
		f.Fatal(err)
	}

	for _, s := range []string{
		devicesSampleForFuzz,
		"name,host,platform,group\nok-1,192.0.2.1,cisco_ios,Lab\n",
		"name,host,platform,group\nok-1,192.0.2.1,cisco_ios,Lab\nbad-2,http://nope,cisco_ios,Lab\n",
		"Name,Host,Platform,Login Method,Group,Credential,Template,Enabled,Port\n" +
			"dup,192.0.2.1,cisco_ios,ssh,Lab,,,,\n" +
			"DUP,192.0.2.2,huawei_vrp,ssh,Nowhere,Nobody,full,perhaps,99999\n" +
			"Existing,192.0.2.3,vyos,rsh,Other,,,,\n" +
			"tw,192.0.2.4,huawei_vrp,telnet,Lab,lab login,TWIN,yes,0\n" +
			"short,row\n",
		"\xef\xbb\xbfname;host;port;platform;login_method;group;credential;template;encoding;enabled;remarks\r\n" +
			"sw-1;192.0.2.11;;huawei_vrp;telnet;lab;lab login;FULL;gbk;no;\"rack 1; \"\"top\"\"\r\nsecond line\"\r\n" +
			"sw-2;2001:db8::2;2222;cisco_ios;;Lab;;;;;'=1+1\r\n",
		"name,host,platform,grp\n",
		"name,host,platform,name\n",
		"name,host\nx,192.0.2.1\n",
		"\xef\xbb\xbf  \n",
		"name,host,platform\r\n,,\r\n",
		"name,host,platform\n\xff\xfe,192.0.2.1,cisco_ios\n",
		"name,host,platform\n\"a,192.0.2.1,cisco_ios\nb\"x,1,2\n",
		"name,host,platform,group,encoding,port\n=cmd|' /C calc'!A0,192.0.2.1,cisco_ios,Lab,utf-16,-1\n",
		"name,host,platform,group\n" + strings.Repeat("x", 200) + ",192.0.2.1,cisco_ios,Lab\n",
		"name,host,platform,group\nd1,192.0.2.1,cisco_ios,\nd2,192.0.2.1,cisco_ios,Lab\n",
		"name,host,platform,group,remarks\nd1,192.0.2.1,cisco_ios,Lab,%d %s %!\n",
		"",
		",,,\n,,,\n",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}

	execs := 0
	f.Fuzz(func(t *testing.T, csv string, zh bool) {
		e.t = t
		if execs++; execs%500 == 0 {
			if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `DELETE FROM audit_log`); err != nil {
				t.Fatal(err)
			}
		}
		lang := "en"
		if zh {
			lang = "zh"
		}
		b.header.Set("Accept-Language", lang)
		before := devicesCount(t, e)
		p := b.uploadDevicesCSV("fuzz.csv", csv, "")
		after := devicesCount(t, e)
		switch p.status {
		case http.StatusSeeOther:
			loc := p.header.Get("Location")
			n, err := strconv.Atoi(strings.TrimPrefix(loc, "/devices?imported="))
			if err != nil || n < 1 || after != before+n {
				t.Fatalf("imported: Location %q, devices %d → %d", loc, before, after)
			}
			if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `DELETE FROM devices WHERE name <> 'existing'`); err != nil {
				t.Fatal(err)
			}
		case http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge:
			if after != before {
				t.Fatalf("a refused file (%d) changed the devices: %d → %d\n%s", p.status, before, after, p.body)
			}
			nothing := map[string]string{"en": "Nothing was imported.", "zh": "未导入任何设备。"}[lang]
			if !strings.Contains(p.body, nothing) {
				t.Fatalf("a refused file (%d) without %q:\n%s", p.status, nothing, p.body)
			}
		default:
			t.Fatalf("status %d for %q:\n%s", p.status, csv, p.body)
		}
		for _, key := range []string{"devices.import.error.", "devices.error."} {
			if i := strings.Index(p.body, key); i >= 0 && !strings.Contains(csv, key) {
				t.Fatalf("a catalog key instead of a message: %q", p.body[i:min(i+60, len(p.body))])
			}
		}
		if !strings.Contains(csv, "%!") && strings.Contains(p.body, "%!") {
			i := strings.Index(p.body, "%!")
			t.Fatalf("a message with broken arguments: %q", p.body[max(i-80, 0):min(i+80, len(p.body))])
		}
	})
}

// devicesSampleForFuzz is the form's own sample file, with groups that the
// fixture has.
const devicesSampleForFuzz = "name,host,port,platform,login_method,group,credential,template,encoding,enabled,remarks\r\n" +
	"core-rtr-01,192.0.2.10,,cisco_ios,ssh,Lab,Lab login,,utf-8,true,Rack 4\r\n" +
	"campus-sw-07,campus-sw-07.example.net,23,huawei_vrp,telnet,Lab,Lab login,full,gbk,true,\r\n" +
	"dc-fw-01,2001:db8::1,2222,fortinet,ssh,Lab,Lab login,,,false,\"Spare unit, powered off\"\r\n"
