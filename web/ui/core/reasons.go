package core

import (
	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/db/queue"
)

// A failed backup is stored with its message, the device's or the
// network's own words in English, and its reason, a class the interface
// says in the page's language before the message.

// reasonKeys are the message keys of the failure reasons.
var reasonKeys = map[string]string{
	collect.ReasonConnect:           keyReasonConnect,
	collect.ReasonAuth:              keyReasonAuth,
	collect.ReasonHostKeyChanged:    keyReasonHostKeyChanged,
	collect.ReasonTimeout:           keyReasonTimeout,
	collect.ReasonEnable:            keyReasonEnable,
	collect.ReasonOutputTooLarge:    keyReasonOutputTooLarge,
	collect.ReasonProtocol:          keyReasonProtocol,
	collect.ReasonRefused:           keyReasonRefused,
	backup.ReasonAddressUnconfirmed: keyReasonAddressUnconfirmed,
	backup.ReasonNoCredential:       keyReasonNoCredential,
	backup.ReasonConfig:             keyReasonConfig,
	backup.ReasonEmpty:              keyReasonEmpty,
	queue.ReasonInterrupted:         keyReasonInterrupted,
	queue.ReasonCancelled:           keyReasonCancelled,
}

// ReasonText is a failure reason as the language lang says it, "" for
// none or one the interface has no words for (the message then stands
// alone).
func (u *UI) ReasonText(lang, reason string) string {
	if key, ok := reasonKeys[reason]; ok {
		return u.Text(lang, key)
	}
	return ""
}

// Reason is ReasonText in the page's language, for templates:
//
//	{{with $.Reason .ErrorReason}}<strong class="error-reason">{{.}}</strong>{{end}}
func (v *View) Reason(reason string) string { return v.ui.ReasonText(v.Lang, reason) }
