package cli_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"backupd/db"
	"backupd/db/outbox"
	"backupd/internal/dbtest"
)

// config push-reject refuses a ready change set with a note, four eyes
// or not: the set is cancelled with the decision, its devices skipped,
// push-status says who rejected it and why, the command line's audit
// entry is changeset.reject, and config.push_finished names who
// rejected it. A set that runs, a draft, an unknown set, a bad ID and a
// long note are refused with a one-line error and move nothing.
func TestConfigPushReject(t *testing.T) {
	f := newPushFixture(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, f.store, "hook")
	if _, err := f.store.CreateNotificationRule(ctx, db.NotificationRule{Name: "ends", Enabled: true, Scope: db.RuleScopeAll,
		Events: []outbox.EventKind{outbox.EventPushFinished}, ChannelIDs: []int64{ch}}); err != nil {
		t.Fatal(err)
	}
	snippet := "router bgp 65001\n neighbor 192.0.2.77 remote-as 65077\n"
	f.ok(t, "config", "restore-settings", "--four-eyes", "on")
	id, _ := f.push(t, "", "to reject", "--body", snippet, "--device", "edge1", "--device", "edge2")
	sid := strconv.FormatInt(id, 10)

	f.refused(t, []string{"--note", "at most"}, "config", "push-reject", sid, "--note", strings.Repeat("x", 2001))
	f.refused(t, []string{"no change set with the ID 999"}, "config", "push-reject", "999")
	f.refused(t, []string{"change set ID", "positive number"}, "config", "push-reject", "x")
	if c := f.set(t, id); c.State != db.ChangeSetReady {
		t.Fatalf("refused rejections moved the set: %s", c.State)
	}

	out := f.ok(t, "config", "push-reject", sid, "--note", "not in the window").stdout
	if !strings.Contains(out, `change set `+sid+` "to reject" rejected`) || !strings.Contains(out, "2 device(s) are skipped") {
		t.Errorf("push-reject:\n%s", out)
	}
	c := f.set(t, id)
	if c.State != db.ChangeSetCancelled || !strings.HasPrefix(restoreDeref(c.DecidedByName), "os:") || c.DecisionNote != "not in the window" {
		t.Fatalf("the rejection is %+v", c)
	}
	st := f.ok(t, "config", "push-status", sid).stdout
	for _, want := range []string{": cancelled", "rejected: it never ran", "rejected ", "not in the window"} {
		if !strings.Contains(st, want) {
			t.Errorf("push-status lacks %q:\n%s", want, st)
		}
	}
	f.refused(t, []string{"is cancelled and cannot be rejected"}, "config", "push-reject", sid)

	entries, _, err := f.store.ListAudit(ctx, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Action == "changeset.reject" {
			n++
			if e.Interface != "cli" || !strings.HasPrefix(e.Username, "os:") || e.TargetID != sid {
				t.Errorf("audit entry %+v", e)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d changeset.reject entries, want 1", n)
	}

	var payload string
	if err := dbtest.Poke(t, f.store).QueryRowContext(ctx, `SELECT payload FROM outbox WHERE kind = ? ORDER BY id DESC LIMIT 1`,
		string(outbox.EventPushFinished)).Scan(&payload); err != nil {
		t.Fatalf("no config.push_finished event: %v", err)
	}
	var ev struct {
		ChangeSet outbox.EventChangeSet `json:"change_set"`
	}
	if err := json.Unmarshal([]byte(payload), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.ChangeSet.ID != id || !strings.HasPrefix(ev.ChangeSet.RejectedBy, "os:") || ev.ChangeSet.ApprovedBy != "" ||
		ev.ChangeSet.DecisionNote != "not in the window" || ev.ChangeSet.State != db.ChangeSetCancelled {
		t.Errorf("the event: %+v", ev.ChangeSet)
	}

	// A set that runs, and a draft, are not rejected.
	f.ok(t, "config", "restore-settings", "--four-eyes", "off")
	run, _ := f.push(t, "", "runs", "--body", snippet, "--device", "edge1")
	f.ok(t, "config", "push-approve", strconv.FormatInt(run, 10))
	f.refused(t, []string{"is running and cannot be rejected", "push-cancel stops it"}, "config", "push-reject", strconv.FormatInt(run, 10))
	if c := f.set(t, run); c.State != db.ChangeSetRunning {
		t.Errorf("a refused rejection moved a running set: %s", c.State)
	}
	draft, _ := f.push(t, "", "draft", "--body", snippet, "--device", "ios1")
	f.refused(t, []string{"is draft and cannot be rejected", "push-cancel withdraws a draft"}, "config", "push-reject", strconv.FormatInt(draft, 10))
}
