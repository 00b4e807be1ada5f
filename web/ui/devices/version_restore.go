package devices

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"backupd/app/auth"
	"backupd/app/collect/driver"
	"backupd/app/restore"
	"backupd/db"
	"backupd/web/ui/core"
)

// "Restore this version" on a version's page: a form that posts to the
// restores room (core.PathRestores) with an optional reason. On a
// platform that restores by a merge of selected lines the form lists the
// version's lines with a box each, says that it is not a full replace,
// and sends the lines ticked ("line") or all of them ("all"). The lines
// of a block a merge cannot type line by line (a banner, a
// certificate) show a disabled box and why, and "select all" says it
// leaves them out. Where the
// device cannot be restored the action shows all the same, disabled,
// saying why, so that nobody looks for a button that is not there.

// versionRestore is the action as the version page shows it.
type versionRestore struct {
	Action    string
	DeviceID  int64
	VersionID string
	// Why is the message key of why the device cannot be restored; ""
	// when it can.
	Why string
	// OpenURL is the device's open restore: one at a time, so the page
	// links it instead of the form.
	OpenURL string
	// Merge: the platform restores by a merge of selected lines (not a
	// full replace); Lines are the version's lines to choose from, as
	// the page shows them (secrets masked).
	Merge bool
	Lines []versionLine
	// Skipped names the lines of blocks (restore.Blocks: banners,
	// certificates) that "select all" leaves out, "12-16, 40-52"; ""
	// when there are none.
	Skipped string
}

// versionLine is one line of the version in the merge form: Pick says
// it is configuration that can be sent (not blank, not a comment, not
// in a block). A line of a block shows its box disabled; the block's
// first line carries the sentence why (Head and Why, message keys, and
// Span, its lines).
type versionLine struct {
	No        int
	Text      string
	Pick      bool
	InBlock   bool
	Head, Why string
	Span      string
}

// blockKeys are the message keys of why each kind of block cannot be
// merged line by line.
var blockKeys = map[string]string{
	restore.BlockBanner:      keyVersionRestoreBlockBanner,
	restore.BlockCertificate: keyVersionRestoreBlockCertificate,
	restore.BlockKey:         keyVersionRestoreBlockKey,
	restore.BlockMacro:       keyVersionRestoreBlockMacro,
}

// versionRestoreFor is the action for version b of d, nil when the user
// may not ask for restores or b holds no configuration. lines are the
// version's lines as the page shows them, for the merge form.
func (u *handlers) versionRestoreFor(r *http.Request, d db.Device, b db.Backup, lines []string) (*versionRestore, error) {
	if !core.SessionOf(r).Can(auth.PermRestore) || !b.Success || b.SnapshotHash == nil {
		return nil, nil
	}
	a := &versionRestore{Action: core.PathRestores, DeviceID: d.ID, VersionID: b.ID}
	p, ok := driver.Lookup(d.Platform)
	_, method := restore.MethodOf(p)
	switch {
	case !ok || !method:
		a.Why = keyVersionRestoreUnsupported
	case d.ZoneID > db.LocalZone:
		a.Why = keyVersionRestoreRemote
	case !d.Enabled:
		a.Why = keyVersionRestoreDisabled
	}
	if method && restore.Merges(p) {
		a.Merge = true
		a.Lines = make([]versionLine, len(lines))
		for i, l := range lines {
			a.Lines[i] = versionLine{No: i + 1, Text: l, Pick: restore.Sendable(p, l)}
		}
		var skipped []string
		for _, b := range restore.Blocks(p, strings.Join(lines, "\n")) {
			span, head := strconv.Itoa(b.From), keyVersionRestoreBlockOne
			if b.To > b.From {
				span, head = span+"-"+strconv.Itoa(b.To), keyVersionRestoreBlock
			}
			skipped = append(skipped, span)
			first := &a.Lines[b.From-1]
			first.Head, first.Why, first.Span = head, blockKeys[b.Kind], span
			for n := b.From; n <= b.To; n++ {
				a.Lines[n-1].Pick, a.Lines[n-1].InBlock = false, true
			}
		}
		a.Skipped = strings.Join(skipped, ", ")
	}
	open, err := u.Store.OpenRestore(r.Context(), d.ID)
	switch {
	case err == nil:
		a.OpenURL = core.RestorePath(open.ID)
	case !errors.Is(err, db.ErrNotFound):
		return nil, err
	}
	return a, nil
}
