package db

import (
	"backupd/db/engine"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The storage side of notifications: channels (where to send), rules
// (which events of which devices go to which channels), the outbox (the
// events, recorded in the transaction of the backup result that caused
// them) and deliveries (one event to one channel, sent once).

// EventKind names what happened.
type EventKind string

// The event kinds.
const (
	EventConfigChanged     EventKind = "config.changed"
	EventFirstBackup       EventKind = "device.first_backup"
	EventBackupFailed      EventKind = "backup.failed"
	EventBackupRecovered   EventKind = "backup.recovered"
	EventDeviceUnreachable EventKind = "device.unreachable"
	EventDeviceReachable   EventKind = "device.reachable"
	EventHostKeyChanged    EventKind = "hostkey.changed"
	EventBackupStale       EventKind = "backup.stale"
	// System events: about the server, not a device (DeviceID 0). Only
	// rules of scope "all" match them.
	EventGitPushFailed    EventKind = "git.push_failed"
	EventGitPushRecovered EventKind = "git.push_recovered"
)

// EventKinds lists every kind, in the order the UI shows them.
var EventKinds = []EventKind{EventConfigChanged, EventFirstBackup, EventBackupFailed, EventBackupRecovered,
	EventDeviceUnreachable, EventDeviceReachable, EventHostKeyChanged, EventBackupStale,
	EventGitPushFailed, EventGitPushRecovered}

// System reports whether k is about the server rather than a device.
func (k EventKind) System() bool { return k == EventGitPushFailed || k == EventGitPushRecovered }

// Valid reports whether k is a known kind.
func (k EventKind) Valid() bool { return slices.Contains(EventKinds, k) }

// TriggerCheck is the trigger of events that periodic checks (reachability,
// staleness) find rather than a backup.
const TriggerCheck = "check"

// TriggerGitPush is the trigger of the git mirror's push events.
const TriggerGitPush = "git_push"

// Channel types.
const (
	ChannelWebhook    = "webhook"
	ChannelSlack      = "slack"
	ChannelMattermost = "mattermost"
	ChannelTeams      = "teams"
	ChannelChat       = "chat"
	ChannelEmail      = "email"
)

// ChannelTypes lists the channel types.
var ChannelTypes = []string{ChannelWebhook, ChannelSlack, ChannelMattermost, ChannelTeams, ChannelChat, ChannelEmail}

// Rule scopes.
const (
	RuleScopeAll     = "all"
	RuleScopeGroups  = "groups"
	RuleScopeDevices = "devices"
)

// Delivery states.
const (
	DeliveryPending = "pending" // not tried yet
	DeliverySending = "sending" // leased by a worker
	DeliveryFailed  = "failed"  // last attempt failed; tried again at NextAttemptAt
	DeliverySent    = "sent"
	DeliveryGaveUp  = "gave_up"
)

// Bounds of what the notification tables hold.
const (
	MaxNotificationNameLen = 100
	MaxChannelConfigBytes  = 16 << 10
	MaxChannelSecretBytes  = 16 << 10 // a webhook's custom header values are sealed with its key
	MaxRuleThreshold       = 1000
	MaxRuleTargets         = 1000 // groups, devices or channels of one rule
	// DeliveryLease is how long a claimed delivery stays with its worker;
	// past it (the worker died) another worker may claim it.
	DeliveryLease = 5 * time.Minute
	// DeliveryMaxAge is how long a failing delivery is retried, from when
	// its event was recorded; a retry due later gives up instead.
	DeliveryMaxAge = 24 * time.Hour
	// MaxDeliveryLog bounds one read of a channel's delivery log.
	MaxDeliveryLog = 1000
)

// Notification errors.
var (
	ErrChannelInUse = errors.New("channel is used by notification rules")
	// ErrNotLeased is returned when marking a delivery the caller no
	// longer holds (its lease expired and another worker took it, or it
	// was already settled).
	ErrNotLeased = errors.New("delivery is not leased by this worker")
)

// ErrInvalidField is a value the store refuses; Field names it.
type ErrInvalidField struct {
	Field   string
	Message string
}

func (e *ErrInvalidField) Error() string { return e.Field + ": " + e.Message }

// NotificationChannel is one destination of notifications. Config holds
// its non-secret settings (a JSON object, the sender's to read); Secret
// the sealed bytes of its secret (app/secret), never plain text; nil when
// it has none.
type NotificationChannel struct {
	ID        int64
	Name      string
	Type      string
	Enabled   bool
	Config    json.RawMessage
	Secret    []byte
	Language  string // en or zh
	CreatedAt string
	UpdatedAt string
}

// NotificationRule sends Events of the devices in its scope to Channels.
type NotificationRule struct {
	ID      int64
	Name    string
	Enabled bool
	Events  []EventKind
	// Scope is all, groups (GroupIDs and their subgroups) or devices
	// (DeviceIDs).
	Scope      string
	GroupIDs   []int64
	DeviceIDs  []int64
	ChannelIDs []int64
	// IncludeDiff lets the configuration diff into the message.
	IncludeDiff bool
	// FailureThreshold is how many failed backups (or reachability
	// checks) in a row make backup.failed (device.unreachable); 0 means 1.
	FailureThreshold int
	CreatedAt        string
	UpdatedAt        string
}

func checkName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return &ErrInvalidField{"name", "must not be empty"}
	case name != strings.TrimSpace(name):
		return &ErrInvalidField{"name", "must not start or end with spaces"}
	case !utf8.ValidString(name):
		return &ErrInvalidField{"name", "must be UTF-8 text"}
	case utf8.RuneCountInString(name) > MaxNotificationNameLen:
		return &ErrInvalidField{"name", fmt.Sprintf("must be at most %d characters", MaxNotificationNameLen)}
	case strings.ContainsFunc(name, unicode.IsControl):
		return &ErrInvalidField{"name", "must not contain control characters"}
	}
	return nil
}

