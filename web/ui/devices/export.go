package devices

import (
	"encoding/csv"
	"io"
	"net/http"

	"backupd/app/importer"
	"backupd/web"
	"backupd/web/ui/core"
)

// devicesExport writes the filtered devices of the user's scope as CSV in
// the import's format (names, never a secret), a thousand at a time.
func (u *handlers) devicesExport(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	scope := core.SessionOf(r).Scope()
	f := devicesParseFilter(r.URL.Query())
	if f.Error != "" {
		return &core.PageError{Status: http.StatusBadRequest, Message: f.Error}
	}
	filter := f.store(u.Now())
	names, err := importer.LoadCSVNames(ctx, u.Store)
	if err != nil {
		return err
	}
	// The first page is read before anything is written, so that a
	// failing store still gets an error page.
	page, err := u.Store.DevicesAfter(ctx, scope, filter, 0, devicesExportPage)
	if err != nil {
		return err
	}
	name := "backupd-devices-" + u.Now().In(u.Location).Format("2006-01-02") + ".csv"
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	// A byte order mark makes spreadsheets read UTF-8 (Chinese names) right.
	if _, err := io.WriteString(w, "\xef\xbb\xbf"); err != nil {
		return nil
	}
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	_ = cw.Write(importer.CSVColumns)
	// Bounded: a million devices at the most.
	for range 1000 {
		for _, d := range page {
			rec := names.Record(d)
			_ = cw.Write(rec)
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return nil // the client went away
		}
		if len(page) < devicesExportPage {
			return nil
		}
		if page, err = u.Store.DevicesAfter(ctx, scope, filter, page[len(page)-1].ID, devicesExportPage); err != nil {
			// Half a file is worse than none: break the download off so
			// that the browser reports it failed.
			u.Log.Error("device export failed", "request_id", web.RequestID(ctx), "err", err)
			panic(http.ErrAbortHandler)
		}
	}
	return nil
}
