-- +goose Up

-- The jobs page counts finished jobs of the last hour and day, and lists
-- one device's jobs; deleting a device cascades to its jobs.
CREATE INDEX jobs_finished ON jobs(finished_at) WHERE state IN ('succeeded', 'failed', 'cancelled');
CREATE INDEX jobs_device ON jobs(device_id, id);

-- The users page shows each user's last sign-in, and the audit page
-- filters by action.
CREATE INDEX audit_log_user_action ON audit_log(user_id, action, at);
CREATE INDEX audit_log_action ON audit_log(action, at);

-- +goose Down
DROP INDEX audit_log_action;
DROP INDEX audit_log_user_action;
DROP INDEX jobs_device;
DROP INDEX jobs_finished;
