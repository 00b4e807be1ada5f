package platforms

// Message keys of the Platforms pages.
const (
	keyPlatTitle     = "platforms.title"
	keyPlatTitleNew  = "platforms.form.title_new"
	keyPlatTitleEdit = "platforms.form.title"

	keyPlatCreated  = "platforms.notice.created"
	keyPlatUpdated  = "platforms.notice.updated"
	keyPlatDeleted  = "platforms.notice.deleted"
	keyPlatImported = "platforms.notice.imported"
	keyPlatBroken   = "platforms.broken"

	keyPlatErrFieldTooLong   = "platforms.error.field_too_long"
	keyPlatErrOther          = "platforms.error.other"
	keyPlatErrInUse          = "platforms.error.in_use"
	keyPlatErrExists         = "platforms.error.exists"
	keyPlatErrTooMany        = "platforms.error.too_many_platforms"
	keyPlatErrImportNoFile   = "platforms.error.import_no_file"
	keyPlatErrTestNoTarget   = "platforms.test.error.no_target"
	keyPlatErrTestNoDevice   = "platforms.test.error.no_device"
	keyPlatErrTestDevicePerm = "platforms.test.error.device_permission"
	keyPlatErrTestRemoteZone = "platforms.test.error.remote_zone"
	keyPlatErrTestTarget     = "platforms.test.error.target"
	keyPlatErrTestHost       = "platforms.test.error.host"
	keyPlatErrTestPort       = "platforms.test.error.port"
	keyPlatErrTestTransport  = "platforms.test.error.transport"
	keyPlatErrTestBusy       = "platforms.test.error.busy"

	keyPlatErrBadDocument      = "platforms.error.bad_document"
	keyPlatErrTooLarge         = "platforms.error.too_large"
	keyPlatErrBadSchema        = "platforms.error.bad_schema"
	keyPlatErrRequired         = "platforms.error.required"
	keyPlatErrBadID            = "platforms.error.bad_id"
	keyPlatErrBuiltinID        = "platforms.error.builtin_id"
	keyPlatErrTooLong          = "platforms.error.too_long"
	keyPlatErrTooManyRules     = "platforms.error.too_many"
	keyPlatErrBadPattern       = "platforms.error.bad_pattern"
	keyPlatErrMatchesEmpty     = "platforms.error.matches_empty"
	keyPlatErrNotPrintable     = "platforms.error.not_printable"
	keyPlatErrUnknownTransport = "platforms.error.unknown_transport"
	keyPlatErrExecNeedsSSH     = "platforms.error.exec_needs_ssh"
	keyPlatErrNoSecretGroup    = "platforms.error.no_secret_group"
	keyPlatErrSecretForm       = "platforms.error.secret_form"
	keyPlatErrSecretLine       = "platforms.error.secret_line"

	keyPlatErrUnknownRestoreMethod = "platforms.error.unknown_restore_method"
	keyPlatErrNotForMethod         = "platforms.error.not_for_method"
	keyPlatErrOutOfRange           = "platforms.error.out_of_range"
	keyPlatErrBadFile              = "platforms.error.bad_file"
	keyPlatErrNotANumber           = "platforms.error.not_a_number"
)

// The restore methods' names in the form's list (restoreMethodKeys).
const (
	keyPlatRestoreFRR   = "platforms.restore.method.frr_vtysh"
	keyPlatRestoreJunos = "platforms.restore.method.junos_commit_confirmed"
	keyPlatRestoreIOS   = "platforms.restore.method.ios_configure_replace"
	keyPlatRestoreVyOS  = "platforms.restore.method.vyos_commit_confirm"
	keyPlatRestoreEOS   = "platforms.restore.method.eos_session"
	keyPlatRestoreROS   = "platforms.restore.method.routeros_reset_import"
)
