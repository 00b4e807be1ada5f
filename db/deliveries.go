package db

import (
	"context"
	"fmt"

	"backupd/db/engine"
	"backupd/db/outbox"
)

// DeliveryLog returns a channel's last limit deliveries, newest first.
func (s *Store) DeliveryLog(ctx context.Context, channelID int64, limit int) ([]outbox.Delivery, error) {
	return s.DeliveryLogIn(ctx, channelID, Scope{All: true}, limit)
}

// DeliveryLogIn is DeliveryLog as a user of scope sees it: the events of
// devices outside it (or deleted since) are left out, as the device list
// leaves them out; events about the server (device 0) stay.
func (s *Store) DeliveryLogIn(ctx context.Context, channelID int64, scope Scope, limit int) ([]outbox.Delivery, error) {
	limit = min(max(limit, 1), MaxDeliveryLog)
	where, args := "", []any{channelID}
	if !scope.All {
		cond, sargs := scope.clause()
		where = ` AND (o.device_id = 0 OR EXISTS (SELECT 1 FROM devices d WHERE d.id = o.device_id AND ` + cond + `))`
		args = append(args, sargs...)
	}
	out, err := engine.QueryAll(ctx, s.reader, outbox.ScanDelivery, `SELECT `+outbox.Columns+` FROM deliveries dl JOIN outbox o ON o.id = dl.outbox_id
		WHERE dl.channel_id = ?`+where+` ORDER BY dl.id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("delivery log of channel %d: %w", channelID, err)
	}
	return out, nil
}