func (c *NotificationChannel) check() error {
	if err := checkName(c.Name); err != nil {
		return err
	}
	if !slices.Contains(ChannelTypes, c.Type) {
		return &ErrInvalidField{"type", "must be one of " + strings.Join(ChannelTypes, ", ")}
	}
	if c.Language == "" {
		c.Language = "en"
	}
	if c.Language != "en" && c.Language != "zh" {
		return &ErrInvalidField{"language", "must be en or zh"}
	}
	if len(c.Config) == 0 {
		c.Config = json.RawMessage(`{}`)
	}
	if len(c.Config) > MaxChannelConfigBytes {
		return &ErrInvalidField{"config", fmt.Sprintf("must be at most %d bytes", MaxChannelConfigBytes)}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(c.Config, &obj); err != nil || obj == nil {
		return &ErrInvalidField{"config", "must be a JSON object"}
	}
	if len(c.Secret) > MaxChannelSecretBytes {
		return &ErrInvalidField{"secret", fmt.Sprintf("must be at most %d bytes sealed", MaxChannelSecretBytes)}
	}
	return nil
}

const channelColumns = `id, name, type, enabled, config, secret, language, created_at, updated_at`

func scanChannel(row engine.Scanner) (NotificationChannel, error) {
	var c NotificationChannel
	var cfg string
	err := row.Scan(&c.ID, &c.Name, &c.Type, &c.Enabled, &cfg, &c.Secret, &c.Language, &c.CreatedAt, &c.UpdatedAt)
	c.Config = json.RawMessage(cfg)
	return c, err
}

// NotificationChannels returns every channel by name.
func (s *Store) NotificationChannels(ctx context.Context) ([]NotificationChannel, error) {
	out, err := engine.QueryAll(ctx, s.reader, scanChannel, `SELECT `+channelColumns+` FROM notification_channels ORDER BY name, id`)
	if err != nil {
		return nil, fmt.Errorf("list notification channels: %w", err)
	}
	return out, nil
}

// GetNotificationChannel returns one channel or ErrNotFound.
func (s *Store) GetNotificationChannel(ctx context.Context, id int64) (NotificationChannel, error) {
	return getChannel(ctx, s.reader, id)
}

func getChannel(ctx context.Context, q engine.Querier, id int64) (NotificationChannel, error) {
	c, err := scanChannel(q.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM notification_channels WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("get notification channel %d: %w", id, err)
	}
	return c, nil
}

// CreateNotificationChannel checks and inserts c (its ID and times are the
// store's).
func (s *Store) CreateNotificationChannel(ctx context.Context, c NotificationChannel) (NotificationChannel, error) {
	if err := c.check(); err != nil {
		return NotificationChannel{}, err
	}
	var out NotificationChannel
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM notification_channels WHERE name = ?`, c.Name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		id, err := engine.InsertID(ctx, tx, `INSERT INTO notification_channels (name, type, enabled, config, secret, language, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, c.Name, c.Type, c.Enabled, string(c.Config), c.Secret, c.Language, now, now)
		if err != nil {
			return fmt.Errorf("insert notification channel: %w", err)
		}
		out, err = getChannel(ctx, tx, id)
		return err
	})
	return out, err
}

