package ui_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"backupd/app/auth"
	"backupd/db"
)

// The CSV import's dry run checks the file as the import does and lists
// the devices it would create, creating none and auditing nothing; the
// import of the same file then creates exactly those. A dry run of a
// file with a bad address reports it as the import does.
func TestDevicesImportDryRun(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	lab, err := e.store.CreateGroup(ctx, "Lab", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateGroup(ctx, "Racks", &lab.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateCredential(ctx, db.Credential{Name: "Lab Login", Username: "u"}); err != nil {
		t.Fatal(err)
	}
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")
	b.get("/devices/import")
	file := "name,host,port,platform,group,credential\n" +
		"dry-1,192.0.2.11,,cisco_ios,Racks,Lab Login\n" +
		"dry-2,dry-2.example.net,2222,juniper_junos,Lab,\n" +
		"dry-3,2001:db8::3,,arista_eos,,Lab Login\n"

	p := b.uploadDevicesCSVWith("d.csv", file, map[string]string{"dry_run": "1"})
	expect(t, "dry run", p, http.StatusOK, "")
	expectBody(t, "dry run", p, "importing it would create 3 devices. Nothing was created.",
		"<th scope=\"row\">dry-1</th><td class=\"nowrap\">ssh 192.0.2.11:22</td><td>Cisco IOS</td><td>Lab / Racks</td><td>Lab Login</td>",
		"ssh dry-2.example.net:2222", "ssh [2001:db8::3]:22")
	if n := devicesCount(t, e); n != 0 {
		t.Fatalf("%d devices after a dry run", n)
	}
	for _, a := range e.auditEntries() {
		if a.Action == "device.import" {
			t.Error("a dry run is in the audit log as an import")
		}
	}

	b.get("/devices/import")
	p = b.uploadDevicesCSVWith("d.csv", file+"dry-4,10.0.0.300,,cisco_ios,Lab,\n", map[string]string{"dry_run": "1"})
	expect(t, "dry run with a bad address", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "dry run with a bad address", p, `<tr><td class="num">5</td><td><code>host</code></td><td>This is not an IP address or a DNS name.`)
	if strings.Contains(p.body, `id="import-planned"`) {
		t.Error("a refused file is also listed as planned")
	}

	b.get("/devices/import")
	expect(t, "import", b.uploadDevicesCSV("d.csv", file, ""), http.StatusSeeOther, "")
	list, _, err := e.store.ListDevices(ctx, db.Scope{All: true}, db.DeviceFilter{}, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range list {
		names = append(names, d.Name)
	}
	if strings.Join(names, " ") != "dry-1 dry-2 dry-3" {
		t.Errorf("the import created %v, the dry run listed dry-1 dry-2 dry-3", names)
	}
}
