package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/app/notify"
	"backupd/db"
	"backupd/db/outbox"
)

// schemaDef is the part of JSON Schema docs/backupd.event.v1.schema.json uses.
type schemaDef struct {
	Ref        string                `json:"$ref"`
	Type       any                   `json:"type"`
	Required   []string              `json:"required"`
	Properties map[string]*schemaDef `json:"properties"`
	Items      *schemaDef            `json:"items"`
	Defs       map[string]*schemaDef `json:"$defs"`
	Const      any                   `json:"const"`
	Enum       []string              `json:"enum"`
	AllOf      []*schemaDef          `json:"allOf"`
	If         *schemaDef            `json:"if"`
	Then       *schemaDef            `json:"then"`
	Else       *schemaDef            `json:"else"`
}

func loadSchema(t *testing.T) *schemaDef {
	t.Helper()
	raw, err := os.ReadFile("../../docs/backupd.event.v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s schemaDef
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// jsonFields are the JSON names of a struct's fields and whether each is
// omitted when empty.
func jsonFields(typ reflect.Type) map[string]bool {
	out := map[string]bool{}
	for f := range typ.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		out[name] = strings.Contains(opts, "omitempty")
	}
	return out
}

// The published schema names exactly the payload's fields, and requires
// those that are always sent.
func TestSchemaMatchesThePayload(t *testing.T) {
	s := loadSchema(t)
	for def, typ := range map[*schemaDef]reflect.Type{
		s: reflect.TypeFor[notify.Envelope](), s.Defs["event"]: reflect.TypeFor[notify.Event](),
		s.Defs["device"]: reflect.TypeFor[notify.Device](), s.Defs["backup"]: reflect.TypeFor[notify.Backup](),
		s.Defs["failure"]: reflect.TypeFor[notify.Failure](), s.Defs["diff"]: reflect.TypeFor[notify.Diff](),
		s.Defs["stale"]: reflect.TypeFor[notify.Stale](), s.Defs["git"]: reflect.TypeFor[notify.Git](),
		s.Defs["restore"]: reflect.TypeFor[notify.Restore](), s.Defs["change_set"]: reflect.TypeFor[notify.ChangeSet](),
		s.Defs["inventory_source"]: reflect.TypeFor[notify.InventorySource](),
	} {
		if def == nil {
			t.Errorf("%s has no definition in the schema", typ.Name())
			continue
		}
		fields := jsonFields(typ)
		for name, omit := range fields {
			if def.Properties[name] == nil {
				t.Errorf("%s.%s is not in the schema", typ.Name(), name)
			}
			if !omit && !slices.Contains(def.Required, name) && name != "last_good_at" {
				t.Errorf("%s.%s is always sent but not required", typ.Name(), name)
			}
		}
		for name := range def.Properties {
			if _, ok := fields[name]; !ok {
				t.Errorf("the schema's %s.%s is no field", typ.Name(), name)
			}
		}
	}
	for _, k := range outbox.EventKinds {
		if !slices.Contains(s.Defs["event"].Properties["event"].Enum, string(k)) {
			t.Errorf("kind %s not in the schema", k)
		}
	}
	if len(outbox.EventKinds) < 16 {
		t.Errorf("only %d event kinds", len(outbox.EventKinds))
	}
	// Every state a restore event may name (all but the steps in between
	// and a cancel, which are not told), and only those.
	states := slices.DeleteFunc(slices.Clone(db.RestoreStates), func(st string) bool {
		return st == db.RestorePreviewing || st == db.RestoreQueued || st == db.RestoreRunning || st == db.RestoreCancelled
	})
	got := slices.Clone(s.Defs["restore"].Properties["state"].Enum)
	slices.Sort(states)
	slices.Sort(got)
	if !slices.Equal(got, states) {
		t.Errorf("the schema's restore states %v; want %v", got, states)
	}
}

// check validates v against def (the subset of JSON Schema the file uses).
func (s *schemaDef) check(root *schemaDef, v any, path string) error {
	if s.Ref != "" {
		return root.Defs[strings.TrimPrefix(s.Ref, "#/$defs/")].check(root, v, path)
	}
	if s.Const != nil && v != s.Const {
		return fmt.Errorf("%s: %v, want %v", path, v, s.Const)
	}
	if s.Enum != nil && !slices.Contains(s.Enum, fmt.Sprint(v)) {
		return fmt.Errorf("%s: %v not in %v", path, v, s.Enum)
	}
	for _, sub := range s.AllOf {
		if err := sub.check(root, v, path); err != nil {
			return err
		}
	}
	switch x := v.(type) {
	case map[string]any:
		if s.If != nil {
			// if: the listed properties present match; then or else applies.
			branch := s.Then
			for k, p := range s.If.Properties {
				if sub, ok := x[k]; ok && p.check(root, sub, path+"."+k) != nil {
					branch = s.Else
				}
			}
			if branch != nil {
				for _, r := range branch.Required {
					if _, ok := x[r]; !ok {
						return fmt.Errorf("%s: lacks %s", path, r)
					}
				}
			}
		}
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				return fmt.Errorf("%s: lacks %s", path, r)
			}
		}
		for k, sub := range x {
			if s.Properties == nil {
				break // a part of allOf, with conditions only
			}
			p := s.Properties[k]
			if p == nil {
				return fmt.Errorf("%s: %s is not in the schema", path, k)
			}
			if err := p.check(root, sub, path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i, sub := range x {
			if s.Items != nil {
				if err := s.Items.check(root, sub, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// A digest the worker really sent (a change with its diff and link, a
// failure) conforms to the schema.
func TestWorkerPayloadConformsToTheSchema(t *testing.T) {
	f := newFleetStore(t, 2)
	var body []byte
	srv := newServer(t, httpRecorder(&body))
	f.channel(t, hookChannel("h", srv.URL, "s"), true)
	f.change(t, 0, 1)
	f.attempt(t, f.devs[1], failedOutcome())
	pass(t, f.worker(notify.WorkerOptions{PublicURL: "https://backupd.example"}))
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	s := loadSchema(t)
	if err := s.check(s, v, "body"); err != nil {
		t.Fatal(err)
	}
	if n := len(v.(map[string]any)["events"].([]any)); n != 2 {
		t.Fatalf("%d events", n)
	}
}

// A git push event, a system event, is sent without a device, with the
// remote, the attempts, the failure and a link to the settings, and
// conforms to the schema; a device event without its device does not.
func TestGitPushEventConformsToTheSchema(t *testing.T) {
	f := newFleetStore(t, 1)
	ctx := context.Background()
	var body []byte
	srv := newServer(t, httpRecorder(&body))
	ch := f.channel(t, hookChannel("h", srv.URL, "s"), false)
	if _, err := f.s.CreateNotificationRule(ctx, db.NotificationRule{Name: "git", Enabled: true, Scope: db.RuleScopeAll,
		Events: []outbox.EventKind{outbox.EventGitPushFailed}, ChannelIDs: []int64{ch}, FailureThreshold: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.RecordGitPush(ctx, db.GitPushStatus{At: time.Now(), Error: "remote: refused by policy"},
		"https://git.example.com/net.git", 3); err != nil {
		t.Fatal(err)
	}
	pass(t, f.worker(notify.WorkerOptions{PublicURL: "https://backupd.example"}))
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	s := loadSchema(t)
	if err := s.check(s, v, "body"); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	ev := v["events"].([]any)[0].(map[string]any)
	if _, has := ev["device"]; has || ev["event"] != "git.push_failed" || ev["url"] != "https://backupd.example/settings#git" {
		t.Fatalf("event: %s", body)
	}
	if g := ev["git"].(map[string]any); g["remote"] != "https://git.example.com/net.git" || g["attempts"] != 3.0 {
		t.Fatalf("git: %s", body)
	}
	ev["event"] = "backup.failed"
	if err := s.check(s, v, "body"); err == nil || !strings.Contains(err.Error(), "lacks device") {
		t.Fatalf("a device event without its device: %v", err)
	}
}