// UpdateNotificationChannel reads the channel, lets patch change it (a
// patch that leaves Secret alone keeps the sealed secret), checks and
// writes it back, in one transaction.
// patch runs again when the transaction does (InTx): it must set, not add to, what it records.
func (s *Store) UpdateNotificationChannel(ctx context.Context, id int64, patch func(*NotificationChannel) error) (NotificationChannel, error) {
	var out NotificationChannel
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		c, err := getChannel(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := patch(&c); err != nil {
			return err
		}
		if err := c.check(); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM notification_channels WHERE name = ? AND id <> ?`, c.Name, id); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notification_channels SET name = ?, type = ?, enabled = ?, config = ?, secret = ?,
				language = ?, updated_at = ? WHERE id = ?`,
			c.Name, c.Type, c.Enabled, string(c.Config), c.Secret, c.Language, Now(), id); err != nil {
			return fmt.Errorf("update notification channel: %w", err)
		}
		out, err = getChannel(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteNotificationChannel removes a channel no rule uses, with its
// deliveries (and so its delivery log).
func (s *Store) DeleteNotificationChannel(ctx context.Context, id int64) error {
	return s.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := getChannel(ctx, tx, id); err != nil {
			return err
		}
		if used, err := engine.Exists(ctx, tx, `SELECT 1 FROM notification_rule_channels WHERE channel_id = ? LIMIT 1`, id); err != nil {
			return err
		} else if used {
			return ErrChannelInUse
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM notification_channels WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete notification channel: %w", err)
		}
		return nil
	})
}

// uniqueIDs sorts ids and drops repeats.
func uniqueIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

func (r *NotificationRule) check() error {
	if err := checkName(r.Name); err != nil {
		return err
	}
	if len(r.Events) == 0 {
		return &ErrInvalidField{"events", "must name at least one event"}
	}
	for _, k := range r.Events {
		if !k.Valid() {
			return &ErrInvalidField{"events", fmt.Sprintf("unknown event %q", k)}
		}
	}
	r.Events = slices.Clone(r.Events)
	slices.Sort(r.Events)
	r.Events = slices.Compact(r.Events)
	r.GroupIDs, r.DeviceIDs, r.ChannelIDs = uniqueIDs(r.GroupIDs), uniqueIDs(r.DeviceIDs), uniqueIDs(r.ChannelIDs)
	switch r.Scope {
	case RuleScopeAll:
		if len(r.GroupIDs) > 0 || len(r.DeviceIDs) > 0 {
			return &ErrInvalidField{"scope", "a rule for all devices lists no groups or devices"}
		}
	case RuleScopeGroups:
		if len(r.GroupIDs) == 0 || len(r.DeviceIDs) > 0 {
			return &ErrInvalidField{"group_ids", "a rule for groups lists at least one group and no devices"}
		}
	case RuleScopeDevices:
		if len(r.DeviceIDs) == 0 || len(r.GroupIDs) > 0 {
			return &ErrInvalidField{"device_ids", "a rule for devices lists at least one device and no groups"}
		}
	default:
		return &ErrInvalidField{"scope", "must be all, groups or devices"}
	}
	if len(r.ChannelIDs) == 0 {
		return &ErrInvalidField{"channel_ids", "must name at least one channel"}
	}
	for field, ids := range map[string][]int64{"group_ids": r.GroupIDs, "device_ids": r.DeviceIDs, "channel_ids": r.ChannelIDs} {
		if len(ids) > MaxRuleTargets {
			return &ErrInvalidField{field, fmt.Sprintf("must list at most %d", MaxRuleTargets)}
		}
	}
	if r.FailureThreshold == 0 {
		r.FailureThreshold = 1
	}
	if r.FailureThreshold < 1 || r.FailureThreshold > MaxRuleThreshold {
		return &ErrInvalidField{"failure_threshold", fmt.Sprintf("must be between 1 and %d", MaxRuleThreshold)}
	}
	return nil
}

