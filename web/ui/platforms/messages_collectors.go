package platforms

// Message keys of the Collectors page; texts in
// embed/i18n/ui/collectors.*.json.
const (
	keyCollTitle      = "collectors.title"
	keyCollTitleToken = "collectors.token.title"

	keyCollZoneCreated  = "collectors.notice.zone_created"
	keyCollRevoked      = "collectors.notice.revoked"
	keyCollTokenRevoked = "collectors.notice.token_revoked"

	keyCollStateOnline  = "collectors.state.online"
	keyCollStateOffline = "collectors.state.offline"
	keyCollStateRevoked = "collectors.state.revoked"

	keyCollErrZoneName   = "collectors.error.zone_name"
	keyCollErrZoneExists = "collectors.error.zone_exists"
	keyCollErrTokenZone  = "collectors.error.token_zone"
	keyCollErrTokenUsed  = "collectors.error.token_used"
)
