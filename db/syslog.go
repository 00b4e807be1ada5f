package db

import (
	"context"
	"fmt"
)

// SyslogPattern is a user pattern of the syslog listener: a message whose
// text Pattern (a Go regular expression) matches is a configuration
// change of the device that sent it.
type SyslogPattern struct {
	Name    string `json:"name"`
	Pattern string `json:"pattern"`
}

// SyslogPatterns returns the user's syslog patterns.
func (s *Store) SyslogPatterns(ctx context.Context) ([]SyslogPattern, error) {
	patterns := []SyslogPattern{}
	_, err := s.GetSetting(ctx, SettingSyslogPatterns, &patterns)
	return patterns, err
}

// SyslogSender is what the syslog listener needs to know of a device to
// tell which one sent a message.
type SyslogSender struct {
	ID      int64
	Name    string
	Host    string
	Enabled bool
}

// SyslogSenders lists the name and host of every device of the server's
// own zone, for the syslog listener's in-memory lookup (read in one pass,
// not per message). A device of another zone cannot send to the
// listener, and its address may be a local device's too.
func (s *Store) SyslogSenders(ctx context.Context) ([]SyslogSender, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT id, name, host, enabled FROM devices WHERE zone_id = 1 ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("device addresses: %w", err)
	}
	defer rows.Close()
	var out []SyslogSender
	for rows.Next() {
		var d SyslogSender
		if err := rows.Scan(&d.ID, &d.Name, &d.Host, &d.Enabled); err != nil {
			return nil, fmt.Errorf("device addresses: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("device addresses: %w", err)
	}
	return out, nil
}
