package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"

	"backupd/db"
)

// cliActor names who ran the command: the operating-system account, since
// the command line needs no backupd login.
func cliActor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "os:" + u.Username
	}
	return fmt.Sprintf("os:uid-%d", os.Getuid())
}

// audit records a change made from the command line. Failing to record is
// reported on stderr but does not undo the change.
func audit(ctx context.Context, store *db.Store, stderr io.Writer, action, targetType string, targetID any, details map[string]any) {
	if err := store.RecordAudit(ctx, db.AuditEntry{
		Username: cliActor(), Interface: "cli", Action: action, TargetType: targetType,
		TargetID: fmt.Sprint(targetID), Details: details,
	}); err != nil {
		fmt.Fprintln(stderr, "warning: could not write the audit log:", err)
	}
}