// checkRuleReferences verifies that every group, device and channel a
// rule names exists.
func (s *Store) checkRuleReferences(ctx context.Context, q engine.Querier, r NotificationRule) error {
	for _, ref := range []struct {
		field, table, what string
		ids                []int64
	}{
		{"group_ids", "device_groups", "group", r.GroupIDs},
		{"device_ids", "devices", "device", r.DeviceIDs},
		{"channel_ids", "notification_channels", "channel", r.ChannelIDs},
	} {
		if len(ref.ids) == 0 {
			continue
		}
		raw, err := json.Marshal(ref.ids)
		if err != nil {
			return err
		}
		var missing sql.NullInt64
		err = q.QueryRowContext(ctx, `SELECT MIN(j.id) FROM (SELECT CAST(value AS BIGINT) AS id FROM `+s.d.JSONEach()+`) j
			WHERE NOT EXISTS (SELECT 1 FROM `+ref.table+` t WHERE t.id = j.id)`, string(raw)).Scan(&missing)
		if err != nil {
			return err
		}
		if missing.Valid {
			return &ErrReference{ref.field, fmt.Sprintf("%s %d does not exist", ref.what, missing.Int64)}
		}
	}
	return nil
}

const ruleColumns = `id, name, enabled, scope, include_diff, failure_threshold, created_at, updated_at`

func scanRule(row engine.Scanner) (NotificationRule, error) {
	var r NotificationRule
	err := row.Scan(&r.ID, &r.Name, &r.Enabled, &r.Scope, &r.IncludeDiff, &r.FailureThreshold, &r.CreatedAt, &r.UpdatedAt)
	return r, err
}

