package ui_test

import (
	"context"
	"html"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/db"
)

// csSecret is a BGP neighbour's password, in a line FRR's secret rules
// mask.
const csSecret = "Sup3rS3cret"

// holdsCSSecret reports whether a page shows csSecret, as written or
// escaped.
func holdsCSSecret(p page) bool {
	return strings.Contains(p.body, csSecret) || strings.Contains(html.UnescapeString(p.body), csSecret)
}

// The secrets a change set sends are masked as a restore's preview is:
// pat, who may push but not reveal secrets, never reads the password on
// any page of a snippet or of a template (its body, its variables, each
// device's lines), before the run or after (the devices' results and
// sessions), nor in the page's JSON, and may not ask for it; in a
// template the action that stands for it stays, and the variable it
// names is masked, the others not. root, who may reveal, sees the pages
// masked and offered a reveal; revealed, the password shows, and each
// revealed page is audited without it.
func TestChangeSetSecretsMasked(t *testing.T) {
	f := newChangeSetFixture(t)
	e := f.e
	ctx := context.Background()
	pat := f.signedIn("pat")
	form := changeSetForm("bgp password", "edge-frr", "branch-frr")
	form.Set("body", "router bgp 65001\n neighbor 192.0.2.10 password "+csSecret+"\n")
	form.Set("stop_after", "0")
	snippet := created(t, pat.createChangeSet(form))
	form = changeSetForm("bgp password from a variable", "edge-frr")
	form.Set("template", "1")
	form.Set("body", "router bgp 65001\n neighbor {{.Vars.peer}} password {{.Vars.pw}}\n")
	form.Set("variables", "peer=192.0.2.10\npw="+csSecret)
	tmpl := created(t, pat.createChangeSet(form))

	pages := func(id int64) []string {
		targets, err := e.store.ChangeSetTargets(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{changeSetPath(id)}
		for _, tg := range targets {
			out = append(out, changeSetPath(id)+"/devices/"+strconv.FormatInt(tg.ID, 10))
		}
		return out
	}
	masked := func(who string, b *browser, ids ...int64) {
		t.Helper()
		for _, id := range ids {
			for _, path := range pages(id) {
				p := b.get(path)
				expect(t, who+" "+path, p, http.StatusOK, "")
				if holdsCSSecret(p) {
					t.Errorf("%s reads the password on %s:\n%s", who, path, text(p))
				}
				expectText(t, who+" "+path, p, " neighbor ", " password <secret:")
				expectBody(t, who+" "+path, p, `id="secrets-bar"`)
			}
			if p := b.jobsCall(http.MethodGet, "/api"+changeSetPath(id), false); p.status != http.StatusOK || holdsCSSecret(p) ||
				strings.Contains(p.body, "neighbor") {
				t.Errorf("%s's JSON of %d: %d %s", who, id, p.status, p.body)
			}
		}
	}
	masked("pat", pat, snippet, tmpl)
	for _, path := range append(pages(snippet), pages(tmpl)...) {
		p := pat.get(path)
		if strings.Contains(p.body, `id="secrets-reveal"`) {
			t.Errorf("pat is offered a reveal on %s", path)
		}
		if q := pat.get(withReveal(path)); q.status != http.StatusForbidden || holdsCSSecret(q) {
			t.Errorf("pat asks to reveal %s: %d", path, q.status)
		}
	}
	p := pat.get(changeSetPath(tmpl))
	expectText(t, "the template", p, " neighbor {{.Vars.peer}} password {{.Vars.pw}}", "192.0.2.10",
		" neighbor 192.0.2.10 password <secret:")
	if vars := between(text(p), `id="changeset-variables"`, "</dl>"); !strings.Contains(vars, "192.0.2.10") ||
		!strings.Contains(vars, "<secret:") {
		t.Errorf("the variables: peer shown, pw masked:\n%s", vars)
	}

	root := f.signedIn("root")
	masked("root", root, snippet, tmpl)
	expectBody(t, "root's page", root.get(changeSetPath(snippet)), `id="secrets-reveal"`)
	if n := countAudit(e, "config.reveal"); n != 0 {
		t.Fatalf("%d reveals audited before any", n)
	}
	for _, path := range pages(tmpl) {
		p := root.get(withReveal(path))
		expect(t, "root reveals "+path, p, http.StatusOK, "")
		expectText(t, "root reveals "+path, p, " neighbor 192.0.2.10 password "+csSecret)
		expectBody(t, "root reveals "+path, p, `id="secrets-hide"`)
	}
	if n := countAudit(e, "config.reveal"); n != len(pages(tmpl)) {
		t.Errorf("%d reveals audited, want %d", n, len(pages(tmpl)))
	}
	entry := lastAudit(t, e, "config.reveal")
	if entry.Username != "root" || strings.Contains(string(mustJSON(t, entry.Details)), csSecret) {
		t.Errorf("the reveal's audit entry %+v", entry)
	}
	if p := root.get(changeSetPath(tmpl)); holdsCSSecret(p) {
		t.Error("the page shows the password again without a reveal")
	}

	// The snippet runs on both routers: their results and sessions keep
	// the password masked for pat.
	bo := f.signedIn("bo")
	bo.get(changeSetPath(snippet))
	expect(t, "bo approves", bo.post(changeSetPath(snippet)+"/approve", nil),
		http.StatusSeeOther, changeSetPath(snippet)+"?done=approved")
	if c := changeSetUntil(t, e, snippet, 60*time.Second, db.ChangeSetDone, db.ChangeSetStopped); c.State != db.ChangeSetDone {
		t.Fatalf("the set is %s: %s", c.State, deref(c.Error))
	}
	masked("pat after the run", pat, snippet)
	for _, path := range pages(snippet)[1:] {
		session := between(text(pat.get(path)), `id="changeset-transcript-text"`, "</pre>")
		if !strings.Contains(session, "neighbor 192.0.2.10 password <secret:") {
			t.Errorf("the session of %s does not show the line, masked:\n%s", path, session)
		}
	}
}

// between is the text of s from the first from to the next to.
func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}
