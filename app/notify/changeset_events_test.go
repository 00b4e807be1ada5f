package notify_test

import (
	"context"
	"encoding/json"
	"html"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/notify"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/db/queue"
)

// The config.push_* events of a change set's moves in the store, to a
// real SMTP server and a real webhook receiver: who gets them, what
// they say in each language, where they link, and what they never hold.

// pushSecret is a line of a change set's body that looks like a secret:
// it is also what the set renders to and what the push session sends.
const pushSecret = "snmp-server community Sup3rS3cretCommunity RO"

// pushTarget queues, claims, starts and ends one target of a running
// change set as the push runner does, its transcript holding what was
// sent.
func (f *fleetStore) pushTarget(t *testing.T, target int64, state string) {
	t.Helper()
	ctx := context.Background()
	_, enq, err := f.s.QueueChangeSetTarget(ctx, target, time.Time{})
	if err != nil || enq.JobID == 0 {
		t.Fatal(enq, err)
	}
	claims, err := f.s.ClaimJobsOfKinds(ctx, "pusher", 1, []int64{enq.JobID}, []string{queue.KindPush})
	if err != nil || len(claims) != 1 {
		t.Fatal(claims, err)
	}
	if _, err := f.s.StartChangeSetTarget(ctx, target, claims[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.AppendChangeSetTargetTranscript(ctx, target, []db.TranscriptSegment{{Kind: "sent", Text: pushSecret + "\n"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.FinishChangeSetTarget(ctx, target, db.TargetEnd{State: state, Error: "% Invalid input detected", Reason: "apply"},
		&claims[0], nil); err != nil {
		t.Fatal(err)
	}
}

// A change set of three devices is rendered (ready: the approvers of a
// rule of scope all are asked, in English and in Chinese, with a link to
// the set), approved, and stopped after its first failed device: one
// more message each, with how the devices fared. A rule on the group
// holding every device of the set gets nothing (change set events are
// system events), and no message holds the set's body, what it rendered
// or what the sessions sent.
func TestChangeSetEventsReachRealChannels(t *testing.T) {
	f := newFleetStore(t, 0)
	ctx := context.Background()
	site, err := f.s.CreateGroup(ctx, "site", nil)
	if err != nil {
		t.Fatal(err)
	}
	var devs []int64
	for i, name := range []string{"edge-1", "edge-2", "edge-3"} {
		devs = append(devs, f.groupDevice(t, name, "10.3.0."+strconv.Itoa(i+1), site.ID))
	}
	push := []outbox.EventKind{outbox.EventPushRequested, outbox.EventPushFinished}
	cert, pool := selfSigned(t)
	mailEN, mailZH := startMailbox(t, notify.SecuritySTARTTLS, cert), startMailbox(t, notify.SecuritySTARTTLS, cert)
	chEN, chZH := emailChannel(mailEN, notify.SecuritySTARTTLS, "en"), emailChannel(mailZH, notify.SecuritySTARTTLS, "zh")
	chZH.Name = "NOC mail zh"
	f.addRule(t, chEN, push, true)
	f.addRule(t, chZH, push, true)
	all, group := &bodyHook{}, &bodyHook{}
	allSrv, groupSrv := newServer(t, all), newServer(t, group)
	f.addRule(t, hookChannel("all hook", allSrv.URL, "s1"), push, true)
	f.addRule(t, hookChannel("site hook", groupSrv.URL, "s2"), push, true, site.ID)
	w := f.worker(notify.WorkerOptions{PublicURL: "https://backupd.example/", RootCAs: pool})

	n := db.NewChangeSet{Name: "snmp\ncommunity", Body: pushSecret + "\n", StopAfterFailures: 1, Concurrency: 3,
		CreatedByName: "alice", CreatedBy: ptrTo(int64(7))}
	for _, d := range devs {
		n.Targets = append(n.Targets, db.NewTarget{DeviceID: d})
	}
	c, err := f.s.CreateChangeSet(ctx, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := f.s.ChangeSetTargets(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var renders []db.TargetRender
	for _, tg := range targets {
		renders = append(renders, db.TargetRender{TargetID: tg.ID, Rendered: pushSecret + "\n"})
	}
	if c, err = f.s.SetChangeSetRendered(ctx, c.ID, renders, time.Time{}, nil); err != nil || c.State != db.ChangeSetReady {
		t.Fatalf("render: %+v, %v", c, err)
	}
	if got := pass(t, w); got != 3 {
		t.Fatalf("the request: %d deliveries; want 3 (two mails, the hook of scope all)", got)
	}
	link := "https://backupd.example/change-sets/" + strconv.FormatInt(c.ID, 10)
	id := strconv.FormatInt(c.ID, 10)
	mails := map[string]parsed{"en": parseMessage(t, mailEN.last(t).data), "zh": parseMessage(t, mailZH.last(t).data)}
	wantIn := func(what string, m parsed, want []string) {
		t.Helper()
		for _, s := range want {
			if !strings.Contains(m.text, s) {
				t.Errorf("%s lacks %q:\n%s", what, s, m.text)
			}
		}
	}
	wantIn("the English request", mails["en"], []string{"backupd: change set waits for approval",
		"change set #" + id + " “snmp community”, 3 devices", "created by alice", link})
	wantIn("the Chinese request", mails["zh"], []string{"变更集等待审批", "变更集 #" + id + "“snmp community”，共 3 台设备",
		"由 alice 创建", link})
	if mails["en"].subject != "backupd: backupd: change set waits for approval" {
		t.Errorf("subject %q", mails["en"].subject)
	}
	texts := []string{mails["en"].text + html.UnescapeString(mails["en"].html), mails["zh"].text + html.UnescapeString(mails["zh"].html)}

	if _, err := f.s.ApproveChangeSet(ctx, c.ID, db.Decision{UserID: ptrTo(int64(8)), Name: "bob", Note: "window CHG-9"},
		time.Now().Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.StartChangeSet(ctx, c.ID, nil); err != nil {
		t.Fatal(err)
	}
	f.pushTarget(t, targets[0].ID, db.TargetSucceeded)
	f.pushTarget(t, targets[1].ID, db.TargetFailed)
	if got := pass(t, w); got != 0 {
		t.Fatalf("approving, starting and pushing sent %d deliveries; want none", got)
	}
	if c, err = f.s.FinishChangeSet(ctx, c.ID, db.ChangeSetStopped, "stopped after 1 failed devices", nil); err != nil {
		t.Fatal(err)
	}
	if got := pass(t, w); got != 3 {
		t.Fatalf("the end: %d deliveries; want 3", got)
	}
	mails = map[string]parsed{"en": parseMessage(t, mailEN.last(t).data), "zh": parseMessage(t, mailZH.last(t).data)}
	wantIn("the English end", mails["en"], []string{"backupd: change set stopped after too many failed devices",
		"devices: 1 succeeded, 1 failed, 1 skipped, 0 interrupted", "approved by bob: window CHG-9", "created by alice",
		"reason: stopped after 1 failed devices", link})
	wantIn("the Chinese end", mails["zh"], []string{"变更集因失败设备过多而停止", "设备：成功 1 台，失败 1 台，跳过 1 台，中断 0 台",
		"由 bob 批准：window CHG-9", "原因：stopped after 1 failed devices", link})
	texts = append(texts, mails["en"].text+html.UnescapeString(mails["en"].html), mails["zh"].text+html.UnescapeString(mails["zh"].html))

	// The webhooks: the rule of scope all got both, the group's none.
	group.mu.Lock()
	if len(group.bodies) != 0 {
		t.Errorf("the group's rule got %v", group.bodies)
	}
	group.mu.Unlock()
	all.mu.Lock()
	bodies := append([]string(nil), all.bodies...)
	all.mu.Unlock()
	var got []string
	schema := loadSchema(t)
	for _, body := range bodies {
		texts = append(texts, body)
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		if err := schema.check(schema, v, "body"); err != nil {
			t.Errorf("%v: %s", err, body)
		}
		var env notify.Envelope
		if err := json.Unmarshal([]byte(body), &env); err != nil {
			t.Fatal(err)
		}
		for _, ev := range env.Events {
			cs := ev.ChangeSet
			if ev.Device != nil || cs == nil || cs.ID != c.ID || cs.Name != "snmp\ncommunity" || cs.CreatedBy != "alice" || cs.Devices != 3 ||
				cs.Path != "/change-sets/"+id || ev.URL != link || ev.Trigger != queue.TriggerPush {
				t.Errorf("event %s: %+v, change set %+v", ev.Kind, ev, cs)
				continue
			}
			got = append(got, ev.Kind+"/"+cs.State)
			if ev.Kind == string(outbox.EventPushFinished) &&
				(cs.Counts == nil || *cs.Counts != (notify.ChangeSetCounts{Succeeded: 1, Failed: 1, Skipped: 1}) || cs.ApprovedBy != "bob") {
				t.Errorf("finished: %+v counts %+v", cs, cs.Counts)
			}
		}
	}
	if strings.Join(got, " ") != "config.push_requested/ready config.push_finished/stopped" {
		t.Fatalf("the hook of scope all got %v", got)
	}
	for _, text := range texts {
		if strings.Contains(text, "Sup3rS3cret") || strings.Contains(text, "snmp-server") {
			t.Errorf("a message holds the change set's body: %s", text)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// Every end of a change set reads differently, in both languages, with
// no catalog key showing through; a cancel by a rejection names who
// rejected it, and a device still running at a cancel is counted.
func TestChangeSetEventsRender(t *testing.T) {
	en := readCatalog(t, "en")
	seen := map[string]string{}
	for _, c := range []struct {
		kind, state string
		want        map[string]string
	}{
		{"config.push_requested", db.ChangeSetReady, map[string]string{"en": "change set waits for approval", "zh": "变更集等待审批"}},
		{"config.push_finished", db.ChangeSetDone, map[string]string{"en": "every device was tried", "zh": "所有设备均已尝试"}},
		{"config.push_finished", db.ChangeSetStopped, map[string]string{"en": "stopped after too many failed devices", "zh": "因失败设备过多而停止"}},
		{"config.push_finished", db.ChangeSetCancelled, map[string]string{"en": "rejected by carol: not tonight", "zh": "由 carol 拒绝：not tonight"}},
		{"config.push_finished", db.ChangeSetExpired, map[string]string{"en": "expired before it ran", "zh": "变更集在执行前已过期"}},
	} {
		for lang, want := range c.want {
			ev := notify.Event{ID: "5", Kind: c.kind, At: at, Trigger: "push",
				ChangeSet: &notify.ChangeSet{ID: 12, Name: "ntp", State: c.state, CreatedBy: "alice", Devices: 40, Path: "/change-sets/12"}}
			if c.kind == "config.push_finished" {
				ev.ChangeSet.Counts = &notify.ChangeSetCounts{Succeeded: 30, Failed: 2, Skipped: 7, Interrupted: 0, Running: 1}
			}
			if c.state == db.ChangeSetCancelled {
				ev.ChangeSet.RejectedBy, ev.ChangeSet.DecisionNote = "carol", "not\ntonight"
			}
			body, err := notify.ChatBody(notify.TypeChat, lang, []notify.Event{ev})
			if err != nil {
				t.Fatal(err)
			}
			var p struct{ Text string }
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(p.Text, want) {
				t.Errorf("%s/%s/%s: %q lacks %q", c.kind, c.state, lang, p.Text, want)
			}
			for k := range en {
				if strings.Contains(p.Text, k) && !strings.HasPrefix(k, "trigger.") {
					t.Errorf("%s/%s/%s: key %q shows: %q", c.kind, c.state, lang, k, p.Text)
				}
			}
			if lang == "en" {
				if c.kind == "config.push_finished" && !strings.Contains(p.Text, "devices: 30 succeeded, 2 failed, 7 skipped, 0 interrupted; 1 still running") {
					t.Errorf("%s: no counts in %q", c.state, p.Text)
				}
				headline, _, _ := strings.Cut(p.Text, "\n")
				if other, dup := seen[headline]; dup {
					t.Errorf("%s and %s read the same: %q", other, c.state, headline)
				}
				seen[headline] = c.state
			}
		}
	}
}