// loadRuleLists fills the events, groups, devices and channels of rules.
func loadRuleLists(ctx context.Context, q engine.Querier, rules []NotificationRule) error {
	if len(rules) == 0 {
		return nil
	}
	byID := make(map[int64]*NotificationRule, len(rules))
	for i := range rules {
		r := &rules[i]
		r.Events, r.GroupIDs, r.DeviceIDs, r.ChannelIDs = []EventKind{}, []int64{}, []int64{}, []int64{}
		byID[r.ID] = r
	}
	err := engine.EachRow(ctx, q, `SELECT rule_id, event FROM notification_rule_events ORDER BY rule_id, event`, nil, func(row engine.Scanner) error {
		var id int64
		var k string
		if err := row.Scan(&id, &k); err != nil {
			return err
		}
		if r := byID[id]; r != nil {
			r.Events = append(r.Events, EventKind(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, l := range []struct {
		table, column string
		list          func(*NotificationRule) *[]int64
	}{
		{"notification_rule_groups", "group_id", func(r *NotificationRule) *[]int64 { return &r.GroupIDs }},
		{"notification_rule_devices", "device_id", func(r *NotificationRule) *[]int64 { return &r.DeviceIDs }},
		{"notification_rule_channels", "channel_id", func(r *NotificationRule) *[]int64 { return &r.ChannelIDs }},
	} {
		err := engine.EachRow(ctx, q, `SELECT rule_id, `+l.column+` FROM `+l.table+` ORDER BY rule_id, `+l.column, nil, func(row engine.Scanner) error {
			var id, v int64
			if err := row.Scan(&id, &v); err != nil {
				return err
			}
			if r := byID[id]; r != nil {
				*l.list(r) = append(*l.list(r), v)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// NotificationRules returns every rule by name, with its lists.
func (s *Store) NotificationRules(ctx context.Context) ([]NotificationRule, error) {
	rules, err := engine.QueryAll(ctx, s.reader, scanRule, `SELECT `+ruleColumns+` FROM notification_rules ORDER BY name, id`)
	if err == nil {
		err = loadRuleLists(ctx, s.reader, rules)
	}
	if err != nil {
		return nil, fmt.Errorf("list notification rules: %w", err)
	}
	return rules, nil
}

// GetNotificationRule returns one rule or ErrNotFound.
func (s *Store) GetNotificationRule(ctx context.Context, id int64) (NotificationRule, error) {
	return getRule(ctx, s.reader, id)
}

func getRule(ctx context.Context, q engine.Querier, id int64) (NotificationRule, error) {
	r, err := scanRule(q.QueryRowContext(ctx, `SELECT `+ruleColumns+` FROM notification_rules WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	if err == nil {
		rules := []NotificationRule{r}
		err = loadRuleListsOf(ctx, q, rules)
		r = rules[0]
	}
	if err != nil {
		return r, fmt.Errorf("get notification rule %d: %w", id, err)
	}
	return r, nil
}

// loadRuleListsOf fills the lists of one rule without reading every
// rule's.
func loadRuleListsOf(ctx context.Context, q engine.Querier, rules []NotificationRule) error {
	r := &rules[0]
	var err error
	r.Events, err = engine.QueryAll(ctx, q, func(row engine.Scanner) (EventKind, error) {
		var k string
		return EventKind(k), row.Scan(&k)
	}, `SELECT event FROM notification_rule_events WHERE rule_id = ? ORDER BY event`, r.ID)
	if err != nil {
		return err
	}
	for _, l := range []struct {
		table, column string
		dst           *[]int64
	}{
		{"notification_rule_groups", "group_id", &r.GroupIDs},
		{"notification_rule_devices", "device_id", &r.DeviceIDs},
		{"notification_rule_channels", "channel_id", &r.ChannelIDs},
	} {
		*l.dst, err = engine.QueryAll(ctx, q, scanID, `SELECT `+l.column+` FROM `+l.table+` WHERE rule_id = ? ORDER BY `+l.column, r.ID)
		if err != nil {
			return err
		}
	}
	return nil
}

// writeRuleLists replaces the rule's events, groups, devices and channels.
func (s *Store) writeRuleLists(ctx context.Context, tx *sql.Tx, r NotificationRule) error {
	for _, table := range []string{"notification_rule_events", "notification_rule_groups", "notification_rule_devices", "notification_rule_channels"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE rule_id = ?`, r.ID); err != nil {
			return err
		}
	}
	events := make([]string, len(r.Events))
	for i, k := range r.Events {
		events[i] = string(k)
	}
	for _, l := range []struct {
		table, column, kind string
		values              any
	}{
		{"notification_rule_events", "event", "TEXT", events},
		{"notification_rule_groups", "group_id", "BIGINT", r.GroupIDs},
		{"notification_rule_devices", "device_id", "BIGINT", r.DeviceIDs},
		{"notification_rule_channels", "channel_id", "BIGINT", r.ChannelIDs},
	} {
		raw, err := json.Marshal(l.values)
		if err != nil {
			return err
		}
		if string(raw) == "null" || string(raw) == "[]" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+l.table+` (rule_id, `+l.column+`) SELECT ?, CAST(value AS `+l.kind+`) FROM `+s.d.JSONEach(),
			r.ID, string(raw)); err != nil {
			return err
		}
	}
	return nil
}

// CreateNotificationRule checks and inserts r.
func (s *Store) CreateNotificationRule(ctx context.Context, r NotificationRule) (NotificationRule, error) {
	if err := r.check(); err != nil {
		return NotificationRule{}, err
	}
	var out NotificationRule
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkRuleReferences(ctx, tx, r); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM notification_rules WHERE name = ?`, r.Name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		var err error
		r.ID, err = engine.InsertID(ctx, tx, `INSERT INTO notification_rules (name, enabled, scope, include_diff, failure_threshold, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, r.Name, r.Enabled, r.Scope, r.IncludeDiff, r.FailureThreshold, now, now)
		if err != nil {
			return fmt.Errorf("insert notification rule: %w", err)
		}
		if err := s.writeRuleLists(ctx, tx, r); err != nil {
			return fmt.Errorf("insert notification rule: %w", err)
		}
		out, err = getRule(ctx, tx, r.ID)
		return err
	})
	return out, err
}

// UpdateNotificationRule reads the rule, lets patch change it, checks and
// writes it back, in one transaction.
// patch runs again when the transaction does (InTx): it must set, not add to, what it records.
func (s *Store) UpdateNotificationRule(ctx context.Context, id int64, patch func(*NotificationRule) error) (NotificationRule, error) {
	var out NotificationRule
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		r, err := getRule(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := patch(&r); err != nil {
			return err
		}
		r.ID = id
		if err := r.check(); err != nil {
			return err
		}
		if err := s.checkRuleReferences(ctx, tx, r); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM notification_rules WHERE name = ? AND id <> ?`, r.Name, id); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notification_rules SET name = ?, enabled = ?, scope = ?, include_diff = ?,
				failure_threshold = ?, updated_at = ? WHERE id = ?`,
			r.Name, r.Enabled, r.Scope, r.IncludeDiff, r.FailureThreshold, Now(), id); err != nil {
			return fmt.Errorf("update notification rule: %w", err)
		}
		if err := s.writeRuleLists(ctx, tx, r); err != nil {
			return fmt.Errorf("update notification rule: %w", err)
		}
		out, err = getRule(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteNotificationRule removes a rule. Events it already recorded are
// still delivered.
func (s *Store) DeleteNotificationRule(ctx context.Context, id int64) error {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM notification_rules WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete notification rule %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// preparedTx runs a transaction's statements, on the store's prepared
// statement when the query is one of them.
type preparedTx struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

// prepared wraps tx so that the event and job queries run prepared.
func (s *Store) prepared(tx *sql.Tx) engine.Querier { return preparedTx{tx, s.stmts} }

func (p preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.stmts[query]; st != nil {
		return p.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return p.tx.QueryContext(ctx, query, args...)
}

func (p preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.stmts[query]; st != nil {
		return p.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return p.tx.QueryRowContext(ctx, query, args...)
}

func (p preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.stmts[query]; st != nil {
		return p.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return p.tx.ExecContext(ctx, query, args...)
}

// writeQueries are the statements prepared on the writer: the event and
// job queries.
func writeQueries(d engine.Dialect) []string {
	return slices.Concat(eventQueries(d), jobQueries(d))
}

// OutboxEvent is one recorded event.
type OutboxEvent struct {
	ID        int64
	Kind      EventKind
	DeviceID  int64
	CreatedAt time.Time
	Payload   EventPayload
}

// Delivery is one event to one channel.
type Delivery struct {
	ID            int64
	OutboxID      int64
	ChannelID     int64
	IncludeDiff   bool
	State         string
	Attempts      int
	NextAttemptAt time.Time
	LastStatus    *string
	LastError     *string
	SentAt        *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// BatchID is the batch (one message) the delivery was first sent in,
	// 0 before its first send (see CreateDeliveryBatch).
	BatchID int64
	Event   OutboxEvent
}

const deliveryColumns = `dl.id, dl.outbox_id, dl.channel_id, dl.include_diff, dl.state, dl.attempts, dl.next_attempt_at,
	dl.last_status, dl.last_error, dl.sent_at, dl.created_at, dl.updated_at, o.kind, o.device_id, o.created_at, o.payload,
	COALESCE(dl.batch_id, 0)`

func scanDelivery(row engine.Scanner) (Delivery, error) {
	var d Delivery
	var next, created, updated, evCreated, payload, kind string
	var status, errText, sent sql.NullString
	if err := row.Scan(&d.ID, &d.OutboxID, &d.ChannelID, &d.IncludeDiff, &d.State, &d.Attempts, &next,
		&status, &errText, &sent, &created, &updated, &kind, &d.Event.DeviceID, &evCreated, &payload, &d.BatchID); err != nil {
		return d, err
	}
	var err error
	parse := func(s string) time.Time {
		t, perr := time.ParseInLocation(BackupTimeFormat, s, time.UTC)
		if perr != nil && err == nil {
			err = fmt.Errorf("delivery %d: %w", d.ID, perr)
		}
		return t
	}
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = parse(next), parse(created), parse(updated)
	d.Event.ID, d.Event.Kind, d.Event.CreatedAt = d.OutboxID, EventKind(kind), parse(evCreated)
	if status.Valid {
		d.LastStatus = &status.String
	}
	if errText.Valid {
		d.LastError = &errText.String
	}
	if sent.Valid {
		t := parse(sent.String)
		d.SentAt = &t
	}
	if perr := json.Unmarshal([]byte(payload), &d.Event.Payload); perr != nil && err == nil {
		err = fmt.Errorf("delivery %d payload: %w", d.ID, perr)
	}
	return d, err
}

// claimPicks choose what ClaimDeliveries leases: expired leases, then due
// deliveries. Each must read its partial index (deliveries_leased,
// deliveries_due).
var claimPicks = []string{
	`SELECT id FROM deliveries WHERE state = 'sending' AND lease_until <= ? ORDER BY lease_until, id LIMIT ?`,
	`SELECT id FROM deliveries WHERE state IN ('pending', 'failed') AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`,
}

// ClaimDeliveries leases up to limit deliveries due at now to owner, for
// DeliveryLease: those not tried yet or waiting for a retry, and those
// whose lease ran out (their worker died). Sent and given-up deliveries
// are never claimed. A delivery already sent in a batch comes with the
// rest of its batch (CreateDeliveryBatch). They come ordered by channel,
// then event, so that a worker can send one digest per channel. Each
// claim counts an attempt.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, limit int, owner string) ([]Delivery, error) {
	if limit <= 0 {
		return nil, nil
	}
	if owner == "" {
		return nil, &ErrInvalidField{"owner", "must not be empty"}
	}
	stamp := backupTime(now)
	var out []Delivery
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		out = nil // a run again must not hand out an earlier run's claims
		// Expired leases first, then the due deliveries oldest first: each
		// read off its partial index, never a walk over the sent history.
		var ids []int64
		for _, pick := range claimPicks {
			if len(ids) >= limit {
				break
			}
			got, err := engine.QueryAll(ctx, tx, scanID, `UPDATE deliveries SET state = 'sending', owner = ?, lease_until = ?,
					attempts = attempts + 1, updated_at = ?
				WHERE id IN (`+pick+`) RETURNING id`, owner, backupTime(now.Add(DeliveryLease)), stamp, stamp, limit-len(ids))
			if err != nil {
				return err
			}
			ids = append(ids, got...)
		}
		if len(ids) == 0 {
			return nil
		}
		raw, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		// A batch goes whole: the other deliveries of the batches picked
		// (cut off by limit, or not due at the same time) come too, so
		// that the message is sent again as it was.
		more, err := engine.QueryAll(ctx, tx, scanID, `UPDATE deliveries SET state = 'sending', owner = ?, lease_until = ?,
				attempts = attempts + 1, updated_at = ?
			WHERE batch_id IN (SELECT batch_id FROM deliveries
					WHERE id IN (SELECT CAST(value AS BIGINT) FROM `+s.d.JSONEach()+`) AND batch_id IS NOT NULL)
				AND (state IN ('pending', 'failed') OR (state = 'sending' AND lease_until <= ?))
			RETURNING id`, owner, backupTime(now.Add(DeliveryLease)), stamp, string(raw), stamp)
		if err != nil {
			return err
		}
		if len(more) > 0 {
			ids = append(ids, more...)
			if raw, err = json.Marshal(ids); err != nil {
				return err
			}
		}
		out, err = engine.QueryAll(ctx, tx, scanDelivery, `SELECT `+deliveryColumns+` FROM deliveries dl JOIN outbox o ON o.id = dl.outbox_id
			WHERE dl.id IN (SELECT CAST(value AS BIGINT) FROM `+s.d.JSONEach()+`) ORDER BY dl.channel_id, dl.outbox_id`, string(raw))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return out, nil
}

// DeliveryOwners returns the owners holding leased deliveries, so that a
// starting worker can release those of dead processes (as the backup
// engine does with jobs).
func (s *Store) DeliveryOwners(ctx context.Context) ([]string, error) {
	owners, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (string, error) {
		var o string
		return o, r.Scan(&o)
	}, `SELECT DISTINCT owner FROM deliveries WHERE state = 'sending' AND owner IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("delivery owners: %w", err)
	}
	return owners, nil
}

// ReleaseDeliveries gives back the deliveries owner leased (its process
// stopped): they are due again at once, the attempt the claim counted
// taken back. It returns how many.
func (s *Store) ReleaseDeliveries(ctx context.Context, owner string) (int, error) {
	stamp := backupTime(time.Now())
	res, err := s.writer.ExecContext(ctx, `UPDATE deliveries SET attempts = `+s.d.Greater("attempts - 1", "0")+`,
			state = CASE WHEN attempts > 1 THEN 'failed' ELSE 'pending' END,
			owner = NULL, lease_until = NULL, next_attempt_at = ?, updated_at = ?
		WHERE state = 'sending' AND owner = ?`, stamp, stamp, owner)
	if err != nil {
		return 0, fmt.Errorf("release deliveries of %s: %w", owner, err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// shortText bounds a status or error kept in the delivery log.
func shortText(s string, n int) any {
	if s == "" {
		return nil
	}
	s = strings.ToValidUTF8(s, "?")
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n]) + "…"
	}
	return s
}

// MarkDelivered records that the deliveries ids reached their channel at
// at with status (an HTTP code, an SMTP reply). A sent delivery is never
// claimed again; marking one sent twice changes nothing. It is recorded
// whoever holds the lease now: what was delivered was delivered.
func (s *Store) MarkDelivered(ctx context.Context, ids []int64, status string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	stamp := backupTime(at)
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET state = 'sent', sent_at = ?, last_status = ?, last_error = NULL,
				owner = NULL, lease_until = NULL, updated_at = ?
			WHERE id IN (SELECT CAST(value AS BIGINT) FROM `+s.d.JSONEach()+`) AND state <> 'sent'`, stamp, shortText(status, 200), stamp, string(raw)); err != nil {
			return err
		}
		return settleBatches(ctx, tx, s.d, string(raw))
	})
	if err != nil {
		return fmt.Errorf("mark deliveries sent: %w", err)
	}
	return nil
}

// DeliveryFailure is how an attempt to deliver failed.
type DeliveryFailure struct {
	Status string // the HTTP code or SMTP reply, if any
	Error  string // secret-free
	At     time.Time
	// RetryAt is when to try again; past DeliveryMaxAge from the event,
	// or with Permanent set, the delivery gives up instead.
	RetryAt   time.Time
	Permanent bool
}

// MarkFailed records a failed attempt of the deliveries ids that owner
// holds: each is tried again at f.RetryAt, or gives up (permanent, or the
// retry would come more than DeliveryMaxAge after its event was recorded).
// It returns the ids that gave up. Deliveries owner no longer holds are
// left alone; if none of ids is held, ErrNotLeased.
func (s *Store) MarkFailed(ctx context.Context, owner string, ids []int64, f DeliveryFailure) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	stamp, retry := backupTime(f.At), backupTime(f.RetryAt)
	var gaveUp []int64
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		gaveUp = nil
		type settled struct {
			id    int64
			state string
		}
		rows, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (settled, error) {
			var v settled
			return v, r.Scan(&v.id, &v.state)
		}, `UPDATE deliveries SET
				state = CASE WHEN ? OR created_at < ? THEN 'gave_up' ELSE 'failed' END,
				next_attempt_at = ?, last_status = ?, last_error = ?, owner = NULL, lease_until = NULL, updated_at = ?
			WHERE id IN (SELECT CAST(value AS BIGINT) FROM `+s.d.JSONEach()+`) AND state = 'sending' AND owner = ?
			RETURNING id, state`, f.Permanent, backupTime(f.RetryAt.Add(-DeliveryMaxAge)),
			retry, shortText(f.Status, 200), shortText(f.Error, 500), stamp, string(raw), owner)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return ErrNotLeased
		}
		for _, r := range rows {
			if r.state == DeliveryGaveUp {
				gaveUp = append(gaveUp, r.id)
			}
		}
		if len(gaveUp) == 0 {
			return nil
		}
		return settleBatches(ctx, tx, s.d, string(raw))
	})
	if err != nil {
		return nil, fmt.Errorf("mark deliveries failed: %w", err)
	}
	slices.Sort(gaveUp)
	return gaveUp, nil
}

// DeliveryLog returns a channel's last limit deliveries, newest first.
func (s *Store) DeliveryLog(ctx context.Context, channelID int64, limit int) ([]Delivery, error) {
	return s.DeliveryLogIn(ctx, channelID, Scope{All: true}, limit)
}

// DeliveryLogIn is DeliveryLog as a user of scope sees it: the events of
// devices outside it (or deleted since) are left out, as the device list
// leaves them out; events about the server (device 0) stay.
func (s *Store) DeliveryLogIn(ctx context.Context, channelID int64, scope Scope, limit int) ([]Delivery, error) {
	limit = min(max(limit, 1), MaxDeliveryLog)
	where, args := "", []any{channelID}
	if !scope.All {
		cond, sargs := scope.clause()
		where = ` AND (o.device_id = 0 OR EXISTS (SELECT 1 FROM devices d WHERE d.id = o.device_id AND ` + cond + `))`
		args = append(args, sargs...)
	}
	out, err := engine.QueryAll(ctx, s.reader, scanDelivery, `SELECT `+deliveryColumns+` FROM deliveries dl JOIN outbox o ON o.id = dl.outbox_id
		WHERE dl.channel_id = ?`+where+` ORDER BY dl.id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("delivery log of channel %d: %w", channelID, err)
	}
	return out, nil
}

// GetDeliveries returns the deliveries with the given ids (missing ones
// are skipped), by id.
func (s *Store) GetDeliveries(ctx context.Context, ids []int64) ([]Delivery, error) {
	raw, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	out, err := engine.QueryAll(ctx, s.reader, scanDelivery, `SELECT `+deliveryColumns+` FROM deliveries dl JOIN outbox o ON o.id = dl.outbox_id
		WHERE dl.id IN (SELECT CAST(value AS BIGINT) FROM `+s.d.JSONEach()+`) ORDER BY dl.id`, string(raw))
	if err != nil {
		return nil, fmt.Errorf("get deliveries: %w", err)
	}
	return out, nil
}

// PruneNotifications deletes the sent and given-up deliveries settled
// before cutoff, and the events and batches left with no delivery that
// were recorded before it. Pending and failing deliveries stay, whatever their age.
func (s *Store) PruneNotifications(ctx context.Context, cutoff time.Time) (int, error) {
	stamp := backupTime(cutoff)
	var n int64
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM deliveries WHERE state IN ('sent', 'gave_up') AND updated_at < ?`, stamp)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		if _, err = tx.ExecContext(ctx, `DELETE FROM delivery_batches WHERE created_at < ?
			AND NOT EXISTS (SELECT 1 FROM deliveries WHERE batch_id = delivery_batches.id)`, stamp); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM outbox WHERE created_at < ?
			AND NOT EXISTS (SELECT 1 FROM deliveries WHERE outbox_id = outbox.id)`, stamp)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune notifications: %w", err)
	}
	return int(n), nil
}
