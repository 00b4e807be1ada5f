package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"backupd/db"
)

// errRowChanged stops sealing a row that changed since it was read.
var errRowChanged = errors.New("the channel changed meanwhile")

// SealWebhookURLs seals the URLs that webhook channels written before
// URLs were sealed keep in clear: each such row is written again as
// ChannelToStore writes it (URL, header values and signing key in one
// sealed envelope, the masked URL in the settings). A SQL migration cannot
// do it, since sealing needs the data directory's key; serve runs this at
// start, and it finds nothing to do once done. A row whose secret cannot
// be opened (another secret.key) is left as it is and counted in
// skipped: it cannot deliver until its secret is entered again, and
// saving it then seals its URL. A row changed meanwhile (a user saved
// it) is left to that save.
func SealWebhookURLs(ctx context.Context, store *db.Store, seal func([]byte) []byte, open func([]byte) ([]byte, error)) (sealed, skipped int, err error) {
	rows, err := store.NotificationChannels(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, row := range rows {
		if row.Type != TypeWebhook {
			continue
		}
		_, wh, derr := decodeSettings(row)
		if derr != nil || wh.SealedURL || wh.URL == "" {
			continue
		}
		ch, oerr := ChannelFromStore(row, open)
		if oerr != nil {
			skipped++
			continue
		}
		config, secret, eerr := encodeChannel(ch, seal)
		if eerr != nil {
			skipped++
			continue
		}
		_, uerr := store.UpdateNotificationChannel(ctx, row.ID, func(c *db.NotificationChannel) error {
			if !bytes.Equal(c.Config, row.Config) || !bytes.Equal(c.Secret, row.Secret) {
				return errRowChanged
			}
			c.Config, c.Secret = json.RawMessage(config), secret
			return nil
		})
		switch {
		case errors.Is(uerr, errRowChanged) || errors.Is(uerr, db.ErrNotFound):
		case uerr != nil:
			return sealed, skipped, fmt.Errorf("seal the URL of channel %d: %w", row.ID, uerr)
		default:
			sealed++
		}
	}
	return sealed, skipped, nil
}
