package db_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"backupd/db"
)

// Upgrading files each dry-run refusal recorded before render_reason
// existed under its code, from the sentence app/restore wrote then, so
// that the change set pages say it in the reader's language without
// reading the English; a device that rendered keeps no reason. Rolling
// back drops the column.
func TestChangeSetRenderReasonMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), db.FileName)
	if err := db.MigrateTo(ctx, path, 35); err != nil {
		t.Fatal(err)
	}
	conn := rawDB(t, path)
	now := db.Now()
	rawExec(t, conn, `INSERT INTO change_sets (id, name, body, created_by_name, created_at, updated_at)
		VALUES (1, 'old', 'x', 'root', ?, ?)`, now, now)
	errs := []struct {
		text string // "": the device rendered
		want string
	}{
		{"r1: platform hp_procurve cannot take a push", "no_push"},
		{"r1: lines 1-3 of the lines to send are a banner: sent line by line it would arrive broken; leave it out of the change set", "block"},
		{"r1: the device is disabled; enable it to push to it", "disabled"},
		{"r1: the device is reached through a remote collector; restores run from the server only", "remote_zone"},
		{"r1: nothing to send", "nothing_to_send"},
		{`r1: template: change set:1:12: executing "change set" at <.Vars.peer>: map has no entry for key "peer"`, "template"},
		{"", ""},
	}
	for i, e := range errs {
		var renderErr, rendered any = e.text, nil
		if e.text == "" {
			renderErr, rendered = nil, "x\n"
		}
		rawExec(t, conn, `INSERT INTO devices (id, name, host, port, platform, login_method, created_at, updated_at)
			VALUES (?, ?, '192.0.2.1', 22, 'frr', 'ssh', ?, ?)`, i+1, "r"+strconv.Itoa(i+1), now, now)
		rawExec(t, conn, `INSERT INTO change_set_targets (id, change_set_id, device_id, position, rendered, render_error) VALUES (?, 1, ?, ?, ?, ?)`,
			i+1, i+1, i, rendered, renderErr)
	}
	conn.Close()
	if err := db.MigrateTo(ctx, path, 36); err != nil {
		t.Fatal(err)
	}
	conn = rawDB(t, path)
	for i, e := range errs {
		var reason *string
		if err := conn.QueryRow(`SELECT render_reason FROM change_set_targets WHERE id = ?`, i+1).Scan(&reason); err != nil {
			t.Fatal(err)
		}
		if got := derefString(reason); got != e.want {
			t.Errorf("%q: reason %q, want %q", e.text, got, e.want)
		}
	}
	conn.Close()
	if err := db.MigrateDownTo(ctx, path, 35); err != nil {
		t.Fatal(err)
	}
	conn = rawDB(t, path)
	if _, err := conn.Exec(`SELECT render_reason FROM change_set_targets`); err == nil {
		t.Error("render_reason is still there after rolling back")
	}
}
