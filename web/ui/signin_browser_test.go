package ui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/internal/testldap"
)

// TestLDAPSettingsInChromium sets LDAP sign-in up the way an
// administrator does, in a real browser under the CSP, in English and
// Chinese: the preset fills the schema fields, the form saves, a mapping
// is added, Test shows alice's nested groups and role; then alice signs
// in with her directory password and lands on the dashboard.
// Screenshots of the settings page, the test report and the sign-in page
// go to UI_SCREENSHOT_DIR when set.
func TestLDAPSettingsInChromium(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			e := newEnv(t)
			srv := testldap.Start(t)
			e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
			b := newTab(t, e, 90*time.Second, 1280, 900)
			b.login("root", "root-password-1")
			b.setLang(lang)

			b.open("/settings/sign-in")
			b.chooseValue("#ldap-preset", "openldap")
			b.submit("fill in the preset", "#ldap-fill-preset")
			if got := b.eval(`document.getElementById("ldap-user-filter").value`); got != "(&(objectClass=inetOrgPerson)(uid={username}))" {
				t.Fatalf("the preset filled the user filter with %q", got)
			}
			b.run("enable", chromedp.Click(chromedp.CSS("#ldap-enabled")))
			b.typeIn("#ldap-url", srv.LDAPSURL)
			b.chooseValue("#ldap-security", "ldaps")
			b.run("CA", chromedp.SetValue(chromedp.CSS("#ldap-ca"), string(srv.CAPEM)))
			b.typeIn("#ldap-bind-dn", srv.ServiceDN)
			b.typeIn("#ldap-bind-pw", srv.ServicePassword)
			b.typeIn("#ldap-base-dn", srv.BaseDN)
			b.submit("save LDAP", "#ldap-save")
			b.waitFor("saved", `document.getElementById("signin-notice") !== null`, 5*time.Second)
			if set, err := e.store.LDAPConfig(context.Background()); err != nil || !set.Enabled || set.URL != srv.LDAPSURL {
				t.Fatalf("stored: %+v %v", set, err)
			}

			b.typeIn("#ldap-map-group", "netops")
			b.eval(`(() => { const r = Array.from(document.querySelectorAll('#ldap-mapping-form input[name=role]')).find(i => i.parentElement.textContent.trim() === ` +
				jsString(map[string]string{"en": "Operator", "zh": "运维人员"}[lang]) + `); r.click(); return ""; })()`)
			b.eval(`(() => { document.querySelector('#ldap-mapping-form input[name=scope][value=all]').click(); return ""; })()`)
			b.submit("add the mapping", "#ldap-map-add")
			b.waitFor("mapping listed", `document.querySelector("#ldap-mapping-table code") && document.querySelector("#ldap-mapping-table code").textContent === "netops"`, 5*time.Second)
			b.shot("signin-settings-" + lang)

			b.typeIn("#ldap-test-user", "alice")
			b.submit("test alice", "#ldap-test")
			b.waitFor("report", `document.getElementById("ldap-test-report") !== null`, 10*time.Second)
			report := b.eval(`document.getElementById("ldap-test-report").innerText`)
			for _, want := range []string{"netops", "core-team", map[string]string{"en": "Operator", "zh": "运维人员"}[lang]} {
				if !strings.Contains(report, want) {
					t.Errorf("the test report lacks %q:\n%s", want, report)
				}
			}
			b.run("scroll to the report", chromedp.ScrollIntoView(chromedp.CSS("#ldap-test-report")))
			b.shot("signin-test-" + lang)

			// alice, in a browser of her own, signs in with the directory's
			// password.
			a := newTab(t, e, 60*time.Second, 1280, 900)
			a.open("/login")
			a.setLang(lang)
			a.shot("signin-login-" + lang)
			a.signIn("alice", testldap.AlicePassword)
			if p := a.path(); p != "/dashboard" {
				t.Fatalf("alice landed on %s", p)
			}
			if a.eval(`String(document.querySelector('a[href="/account/password"]') === null)`) != "true" {
				t.Error("a directory user is offered to change a password backupd does not keep")
			}
			b.checkConsole()
			a.checkConsole()
		})
	}
}
