package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"backupd/app/notify"
)

func keysOf(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// Each chat type gets the shape its tool's incoming webhook takes, over a
// real HTTP post; the URL (the channel's secret) is where it goes.
func TestChatDelivery(t *testing.T) {
	rc := &receiver{answer: "ok"}
	srv := newServer(t, rc)
	ev := changedEvent(7, "core-1")
	for _, tc := range []struct {
		typ, lang string
		want      []string
	}{
		{notify.TypeSlack, "en", []string{"*backupd: core-1 (10.0.0.1): configuration changed*", "+3 −1 lines", "<https://backupd.example.net/devices/7/diff?from=b1&to=b2|View in backupd>"}},
		{notify.TypeMattermost, "en", []string{"**backupd: core-1 (10.0.0.1): configuration changed**", "[View in backupd](https://backupd.example.net/devices/7/diff?from=b1&to=b2)"}},
		{notify.TypeChat, "zh", []string{"backupd：core-1 (10.0.0.1)：配置已变更", "+3 −1 行", "在 backupd 中查看: https://backupd.example.net/devices/7/diff?from=b1&to=b2"}},
	} {
		ch := notify.Channel{Type: tc.typ, Language: tc.lang, Secret: []byte(srv.URL + "/services/T1/B2/xyz")}
		res := notify.Send(context.Background(), ch, []notify.Event{ev}, notify.Options{})
		if !res.OK() {
			t.Fatalf("%s: %+v", tc.typ, res)
		}
		r := rc.last(t)
		var body map[string]any
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		if k := keysOf(body); len(k) != 1 || k[0] != "text" {
			t.Errorf("%s: fields %v, want only text", tc.typ, k)
		}
		text, _ := body["text"].(string)
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q not in\n%s", tc.typ, w, text)
			}
		}
		if r.header.Get(notify.HeaderSignature) != "" {
			t.Errorf("%s: chat post carries a signature", tc.typ)
		}
	}
}

