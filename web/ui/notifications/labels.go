package notifications

import (
	"backupd/app/notify"
	"backupd/db"
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
var notifEventKeys = map[db.EventKind]string{
	db.EventConfigChanged:     keyNotifEventConfigChanged,
	db.EventFirstBackup:       keyNotifEventFirstBackup,
	db.EventBackupFailed:      keyNotifEventBackupFailed,
	db.EventBackupRecovered:   keyNotifEventBackupRecovered,
	db.EventDeviceUnreachable: keyNotifEventDeviceUnreachable,
	db.EventDeviceReachable:   keyNotifEventDeviceReachable,
	db.EventHostKeyChanged:    keyNotifEventHostkeyChanged,
	db.EventBackupStale:       keyNotifEventBackupStale,
	db.EventGitPushFailed:     keyNotifEventGitPushFailed,
	db.EventGitPushRecovered:  keyNotifEventGitPushRecovered,
}

// notifScopeKeys name each rule scope in the list.
var notifScopeKeys = map[string]string{
	db.RuleScopeAll:     keyNotifScopeAll,
	db.RuleScopeGroups:  keyNotifScopeGroupsCount,
	db.RuleScopeDevices: keyNotifScopeDevicesCount,
}

// notifStateKeys name each delivery state.
var notifStateKeys = map[string]string{
	db.DeliveryPending: keyNotifStatePending,
	db.DeliverySending: keyNotifStateSending,
	db.DeliveryFailed:  keyNotifStateFailed,
	db.DeliverySent:    keyNotifStateSent,
	db.DeliveryGaveUp:  keyNotifStateGaveUp,
}
