package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// ChatMaxRunes bounds a chat message's text: well inside what each tool
// shows without folding it away (Slack cuts a section at 3,000
// characters, Mattermost posts at 16,383, Teams cards at ~28 KB). A
// digest that would be longer ends with "and N more".
const ChatMaxRunes = 3000

// A chat flavour is how one tool marks up text.
type flavour struct {
	bold func(string) string
	esc  func(string) string
	link func(url, label string) string
	// lineLink is the short link at the end of a digest's line.
	lineLink func(url string) string
}

var (
	// Slack mrkdwn: only &, < and > need escaping; links are <url|label>.
	slackFlavour = flavour{
		bold:     func(s string) string { return "*" + s + "*" },
		esc:      strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace,
		link:     func(url, label string) string { return "<" + url + "|" + label + ">" },
		lineLink: func(url string) string { return "<" + url + "|↗>" },
	}
	// Markdown (Mattermost, Teams' TextBlock): backslash-escape what
	// could format a device name.
	markdownFlavour = flavour{
		bold:     func(s string) string { return "**" + s + "**" },
		esc:      markdownEscaper.Replace,
		link:     func(url, label string) string { return "[" + label + "](" + url + ")" },
		lineLink: func(url string) string { return "[↗](" + url + ")" },
	}
	plainFlavour = flavour{
		bold:     func(s string) string { return s },
		esc:      func(s string) string { return s },
		link:     func(url, label string) string { return label + ": " + url },
		lineLink: func(url string) string { return url },
	}
	markdownEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`,
		"<", `\<`, ">", `\>`, "#", `\#`, "|", `\|`, "~", `\~`)
)

// chatLines renders a delivery as a headline and one line per event,
// within ChatMaxRunes: events that do not fit are counted in a last
// "and N more" line.
func chatLines(lang string, events []Event, f flavour) (headline string, lines []string) {
	headline = f.bold(f.esc(title(lang, events)))
	budget := ChatMaxRunes - utf8.RuneCountInString(headline) - 40
	if len(events) == 1 {
		e := events[0]
		if d := details(lang, e); len(d) > 0 {
			lines = append(lines, f.esc(strings.Join(d, "; ")))
		}
		if e.URL != "" {
			lines = append(lines, f.link(e.URL, f.esc(tr(lang, "link.view"))))
		}
		return headline, fitLines(lang, lines, budget)
	}
	for _, e := range ordered(events) {
		l := "• " + f.esc(summary(lang, e))
		if e.URL != "" {
			l += " " + f.lineLink(e.URL)
		}
		lines = append(lines, l)
	}
	return headline, fitLines(lang, lines, budget)
}

// fitLines keeps the lines that fit in budget runes and replaces the
// rest by "and N more".
func fitLines(lang string, lines []string, budget int) []string {
	used := 0
	for i, l := range lines {
		n := utf8.RuneCountInString(l) + 1
		if used+n > budget {
			return append(lines[:i:i], tr(lang, "digest.more", len(lines)-i))
		}
		used += n
	}
	return lines
}

type textPayload struct {
	Text string `json:"text"`
}

// ChatBody is the JSON posted to a chat channel of type typ, in the form
// each tool's incoming webhook accepts:
//   - Slack: {"text": mrkdwn} — the plain incoming-webhook message
//     (https://api.slack.com/messaging/webhooks); Slack answers 200 "ok".
//   - Mattermost: {"text": Markdown} — its Slack-compatible incoming
//     webhook (https://developers.mattermost.com/integrate/webhooks/incoming/).
//   - Microsoft Teams: a message with one Adaptive Card 1.4 attachment
//     ({"type":"message","attachments":[{"contentType":
//     "application/vnd.microsoft.card.adaptive","content":{…}}]}), the
//     form the Workflows "post to a channel when a webhook request is
//     received" trigger and the older connectors both take.
//   - generic chat: {"text": plain text}, which Rocket.Chat, Zulip's
//     Slack-compatible hook, Google Chat and most others accept.
func ChatBody(typ, lang string, events []Event) ([]byte, error) {
	lang = pickLanguage(lang)
	switch typ {
	case TypeSlack:
		h, lines := chatLines(lang, events, slackFlavour)
		return json.Marshal(textPayload{Text: strings.Join(append([]string{h}, lines...), "\n")})
	case TypeMattermost:
		h, lines := chatLines(lang, events, markdownFlavour)
		return json.Marshal(textPayload{Text: strings.Join(append([]string{h}, lines...), "\n")})
	case TypeChat:
		h, lines := chatLines(lang, events, plainFlavour)
		return json.Marshal(textPayload{Text: strings.Join(append([]string{h}, lines...), "\n")})
	case TypeTeams:
		return json.Marshal(teamsCard(lang, events))
	}
	return nil, fmt.Errorf("not a chat channel type: %q", typ)
}

type teamsMessage struct {
	Type        string            `json:"type"`
	Attachments []teamsAttachment `json:"attachments"`
}

type teamsAttachment struct {
	ContentType string       `json:"contentType"`
	ContentURL  *string      `json:"contentUrl"`
	Content     adaptiveCard `json:"content"`
}

type adaptiveCard struct {
	Schema  string           `json:"$schema"`
	Type    string           `json:"type"`
	Version string           `json:"version"`
	Body    []adaptiveBlock  `json:"body"`
	Actions []adaptiveAction `json:"actions,omitempty"`
}

type adaptiveBlock struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Wrap    bool   `json:"wrap"`
	Weight  string `json:"weight,omitempty"`
	Size    string `json:"size,omitempty"`
	Spacing string `json:"spacing,omitempty"`
}

type adaptiveAction struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

func teamsCard(lang string, events []Event) teamsMessage {
	f := markdownFlavour
	card := adaptiveCard{
		Schema:  "http://adaptivecards.io/schemas/adaptive-card.json",
		Type:    "AdaptiveCard",
		Version: "1.4",
	}
	card.Body = append(card.Body, adaptiveBlock{Type: "TextBlock", Text: f.esc(title(lang, events)), Wrap: true, Weight: "Bolder", Size: "Medium"})
	var lines []string
	if len(events) == 1 {
		if d := details(lang, events[0]); len(d) > 0 {
			lines = append(lines, f.esc(strings.Join(d, "; ")))
		}
		if events[0].URL != "" {
			card.Actions = []adaptiveAction{{Type: "Action.OpenUrl", Title: tr(lang, "link.view"), URL: events[0].URL}}
		}
	} else {
		for _, e := range ordered(events) {
			l := "- " + f.esc(summary(lang, e))
			if e.URL != "" {
				l += " " + f.lineLink(e.URL)
			}
			lines = append(lines, l)
		}
	}
	for _, l := range fitLines(lang, lines, ChatMaxRunes) {
		card.Body = append(card.Body, adaptiveBlock{Type: "TextBlock", Text: l, Wrap: true, Spacing: "Small"})
	}
	return teamsMessage{Type: "message", Attachments: []teamsAttachment{{ContentType: "application/vnd.microsoft.card.adaptive", Content: card}}}
}

func sendChat(ctx context.Context, ch Channel, events []Event, opts Options) Result {
	body, err := ChatBody(ch.Type, ch.Language, events)
	if err != nil {
		return Result{Permanent: true, Err: err}
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	skip := ch.Chat != nil && ch.Chat.SkipVerify
	return post(ctx, string(ch.Secret), body, h, skip, opts)
}
