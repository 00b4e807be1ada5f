package metrics

// The metric families backupd publishes, with their type and help text.
// Names follow Prometheus' conventions: base units (seconds, bytes),
// _total on counters, and labels with a small, fixed set of values (never
// a device name, host, key or raw path).

const (
	counter   = "counter"
	gauge     = "gauge"
	histogram = "histogram"
	summary   = "summary"
)

type family struct{ typ, help string }

var families = map[string]family{
	// Build and store.
	"backupd_build_info": {gauge, "Always 1; the labels name the running backupd's version, commit and Go version."},
	"backupd_store_up": {gauge, "1 when this scrape could read the database, 0 when not " +
		"(the figures read from the database are then left out)."},

	// Read from the database at scrape time: every process that shares it
	// (the server, backupd backup run) counts.
	"backupd_devices":         {gauge, "Devices in the inventory, enabled or not, by reachability status (unknown, reachable, unreachable)."},
	"backupd_devices_enabled": {gauge, "Devices enabled for backups."},
	"backupd_devices_last_backup_failed": {gauge, "Enabled devices whose most recent backup attempt failed, " +
		"whichever process ran it."},
	"backupd_devices_oldest_good_backup_age_seconds": {gauge, "Seconds since the oldest of the enabled devices' " +
		"latest successful backups (when it started): how out of date the least recently backed-up device is. " +
		"A device never backed up successfully counts from when it was added. 0 when no device is enabled."},
	"backupd_backups_total": {counter, "Backup attempts finished, by result (success, failure), as recorded in the " +
		"database by any process (the server or backupd backup run); deleting old records does not lower it."},
	"backupd_config_changes_total": {counter, "Backups that found the device's configuration changed since its previous " +
		"version, noise ignored (a device's first backup is not a change), as recorded in the database by any process; " +
		"deleting old records does not lower it."},
	"backupd_jobs": {gauge, "Backup jobs queued and running (state), in every process sharing the database."},
	"backupd_jobs_oldest_queued_age_seconds": {gauge, "Seconds the longest-waiting queued backup job has been due " +
		"(since its not-before time); 0 when no queued job is due. It keeps growing when nothing works the queue."},
	"backupd_notifications_pending": {gauge, "Notification deliveries (one event to one channel) not settled yet: " +
		"new, waiting for a retry, or being sent."},
	"backupd_notifications_oldest_pending_age_seconds": {gauge, "Seconds since the event of the oldest unsettled " +
		"notification delivery was recorded; 0 when none waits. It keeps growing while a channel is down."},
	"backupd_database_size_bytes": {gauge, "Size of the database file and its write-ahead log."},
	"backupd_snapshots": {gauge, "Distinct configuration texts stored, by form: whole (a device's newest version, " +
		"and a key frame every 65 versions) or delta (an older version stored against the next newer one)."},
	"backupd_snapshot_bytes": {gauge, "Bytes of the distinct configuration texts stored, by kind: raw (the texts) " +
		"or stored (compressed, deltas included)."},
	"backupd_cluster_leader": {gauge, "1 when this node leads the nodes sharing the database (it runs the schedules, " +
		"reachability checks, retention, the git mirror and notifications), 0 when it follows. A single node on SQLite always leads."},
	"backupd_cluster_nodes": {gauge, "backupd serve nodes on this database whose heartbeat is fresh (at most 20 s old)."},
	"backupd_collectors": {gauge, "Remote collectors by state: online (heard from within the last lease, 90 s), " +
		"offline (enrolled but silent longer), revoked."},
	"backupd_restores_open": {gauge, "Restores not yet ended, by state: previewing (the fresh backup for the preview " +
		"runs), pending (waiting for approval), approved (waiting for the device), queued, running."},
	"backupd_change_sets_open": {gauge, "Change sets not yet ended, by state: draft (written, or its dry run " +
		"found a device it cannot push to), ready (dry-run, waiting for approval), approved (waiting to start), running."},
	"backupd_inventory_sources": {gauge, "Inventory sources by state: ok (enabled, its last sync applied), failing " +
		"(enabled, its last sync failed and changed no device), never (enabled, never synced), disabled (neither its " +
		"schedule nor a sync on demand runs it; a dry run may). On-demand sources (interval 0) count too."},
	"backupd_inventory_oldest_good_sync_age_seconds": {gauge, "Seconds since the oldest of the scheduled inventory " +
		"sources' (enabled, interval not 0) last syncs that applied ended: how out of date the device list is from the " +
		"least recently synced source; a failed sync does not reset it. A source that never applied a sync counts from " +
		"when it was added. 0 when no source is scheduled."},
	"backupd_inventory_sources_overdue": {gauge, "Scheduled inventory sources (enabled, interval not 0) whose last " +
		"sync that applied ended (a source that never applied one: when it was added) more than 2 × interval + 15 " +
		"minutes ago. The schedule syncs a source an interval after its last sync, failed or not, so one failed sync " +
		"is caught up by the next; an overdue source has failed at least twice in a row, or nothing syncs it."},
	"backupd_data_filesystem_avail_bytes": {gauge, "Bytes free for backupd on the filesystem holding the data directory."},
	"backupd_data_filesystem_size_bytes":  {gauge, "Size of the filesystem holding the data directory."},

	// Counted by this process as things happen.
	"backupd_http_requests_total": {counter, "HTTP requests this server answered, by route pattern " +
		"(never the raw path) and status code."},
	"backupd_signins_total": {counter, "Web sign-ins this server finished, by method (password, ldap, oidc) and " +
		"result (success, failure); a second-factor step counts with its password sign-in."},
	"backupd_directory_sync_total": {counter, "Runs of the LDAP directory sync on this server, by result (success, " +
		"failure: the directory or the database did not answer, or the run would have disabled too many users)."},
	"backupd_directory_users_disabled_total": {counter, "Directory users the sync disabled (sessions ended, API keys " +
		"revoked) because the directory no longer has them or they are in no mapped group."},
	"backupd_restores_total": {counter, "Restores whose run ended on this server process, by method (frr_vtysh, ...) and " +
		"result: succeeded (the device runs the version, verified), rolled_back (the change failed or did not verify; " +
		"the configuration before was put back and verified), rollback_failed (putting it back failed too: the device's " +
		"state is unknown), failed (before the device was changed, or keeping the change failed), interrupted (the process " +
		"running it stopped: the device's state is unknown; counted by the process that finds it)."},
	"backupd_pushes_total": {counter, "Devices of change sets whose push ended on this server process, by platform " +
		"(frr, cisco_ios, ...; custom for an administrator's platform) and result: succeeded (the lines were sent and " +
		"saved, and the backup after worked), failed (a line refused, the session lost, a backup failed, ...: what the " +
		"device took is in the backup after), interrupted (the process running it stopped: the device's state is " +
		"unknown; counted by the process that finds it)."},
	"backupd_http_request_duration_seconds": {histogram, "Time this server took to answer HTTP requests, by route pattern."},
	"backupd_backup_duration_seconds": {histogram, "Duration of the backup attempts this server process ran, " +
		"by result (success, failure); attempts of backupd backup run count in backupd_backups_total only."},
	"backupd_backup_failures_total": {counter, "Failed backup attempts this server process ran, by reason " +
		"(connect, auth, timeout, host_key_changed, ...)."},

	"backupd_notifications_sent_total": {counter, "Notification deliveries (one event to one channel; a digest " +
		"holds several) this server process settled or tried, by channel type (webhook, slack, mattermost, teams, chat, email) " +
		"and result (sent; failed: tried again later; gave_up: refused, or failing for a day)."},

	"backupd_engine_running": {gauge, "1 while this server's backup engine works the queue, 0 while it does not: " +
		"it lost the database (or could not start) and tries again every few seconds until the database answers."},
	"backupd_engine_restarts_total": {counter, "Starts of this server's backup engine after it had stopped on a failure " +
		"(the database away, its liveness lock lost)."},

	"backupd_snapshot_pack_total": {counter, "Older configuration versions this process stored as deltas " +
		"(result success) or failed to (failure: the version stays whole and the next repack tries again)."},

	// The git mirror (left out until it first pushes).
	"backupd_git_push_total": {counter, "Pushes of the git mirror to its remote this process tried, by result " +
		"(success, failure; a failure is counted once its retries are spent)."},
	"backupd_git_last_push_success_timestamp_seconds": {gauge, "When this process last pushed the git mirror " +
		"to its remote successfully, in seconds since the Unix epoch."},
	"backupd_git_foreign_commit": {gauge, "1 while the git mirror refuses to push because its branch (on the remote, " +
		"or in the clone DATA/git/mirror) carries a commit backupd did not write, such as one made by hand; 0 once a " +
		"push went through. backupd never builds on, rewrites or deletes such a commit: move it off the branch."},

	// The syslog listener of serve --syslog-listen (left out when it is off).
	"backupd_syslog_received_total":  {counter, "Syslog messages the listener read (UDP datagrams, TCP frames)."},
	"backupd_syslog_truncated_total": {counter, "Syslog messages longer than the size cap, cut off before matching."},
	"backupd_syslog_matched_total": {counter, "Syslog messages a built-in or user pattern recognised as a " +
		"configuration change."},
	"backupd_syslog_unknown_sender_total": {counter, "Configuration-change messages whose sender (address or hostname) " +
		"is no device in the inventory; counted, not stored."},
	"backupd_syslog_triggered_total": {counter, "Devices whose quiet time after their last configuration-change " +
		"message ended (one per burst of changes)."},
	"backupd_syslog_queued_total": {counter, "Backup jobs with trigger syslog the listener created (a device " +
		"that had a job already counts in backupd_syslog_existing_job_total instead)."},
	"backupd_syslog_existing_job_total": {counter, "Triggered devices that had a backup job already, so that none was " +
		"created, by the job's state: queued (it now runs at once, as the syslog's) or running. Triggered = queued + " +
		"existing_job + skipped."},
	"backupd_syslog_skipped_total": {counter, "Triggered devices that got no backup, by reason (disabled: the device " +
		"is disabled; deleted; error: the queue could not be written)."},
	"backupd_syslog_dropped_total": {counter, "Syslog messages dropped, by class (change: a configuration change; " +
		"other: any other line; unread: a TCP frame over the hard size cap) and reason (rate: the device's budget " +
		"for changes, the sender address's for other lines; pending_full: too many devices waiting; framing)."},
	"backupd_syslog_connections_evicted_total": {counter, "TCP syslog connections closed to make room for a new one " +
		"(the total or per-sender cap was reached; the one idle longest is closed)."},
	"backupd_syslog_pending_devices": {gauge, "Devices waiting for their quiet time to end before their backup is queued."},
	"backupd_syslog_connections":     {gauge, "TCP connections open to the syslog listener."},

	// The process and the Go runtime, as the library reads them; what it
	// writes beyond these is left out.
	"process_cpu_seconds_total":              {counter, "User and system CPU time the process used, in seconds."},
	"process_resident_memory_bytes":          {gauge, "Resident memory of the process."},
	"process_virtual_memory_bytes":           {gauge, "Virtual memory of the process."},
	"process_start_time_seconds":             {gauge, "When the process started, in seconds since the Unix epoch."},
	"process_open_fds":                       {gauge, "File descriptors the process has open."},
	"process_max_fds":                        {gauge, "Limit on the file descriptors the process may open."},
	"process_io_storage_read_bytes_total":    {counter, "Bytes the process read from storage."},
	"process_io_storage_written_bytes_total": {counter, "Bytes the process wrote to storage."},
	"go_info":                                {gauge, "Always 1; the label names the Go version the binary was built with."},
	"go_goroutines":                          {gauge, "Goroutines that exist now."},
	"go_threads":                             {gauge, "Operating system threads the Go runtime created."},
	"go_gomaxprocs":                          {gauge, "GOMAXPROCS: how many threads may run Go code at once."},
	"go_memlimit_bytes":                      {gauge, "The Go runtime's soft memory limit (GOMEMLIMIT)."},
	"go_gc_duration_seconds":                 {summary, "Stop-the-world pauses of the garbage collector, in seconds."},
	"go_gc_cpu_seconds_total":                {counter, "CPU time the garbage collector used, in seconds."},
	"go_memstats_alloc_bytes":                {gauge, "Bytes of heap objects allocated and still in use."},
	"go_memstats_alloc_bytes_total":          {counter, "Bytes of heap objects allocated, freed or not."},
	"go_memstats_heap_alloc_bytes":           {gauge, "Bytes of heap objects allocated and still in use."},
	"go_memstats_heap_inuse_bytes":           {gauge, "Bytes in heap spans in use."},
	"go_memstats_heap_idle_bytes":            {gauge, "Bytes in heap spans waiting to be used."},
	"go_memstats_heap_released_bytes":        {gauge, "Bytes of heap memory returned to the operating system."},
	"go_memstats_heap_sys_bytes":             {gauge, "Bytes of heap memory obtained from the operating system."},
	"go_memstats_heap_objects":               {gauge, "Heap objects allocated and still in use."},
	"go_memstats_stack_inuse_bytes":          {gauge, "Bytes in stack spans in use."},
	"go_memstats_sys_bytes":                  {gauge, "Bytes of memory obtained from the operating system."},
	"go_memstats_next_gc_bytes":              {gauge, "Heap size at which the next garbage collection starts."},
	"go_memstats_last_gc_time_seconds":       {gauge, "When the last garbage collection finished, in seconds since the Unix epoch."},
	"go_memstats_mallocs_total":              {counter, "Heap objects allocated."},
	"go_memstats_frees_total":                {counter, "Heap objects freed."},
}