// The Teams message: one Adaptive Card attachment in the envelope the
// incoming webhooks (Workflows and connectors) accept.
func TestTeamsCard(t *testing.T) {
	rc := &receiver{status: 202}
	srv := newServer(t, rc)
	ch := notify.Channel{Type: notify.TypeTeams, Language: "en", Secret: []byte(srv.URL + "/webhookb2/abc")}
	if res := notify.Send(context.Background(), ch, []notify.Event{failedEvent(8, "edge_2")}, notify.Options{}); !res.OK() || res.Status != "202" {
		t.Fatalf("%+v", res)
	}
	var msg struct {
		Type        string `json:"type"`
		Attachments []struct {
			ContentType string  `json:"contentType"`
			ContentURL  *string `json:"contentUrl"`
			Content     struct {
				Schema  string `json:"$schema"`
				Type    string `json:"type"`
				Version string `json:"version"`
				Body    []struct {
					Type, Text string
					Wrap       bool
				} `json:"body"`
				Actions []struct{ Type, Title, URL string } `json:"actions"`
			} `json:"content"`
		} `json:"attachments"`
	}
	if err := json.Unmarshal(rc.last(t).body, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || len(msg.Attachments) != 1 {
		t.Fatalf("envelope %+v", msg)
	}
	a := msg.Attachments[0]
	if a.ContentType != "application/vnd.microsoft.card.adaptive" || a.Content.Type != "AdaptiveCard" || a.Content.Version != "1.4" ||
		a.Content.Schema != "http://adaptivecards.io/schemas/adaptive-card.json" {
		t.Errorf("card %+v", a)
	}
	var texts []string
	for _, b := range a.Content.Body {
		if b.Type != "TextBlock" || !b.Wrap {
			t.Errorf("block %+v", b)
		}
		texts = append(texts, b.Text)
	}
	all := strings.Join(texts, "\n")
	for _, w := range []string{`edge\_2 (10.0.0.2): backup failed`, "at login: authentication refused", "3 failures in a row"} {
		if !strings.Contains(all, w) {
			t.Errorf("%q not in card:\n%s", w, all)
		}
	}
	if len(a.Content.Actions) != 0 {
		t.Errorf("an event without URL has actions %+v", a.Content.Actions)
	}
	ev := changedEvent(7, "core-1")
	body, _ := notify.ChatBody(notify.TypeTeams, "en", []notify.Event{ev})
	if !strings.Contains(string(body), `"actions":[{"type":"Action.OpenUrl","title":"View in backupd","url":"https://backupd.example.net/devices/7/diff?from=b1\u0026to=b2"}]`) {
		t.Errorf("no link action: %s", body)
	}
}

// A digest lists every device while it fits and counts the rest; the
// whole text stays bounded.
func TestChatDigestBounded(t *testing.T) {
	for _, n := range []int{3, 2000} {
		var events []notify.Event
		for i := range n {
			e := changedEvent(int64(i), fmt.Sprintf("sw-%04d", i))
			if i%10 == 0 {
				e = failedEvent(int64(i), fmt.Sprintf("sw-%04d", i))
			}
			events = append(events, e)
		}
		for _, typ := range []string{notify.TypeSlack, notify.TypeMattermost, notify.TypeChat, notify.TypeTeams} {
			body, err := notify.ChatBody(typ, "en", events)
			if err != nil {
				t.Fatal(err)
			}
			var text string
			if typ == notify.TypeTeams {
				text = string(body) // bounded as a whole
			} else {
				var p struct{ Text string }
				_ = json.Unmarshal(body, &p)
				text = p.Text
			}
			if !strings.Contains(text, fmt.Sprintf("%d events on %d devices", n, n)) {
				t.Errorf("%s/%d: no count in headline", typ, n)
			}
			listed := len(regexp.MustCompile(`sw-\d{4}`).FindAllString(text, -1))
			more := 0
			if m := regexp.MustCompile(`and (\d+) more`).FindStringSubmatch(text); m != nil {
				more, _ = strconv.Atoi(m[1])
			}
			if listed+more != n {
				t.Errorf("%s/%d: %d listed + %d more", typ, n, listed, more)
			}
			if n == 3 && more != 0 {
				t.Errorf("%s: a small digest was cut", typ)
			}
			if typ != notify.TypeTeams && utf8.RuneCountInString(text) > notify.ChatMaxRunes {
				t.Errorf("%s/%d: %d runes", typ, n, utf8.RuneCountInString(text))
			}
			if typ == notify.TypeTeams && len(body) > 28<<10 {
				t.Errorf("teams/%d: %d bytes, over the 28 KB Teams takes", n, len(body))
			}
			// Failures come first.
			if n == 2000 && !strings.Contains(text, "sw-0000 (10.0.0.2): backup failed") {
				t.Errorf("%s: the first failure is not listed", typ)
			}
		}
	}
}

// A device name cannot mention everyone, inject a link or break a line.
func TestChatEscaping(t *testing.T) {
	ev := changedEvent(1, "<!channel> & *bold* [x](http://evil)\nsecond line")
	ev.URL = ""
	cases := map[string][]string{
		notify.TypeSlack:      {"&lt;!channel&gt; &amp;"},
		notify.TypeMattermost: {`\<!channel\> & \*bold\* \[x\](http://evil)`},
	}
	for typ, want := range cases {
		body, _ := notify.ChatBody(typ, "en", []notify.Event{ev})
		var p struct{ Text string }
		_ = json.Unmarshal(body, &p)
		for _, w := range want {
			if !strings.Contains(p.Text, w) {
				t.Errorf("%s: %q not in %q", typ, w, p.Text)
			}
		}
		if strings.Contains(p.Text, "<!channel>") || strings.Contains(p.Text, "\nsecond line") {
			t.Errorf("%s: unescaped: %q", typ, p.Text)
		}
	}
}
