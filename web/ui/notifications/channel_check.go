package notifications

import (
	"net/http"

	"backupd/app/notify"
)

// "Send test": the test event delivered to a stored channel now
// (notify.SendTest), and the answer shown on its page.

// notifTestResult is how "Send test" went.
type notifTestResult struct {
	OK     bool
	Status string
	Error  string
}

func (u *handlers) testChannel(w http.ResponseWriter, r *http.Request) error {
	c, err := u.pathChannel(r)
	if err != nil {
		return err
	}
	f, hasSecret := fieldsOf(c)
	p := notifChannelForm{ID: c.ID, Heading: c.Name, Editable: true, Fields: f, HasSecret: hasSecret}
	// Its error names what failed, never a secret (notify's errors do
	// not hold one).
	res := notify.SendTest(r.Context(), u.Store, u.Sealer, c, notify.Options{
		UserAgent: "backupd/" + u.Version, Timeout: notifTestTimeout, Now: u.Now,
	})
	p.Test = &notifTestResult{OK: res.OK(), Status: res.Status}
	if res.Err != nil {
		p.Test.Error = res.Err.Error()
	}
	u.Audit(r, "notification_channel.test", "notification_channel", c.ID, map[string]any{"name": c.Name,
		"ok": p.Test.OK, "status": p.Test.Status})
	return u.renderChannelForm(w, r, http.StatusOK, p)
}
