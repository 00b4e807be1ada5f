package platforms

import (
	"errors"
	"strings"

	"backupd/app/collect/driver"
)

// A definition that is not saved yet can be tested against a real
// device (backup.RunPlatformTest) before any backup depends on it.

// testID is the ID a definition runs under when its own is missing or
// wrong: a test needs a valid ID, never a particular one.
const testID = "custom_test"

// TestPlatform is the platform a test of def runs: def's own, or, when
// only the ID is missing or wrong, the same under a placeholder ID, with
// the ID's problem returned in warnings. Any other problem of def is the
// error (Errors): a session cannot run on it.
func TestPlatform(def Definition) (p driver.Platform, warnings Errors, err error) {
	if strings.TrimSpace(def.ID) == "" {
		def.ID = testID
	}
	p, err = def.Platform()
	if err == nil {
		return p, nil, nil
	}
	var errs Errors
	if errors.As(err, &errs) && len(errs) == 1 && errs[0].Field == "id" && errs[0].Problem != TooLarge {
		def.ID = testID
		if p, err = def.Platform(); err == nil {
			return p, errs, nil
		}
	}
	return p, nil, err
}
