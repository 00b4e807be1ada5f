package driver_test

import (
	"context"

	"backupd/app/collect"
	"backupd/app/collect/driver"
)

// The SCP replays (replaySCP) collect through app/collect, which this
// external test package may import.
func init() {
	driver.CollectForReplay = func(ctx context.Context, platform, host string, port int, user, password string) (string, error) {
		res, err := collect.Collect(ctx, collect.Target{Platform: platform, Host: host, Port: port, Method: "ssh",
			Username: user, Password: password})
		return res.Text, err
	}
}
