// Package notify tells people outside backupd what happened: it renders
// events (a configuration changed, a backup failed, a device went
// unreachable, …) in the documented "backupd.event/v1" form and delivers
// one batch of them to one channel — a signed webhook, a chat incoming
// webhook (Slack, Mattermost, Microsoft Teams, generic) or an e-mail over
// SMTP. It keeps no state: what to send, when, and how often to retry is
// the caller's (the outbox and its delivery worker); Send only delivers
// and classifies the result as sent, worth retrying, or permanent.
//
// # Webhook payload
//
// A webhook delivery is a POST of application/json, always an envelope
// with a list of events (one, or several for a digest):
//
//	POST /your/hook HTTP/1.1
//	Content-Type: application/json
//	X-Backupd-Event: config.changed        (the kind, or "digest")
//	X-Backupd-Delivery: 812-3              (the same on every retry)
//	X-Backupd-Signature: sha256=5d1c…      (hex HMAC-SHA256 of the body, keyed with the channel's secret)
//
//	{"schema": "backupd.event/v1", "delivery_id": "812-3", "events": [{
//	  "schema": "backupd.event/v1", "id": "812", "event": "config.changed",
//	  "at": "2026-11-25T13:40:00Z", "trigger": "schedule",
//	  "device": {"id": 7, "name": "core-1", "host": "10.0.0.1", "platform": "cisco_ios",
//	             "group_path": ["Sites", "Berlin"]},
//	  "backup": {"id": "b2", "previous_id": "b1", "started_at": "2026-11-25T13:39:58Z",
//	             "lines_added": 3, "lines_removed": 1},
//	  "diff": {"unified": "--- core-1\t…\n+++ core-1\t…\n@@ -1,7 +1,7 @@\n…", "truncated": false,
//	           "total_lines": 13, "noise_lines": [5, 6]},
//	  "url": "https://backupd.example.net/…"}]}
//
// "failure" ({"stage", "reason", "consecutive"}) comes with backup.failed
// and device.unreachable, "stale" ({"last_good_at", "threshold_seconds"})
// with backup.stale; "failure" and "git" ({"remote", "attempts"}) with
// the system events git.push_failed and git.push_recovered; "change_set"
// (the set's id, name, state, people, device counts and path, never its
// commands) with the system events config.push_requested and
// config.push_finished; "failure" and "inventory_source" ({"id", "name",
// "kind", "path"}, never its token) with the system events
// inventory.sync_failed and inventory.sync_recovered; system events
// alone have no "device" and match
// only rules of scope all; "restore" with the config.restore_* events (and
// "backup", with the diff of what the restore would change, with
// config.restore_requested); "diff" only when the rule includes diffs (a
// diff may hold secrets of the configuration). A receiver checks the signature
// over the raw bytes it received, in constant time, and drops a
// delivery_id it has already processed: a retry, also one after the
// sending process crashed or restarted, sends the same body under the
// same delivery_id, and events recorded meanwhile come in another
// delivery. Any 2xx answer is success; a
// redirect or a 4xx other than 408 and 429 is not retried; anything else
// is.
//
// # Chat and e-mail
//
// Chat messages are short: a headline (the device and what happened, or a
// digest's counts), the particulars, a link when the server knows its
// public URL; a digest lists every device that fits in ChatMaxRunes and
// counts the rest. The exact formats are described at ChatBody. E-mail is
// one multipart/alternative message (text and HTML) per delivery, in the
// channel's language, with diffs where the rule includes them.
package notify
