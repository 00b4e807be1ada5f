package apiv1

import (
	"context"
	"net/http"
	"time"

	"backupd/db"
)

// DeviceCounts counts devices.
type DeviceCounts struct {
	Total       int `json:"total" doc:"All devices."`
	Enabled     int `json:"enabled" doc:"Devices included in scheduled backups."`
	Disabled    int `json:"disabled" doc:"Devices skipped by scheduled backups."`
	Reachable   int `json:"reachable" doc:"Devices whose last check or backup connected."`
	Unreachable int `json:"unreachable" doc:"Devices whose last check or backup could not connect."`
	Unknown     int `json:"unknown" doc:"Devices not checked yet."`
}

// RecentBackups counts the backups of the last 24 hours.
type RecentBackups struct {
	Total     int `json:"total" doc:"Backups started in the last 24 hours."`
	Succeeded int `json:"succeeded" doc:"Of those, succeeded."`
	Failed    int `json:"failed" doc:"Of those, failed."`
	Changed   int `json:"changed" doc:"Of those, found the configuration changed since the previous version, noise ignored; a device's first backup is not a change."`
}

// BackupCounts counts backup records.
type BackupCounts struct {
	Total        int           `json:"total" doc:"All backup records."`
	Succeeded    int           `json:"succeeded" doc:"Successful backups."`
	Failed       int           `json:"failed" doc:"Failed backups."`
	Last24h      RecentBackups `json:"last_24h" doc:"Backups of the last 24 hours."`
	LastBackupAt *string       `json:"last_backup_at" doc:"Start time of the newest backup in the request's time zone; null when there is none."`
}

// StorageCounts describes the snapshot store.
type StorageCounts struct {
	Snapshots   int   `json:"snapshots" doc:"Distinct configuration texts stored."`
	RawBytes    int64 `json:"raw_bytes" doc:"Their size uncompressed, in bytes."`
	StoredBytes int64 `json:"stored_bytes" doc:"Their size as stored (compressed), in bytes."`
}

// Stats are the system statistics.
type Stats struct {
	Devices     DeviceCounts  `json:"devices" doc:"Device counts by state."`
	Groups      int           `json:"groups" doc:"Device groups."`
	Credentials int           `json:"credentials" doc:"Credentials."`
	Templates   int           `json:"templates" doc:"Backup command templates."`
	Backups     BackupCounts  `json:"backups" doc:"Backup counts."`
	Storage     StorageCounts `json:"storage" doc:"Snapshot storage."`
}

func (a *API) registerStats() {
	register(a, operation(http.MethodGet, "/stats", "get-stats", "Statistics", "dashboard.view",
		"Get system statistics", "Returns counts of devices, groups, credentials, templates, backups (in total and in the last 24 hours, with changed configurations) and snapshot storage. Not filtered by device-group scope.", nil),
		func(ctx context.Context, in *struct{ TimezoneParam }) (*struct {
			Timezone string `header:"X-Timezone" doc:"The time zone last_backup_at is given in."`
			Body     Stats
		}, error) {
			loc, err := a.location(in.Timezone)
			if err != nil {
				return nil, err
			}
			st, err := a.deps.Store.Stats(ctx, time.Now())
			if err != nil {
				return nil, err
			}
			out := Stats{
				Devices: DeviceCounts{Total: st.DevicesTotal, Enabled: st.DevicesEnabled, Disabled: st.DevicesTotal - st.DevicesEnabled,
					Reachable: st.Devices[db.StatusReachable], Unreachable: st.Devices[db.StatusUnreachable], Unknown: st.Devices[db.StatusUnknown]},
				Groups: st.Groups, Credentials: st.Credentials, Templates: st.Templates,
				Backups: BackupCounts{Total: st.BackupsTotal, Succeeded: st.BackupsSucceeded, Failed: st.BackupsFailed,
					Last24h: RecentBackups{Total: st.Last24hTotal, Succeeded: st.Last24hSucceeded, Failed: st.Last24hFailed, Changed: st.Last24hChanged}},
				Storage: StorageCounts{Snapshots: st.Snapshots, RawBytes: st.SnapshotBytes, StoredBytes: st.SnapshotStoredBytes},
			}
			if st.LastBackupAt != nil {
				s := st.LastBackupAt.In(loc).Format(db.TimeFormat)
				out.Backups.LastBackupAt = &s
			}
			return &struct {
				Timezone string `header:"X-Timezone" doc:"The time zone last_backup_at is given in."`
				Body     Stats
			}{loc.String(), out}, nil
		})
}
