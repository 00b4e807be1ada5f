package overview

// Message keys of the jobs and configuration search pages.
const (
	keyTitleDash = "title.dashboard"

	keyTitleJobs   = "jobs.title"
	keyTitleSearch = "search.title"

	keyTitleChanges        = "changes.title"
	keyChangesBadFrom      = "changes.error.from"
	keyChangesBadTo        = "changes.error.to"
	keyChangesToBeforeFrom = "changes.error.order"
	keyChangesRange24h     = "changes.range.24h"
	keyChangesRange7d      = "changes.range.7d"
	keyChangesRange30d     = "changes.range.30d"

	keyJobStateQueued    = "jobs.state.queued"
	keyJobStateRunning   = "jobs.state.running"
	keyJobStateSucceeded = "jobs.state.succeeded"
	keyJobStateFailed    = "jobs.state.failed"
	keyJobStateCancelled = "jobs.state.cancelled"

	keyJobTriggerManual   = "jobs.trigger.manual"
	keyJobTriggerSchedule = "jobs.trigger.schedule"
	keyJobTriggerRetry    = "jobs.trigger.retry"
	keyJobTriggerCLI      = "jobs.trigger.cli"
	keyJobTriggerSyslog   = "jobs.trigger.syslog"
	keyJobTriggerRestore  = "jobs.trigger.restore"
	keyJobTriggerPush     = "jobs.trigger.push"

	keyJobDurationMS  = "jobs.duration.ms"
	keyJobDurationS   = "jobs.duration.s"
	keyJobDurationMin = "jobs.duration.min"

	keyJobAttempt                   = "jobs.attempt"
	keyJobInterruptions             = "jobs.interruptions"
	keyJobResultInterruptedTooOften = "jobs.result.interrupted_too_often"
	keyJobResultReason              = "jobs.result.reason"
	keyJobResultVersion             = "jobs.result.version"
	keyJobResultCancelled           = "jobs.result.cancelled"
	keyJobResultInterrupted         = "jobs.result.interrupted"
	keyJobResultRetry               = "jobs.result.retry"
	keyJobResultWaiting             = "jobs.result.waiting"
	keyJobResultRestore             = "jobs.result.restore"
	keyJobResultRestoreSays         = "jobs.result.restore_says"
	keyJobResultChangeSet           = "jobs.result.change_set"
	keyJobResultChangeSetSays       = "jobs.result.change_set_says"
	keyJobRestoreNoCancel           = "jobs.error.restore_cancel"
	keyJobPushNoCancel              = "jobs.error.push_cancel"

	keyJobProgress         = "jobs.progress.text"
	keyJobProgressFailed   = "jobs.progress.failed"
	keyJobProgressComplete = "jobs.progress.complete"

	keyJobPager     = "jobs.pager.page"
	keyJobPagerMore = "jobs.pager.more"

	keyJobNoticeCancelled       = "jobs.notice.cancelled"
	keyJobNoticeCancelRequested = "jobs.notice.cancel_requested"
	keyJobNoticeFinished        = "jobs.notice.already_finished"

	keySearchTooLong = "search.error.too_long"
	keySearchInvalid = "search.error.invalid"
	keySearchTimeout = "search.error.timeout"
	keySearchGroup   = "search.error.group"
)
