package notifications

import (
	"backupd/app/notify"
	"backupd/db"
	"backupd/db/outbox"
)

// The message keys that name channel types, SMTP securities, event
// kinds, rule scopes and delivery states.

// notifTypeKeys name each channel type.
var notifTypeKeys = map[string]string{
	db.ChannelWebhook:    keyNotifTypeWebhook,
	db.ChannelSlack:      keyNotifTypeSlack,
	db.ChannelMattermost: keyNotifTypeMattermost,
	db.ChannelTeams:      keyNotifTypeTeams,
	db.ChannelChat:       keyNotifTypeChat,
	db.ChannelEmail:      keyNotifTypeEmail,
}

// notifSecurityKeys name each SMTP connection security.
var notifSecurityKeys = map[string]string{
	notify.SecuritySTARTTLS: keyNotifSecuritySTARTTLS,
	notify.SecurityTLS:      keyNotifSecurityTLS,
	notify.SecurityNone:     keyNotifSecurityNone,
}

// notifEventKeys name each event kind.
var notifEventKeys = map[outbox.EventKind]string{
	outbox.EventConfigChanged:          keyNotifEventConfigChanged,
	outbox.EventFirstBackup:            keyNotifEventFirstBackup,
	outbox.EventBackupFailed:           keyNotifEventBackupFailed,
	outbox.EventBackupRecovered:        keyNotifEventBackupRecovered,
	outbox.EventDeviceUnreachable:      keyNotifEventDeviceUnreachable,
	outbox.EventDeviceReachable:        keyNotifEventDeviceReachable,
	outbox.EventHostKeyChanged:         keyNotifEventHostkeyChanged,
	outbox.EventBackupStale:            keyNotifEventBackupStale,
	outbox.EventRestoreRequested:       keyNotifEventRestoreRequested,
	outbox.EventRestoreApproved:        keyNotifEventRestoreApproved,
	outbox.EventRestoreSucceeded:       keyNotifEventRestoreSucceeded,
	outbox.EventRestoreFailed:          keyNotifEventRestoreFailed,
	outbox.EventRestoreRejected:        keyNotifEventRestoreRejected,
	outbox.EventRestoreExpired:         keyNotifEventRestoreExpired,
	outbox.EventGitPushFailed:          keyNotifEventGitPushFailed,
	outbox.EventGitPushRecovered:       keyNotifEventGitPushRecovered,
	outbox.EventPushRequested:          keyNotifEventPushRequested,
	outbox.EventPushFinished:           keyNotifEventPushFinished,
	outbox.EventInventorySyncFailed:    keyNotifEventInventorySyncFailed,
	outbox.EventInventorySyncRecovered: keyNotifEventInventorySyncRecovered,
}

// notifScopeKeys name each rule scope in the list.
var notifScopeKeys = map[string]string{
	db.RuleScopeAll:     keyNotifScopeAll,
	db.RuleScopeGroups:  keyNotifScopeGroupsCount,
	db.RuleScopeDevices: keyNotifScopeDevicesCount,
}

// notifStateKeys name each delivery state.
var notifStateKeys = map[string]string{
	outbox.DeliveryPending: keyNotifStatePending,
	outbox.DeliverySending: keyNotifStateSending,
	outbox.DeliveryFailed:  keyNotifStateFailed,
	outbox.DeliverySent:    keyNotifStateSent,
	outbox.DeliveryGaveUp:  keyNotifStateGaveUp,
}
