package devices

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"backupd/db"
	"backupd/web/ui/core"
)

// One stored version: its text, and the text as a download.

// One version.

// deviceVersionPage is the data of device_version.html.
type deviceVersionPage struct {
	Device  db.Device
	Backup  detailHistoryRow
	HasText bool
	// Lines are the text's lines, at most detailMaxConfigLines of
	// TotalLines.
	Lines      []string
	TotalLines int
	Truncated  bool
	RawURL     string
	// DownloadURL is RawURL as a file.
	DownloadURL string
	// Secrets says whether the text's secrets are masked.
	Secrets core.Secrets
	// PrevURL and NextURL open the neighbouring versions; DiffPrevURL
	// compares this one with the previous.
	PrevURL, NextURL, DiffPrevURL string
	HistoryURL                    string
	// Restore is "Restore this version" (nil: not for this user).
	Restore *versionRestore
}

func (u *handlers) deviceVersion(w http.ResponseWriter, r *http.Request) error {
	d, b, err := u.detailVersionOf(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	p := deviceVersionPage{Device: d, Backup: u.detailRow(d, b), HistoryURL: detailPath(d) + "#history"}
	if b.SnapshotHash != nil {
		sec, err := u.SecretsFor(r, "device", d.ID, map[string]any{"page": "version", "backup": b.ID})
		if err != nil {
			return err
		}
		text, err := u.Store.SnapshotText(ctx, *b.SnapshotHash)
		if err != nil {
			return err
		}
		text = sec.Mask(d.ID, d.Platform, text)
		p.HasText, p.Secrets = true, sec
		raw := detailVersionPath(d, b.ID) + "/raw"
		p.RawURL, p.DownloadURL = sec.Keep(raw), sec.Keep(raw+"?download=1")
		p.Lines = detailLines(text)
		p.TotalLines = len(p.Lines)
		if len(p.Lines) > detailMaxConfigLines {
			p.Lines, p.Truncated = p.Lines[:detailMaxConfigLines], true
		}
	}
	if p.Restore, err = u.versionRestoreFor(r, d, b, p.Lines); err != nil {
		return err
	}
	cur := db.CursorOf(b)
	prev, ok, err := u.Store.PreviousVersion(ctx, d.ID, cur)
	if err != nil {
		return err
	}
	if ok {
		p.PrevURL = detailVersionPath(d, prev.ID)
		if p.HasText {
			p.DiffPrevURL = detailDiffPath(d, prev.ID, b.ID)
		}
	}
	next, ok, err := u.Store.NextVersion(ctx, d.ID, cur)
	if err != nil {
		return err
	}
	if ok {
		p.NextURL = detailVersionPath(d, next.ID)
	}
	return u.Render(w, r, http.StatusOK, "device_version.html", keyDetailVersionTitle, p)
}

// deviceVersionRaw serves a version's text as stored (its secrets masked
// as the page's are): inline, or with ?download=1 as a file named after
// the device and the time.
func (u *handlers) deviceVersionRaw(w http.ResponseWriter, r *http.Request) error {
	d, b, err := u.detailVersionOf(r)
	if err != nil {
		return err
	}
	if b.SnapshotHash == nil {
		return &core.PageError{Status: http.StatusNotFound, Message: keyDetailNoTextError}
	}
	sec, err := u.SecretsFor(r, "device", d.ID, map[string]any{"page": "raw", "backup": b.ID})
	if err != nil {
		return err
	}
	text, err := u.Store.SnapshotText(r.Context(), *b.SnapshotHash)
	if err != nil {
		return err
	}
	text = sec.Mask(d.ID, d.Platform, text)
	disposition := "inline"
	if r.URL.Query().Get("download") != "" {
		disposition = "attachment"
	}
	name := detailFileName(d.Name, b.StartedAt.In(u.Location).Format("20060102-150405"), ".txt")
	detailWriteText(w, disposition, name, text)
	return nil
}

// detailWriteText answers with plain text. The security headers (nosniff
// among them) are already set.
func detailWriteText(w http.ResponseWriter, disposition, name, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Disposition", detailDisposition(disposition, name))
	h.Set("Content-Length", strconv.Itoa(len(text)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(text))
}

// detailFileName is a safe file name for a device's text: the device name
// with anything but letters, digits, '-', '_' and '.' replaced by '_',
// then "_" and stamp, then ext.
func detailFileName(device, stamp, ext string) string {
	var b strings.Builder
	n := 0
	for _, c := range device {
		if n == 80 {
			break
		}
		n++
		if unicode.IsLetter(c) || unicode.IsDigit(c) || c == '-' || c == '_' || c == '.' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	// A leading dot would make a hidden file.
	base := strings.TrimLeft(b.String(), ".")
	if base == "" {
		base = "device"
	}
	return base + "_" + stamp + ext
}

// detailDisposition writes the header of RFC 6266: an ASCII filename for
// old clients and the exact UTF-8 one in filename* (RFC 8187).
func detailDisposition(disposition, name string) string {
	ascii := make([]byte, 0, len(name))
	var ext strings.Builder
	for i := 0; i < len(name); {
		c, size := utf8.DecodeRuneInString(name[i:])
		switch {
		case c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.", c)):
			ascii = append(ascii, byte(c))
			ext.WriteByte(byte(c))
		default:
			ascii = append(ascii, '_')
			for _, by := range []byte(name[i : i+size]) {
				fmt.Fprintf(&ext, "%%%02X", by)
			}
		}
		i += size
	}
	return disposition + `; filename="` + string(ascii) + `"; filename*=UTF-8''` + ext.String()
}
