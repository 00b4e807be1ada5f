package importer_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"backupd/app/importer"
	"backupd/app/secret"
	"backupd/db"
)

// canUse is an importing user who may use the listed credentials.
type canUse []int64

func (c canUse) CanUseCredential(id int64) bool { return slices.Contains(c, id) }

// An import on behalf of a user uses no credential the user may not use:
// a line naming one, or moving a device that logs in with one, is
// skipped with the reason; a login of the file that matches one becomes
// a credential of its own. The operator on the server (Build) may use
// them all.
func TestBuildForUser(t *testing.T) {
	ctx := context.Background()
	store, sealer := openData(t)
	core, err := store.CreateCredential(ctx, db.Credential{Name: "core", Username: "admin",
		Password: sealer.Seal("s3cret", secret.PurposePassword)})
	if err != nil {
		t.Fatal(err)
	}
	edge, err := store.CreateCredential(ctx, db.Credential{Name: "edge", Username: "ops",
		Password: sealer.Seal("other", secret.PurposePassword)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateDevice(ctx, db.Device{Name: "kept", Host: "kept", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh",
		CredentialID: &core.ID, Encoding: "utf-8", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	file := "core-1:ios:dc1:admin:s3cret\n" + // core's login
		"edge-1:ios:dc1:ops:other\n" + // edge's login
		"kept:ios\n" + // unchanged: the host is the name, as it was
		"kept-moved:ios\n"
	parsed, err := importer.ParseOxidized([]byte(file), ":", importer.LegacyMap())
	if err != nil {
		t.Fatal(err)
	}
	p, err := importer.BuildFor(ctx, store, sealer, parsed, "", "", canUse{edge.ID})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]importer.Row{}
	for _, r := range p.Rows {
		rows[r.Device.Name] = r
	}
	if r := rows["core-1"]; r.NewCredential != 1 || r.Credential != "Imported oxidized 1" || len(p.Credentials) != 1 {
		t.Fatalf("core's login: %+v, new credentials %v", r, p.Credentials)
	}
	if r := rows["edge-1"]; r.Device.CredentialID == nil || *r.Device.CredentialID != edge.ID || r.CredentialUse != "attach" {
		t.Fatalf("edge's login: %+v", r)
	}
	if r := rows["kept"]; r.Action != importer.Unchanged {
		t.Fatalf("kept: %+v", r)
	}
	if !slices.Equal(p.UsedCredentials(), []int64{edge.ID}) {
		t.Fatalf("used credentials %v", p.UsedCredentials())
	}

	// kept moves: its credential would go to a new host.
	m, err := importer.ParseMap("name=0,model=1,ip=2")
	if err != nil {
		t.Fatal(err)
	}
	if parsed, err = importer.ParseOxidized([]byte("kept:ios:198.51.100.7\n"), ":", m); err != nil || len(parsed.Entries) != 1 {
		t.Fatalf("parse: %v", err)
	}
	p, err = importer.BuildFor(ctx, store, sealer, parsed, "", "", canUse{edge.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 0 || len(p.Skipped) != 1 || p.Skipped[0].Code != importer.ReasonCredentialUse ||
		!strings.Contains(p.Skipped[0].Reason(), `you may not use credential "core"`) {
		t.Fatalf("moving kept: rows %+v, skipped %+v", p.Rows, p.Skipped)
	}
	// The operator may.
	p, err = importer.Build(ctx, store, sealer, parsed, "", "")
	if err != nil || len(p.Rows) != 1 || p.Rows[0].Action != importer.Update || p.Rows[0].CredentialUse != "address" {
		t.Fatalf("moving kept as the operator: %+v, %v", p.Rows, err)
	}
}
