package admin

import (
	"net/http"
	"strings"

	"backupd/app/netguard"
	"backupd/web/ui/core"
)

// settingsOutbound is the outbound connections section: the allow list
// of link-local and cloud metadata addresses backupd may still connect
// to (webhooks, chat tools, SMTP, the git remote, devices), one address
// or CIDR prefix a line.
type settingsOutbound struct {
	Allow string
	Max   int
	// Error (with Args) refuses the list as typed.
	Error string
	Args  []any
}

// fillOutbound sets the section from the stored list unless typed.
func (u *handlers) fillOutbound(r *http.Request, o *settingsOutbound, typed bool) error {
	o.Max = netguard.MaxAllow
	if typed {
		return nil
	}
	p, err := netguard.Load(r.Context(), u.Store)
	if err != nil {
		return err
	}
	o.Allow = strings.Join(netguard.Strings(p.Allow), "\n")
	return nil
}

// saveOutbound stores the allow list; every node reads it where it
// connects, so it applies at once.
func (u *handlers) saveOutbound(w http.ResponseWriter, r *http.Request) error {
	text := r.PostFormValue("allow")
	refuse := func(key string, args ...any) error {
		p := settingsPage{Outbound: settingsOutbound{Allow: text, Error: key, Args: args}, outboundTyped: true}
		return u.renderSettings(w, r, http.StatusUnprocessableEntity, p)
	}
	if len(text) > 64<<10 {
		return refuse(keyOutboundErrTooMany, netguard.MaxAllow)
	}
	lines := strings.FieldsFunc(text, func(c rune) bool { return c == '\n' || c == '\r' || c == ',' })
	var entries []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			entries = append(entries, l)
		}
	}
	if len(entries) > netguard.MaxAllow {
		return refuse(keyOutboundErrTooMany, netguard.MaxAllow)
	}
	for _, e := range entries {
		if _, err := netguard.ParseAllow([]string{e}); err != nil {
			return refuse(keyOutboundErrInvalid, core.Truncate(e, 100))
		}
	}
	allow, err := netguard.ParseAllow(entries)
	if err != nil {
		return refuse(keyOutboundErrTooMany, netguard.MaxAllow)
	}
	if err := netguard.Save(r.Context(), u.Store, allow); err != nil {
		return err
	}
	u.AuditAs(r, "settings.update", "settings", netguard.SettingAllow, map[string]any{"allow": netguard.Strings(allow)})
	http.Redirect(w, r, "/settings?done=outbound_saved#outbound", http.StatusSeeOther)
	return nil
}
