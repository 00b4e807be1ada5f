package devices

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"backupd/app/collect/driver"
	"backupd/app/inventory"
	"backupd/db"
	"backupd/web/ui/core"
)

// The CSV columns are importer.CSVColumns; the import takes them in any
// order, and name, host and platform are required.

var devicesRequiredColumns = []string{"name", "host", "platform"}

// devicesSampleCSV is the downloadable example, also shown on the page.
const devicesSampleCSV = "name,host,port,platform,login_method,group,credential,template,encoding,enabled,remarks\r\n" +
	"core-rtr-01,192.0.2.10,,cisco_ios,ssh,Core,Core login,,utf-8,true,Rack 4\r\n" +
	"campus-sw-07,campus-sw-07.example.net,23,huawei_vrp,telnet,Campus,Core login,,gbk,true,\r\n" +
	"dc-fw-01,2001:db8::1,2222,fortinet,ssh,Core,Core login,,,false,\"Spare unit, powered off\"\r\n"

// devicesImportPage is the data of devices_import.html.
type devicesImportPage struct {
	// Error is a message key (with ErrorArgs) about the whole file.
	Error     string
	ErrorArgs []any
	// Problems are the first problems found, ProblemCount all of them,
	// More those not listed.
	Problems     []devicesImportProblem
	ProblemCount int
	More         int
	Sample       string
	Platforms    []devicesPlatform
	Encodings    []string
	MaxRows      int
	MaxMiB       int
	// The router.db import (routerdb.go): the form as filled in,
	// an error about the whole file, and the plan or its result.
	RouterDBForm      devicesRouterDBForm
	RouterDBError     string
	RouterDBErrorArgs []any
	RouterDB          *devicesRouterDBResult
	// Zones are the router.db form's choices, offered when there is more
	// than the local one.
	Zones []db.Zone
	// Planned is what a dry run of a valid CSV file would create.
	Planned *devicesImportPlan
}

// devicesImportPlan is a dry run's answer: Count devices would be
// created; Rows are the first of them, More the others.
type devicesImportPlan struct {
	Count int
	Rows  []devicesImportPlanned
	More  int
}

// devicesImportPlanned is one device a dry run would create.
type devicesImportPlanned struct {
	Line                                       int
	Name, Address, Platform, Group, Credential string
}

// devicesImportProblem is one bad cell (or row, when Column is "") of an
// import. Line is the row's line in the file, the header being line 1.
type devicesImportProblem struct {
	Line   int
	Column string
	Key    string
	Args   []any
}

func (u *handlers) devicesImportPageData(ctx context.Context) (devicesImportPage, error) {
	p := devicesImportPage{Sample: devicesSampleCSV, Platforms: devicesPlatforms(), Encodings: driver.Encodings,
		MaxRows: devicesImportRows, MaxMiB: devicesImportBytes >> 20, RouterDBForm: devicesRouterDBDefaults()}
	zones, err := u.Store.ListZones(ctx)
	if err != nil {
		return p, err
	}
	if len(zones) > 1 {
		p.Zones = zones
	}
	return p, nil
}

func (u *handlers) devicesImportForm(w http.ResponseWriter, r *http.Request) error {
	p, err := u.devicesImportPageData(r.Context())
	if err != nil {
		return err
	}
	return u.Render(w, r, http.StatusOK, "devices_import.html", keyTitleDevicesImport, p)
}

func (u *handlers) devicesSample(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="backupd-devices-sample.csv"`)
	_, err := io.WriteString(w, devicesSampleCSV)
	return err
}

// devicesUploadBody lets the import read a file of up to
// devicesImportBytes: every other form is held to maxFormBytes before any
// handler runs, and an export of 20,000 devices is larger. It parses the
// multipart body (in memory) ahead of the page's checks, which then read
// the CSRF token from it; only for a request that carries a session
// cookie and comes from this site, so that strangers cannot make the
// server read 5 MiB.
func (u *handlers) devicesUploadBody(next http.Handler) http.Handler {
	limit := int64(devicesImportBytes + 64<<10) // the file and the form around it
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, cookieErr := r.Cookie(core.SessionCookie)
		multipart := strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data")
		if cookieErr != nil || !multipart || core.CrossOrigin(r) != "" {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if err := r.ParseMultipartForm(limit); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				u.RenderError(w, r, &core.PageError{Status: http.StatusRequestEntityTooLarge, Message: keyDevicesImportTooLarge,
					Args: []any{devicesImportBytes >> 20, devicesImportRows}})
				return
			}
		}
		if r.MultipartForm != nil {
			defer r.MultipartForm.RemoveAll()
		}
		next.ServeHTTP(w, r)
	})
}

// devicesImport creates the devices of an uploaded CSV file: every row is
// checked first, and then all are created in one transaction, or none.
// A refused file comes back with a report of every problem by row and
// column.
func (u *handlers) devicesImport(w http.ResponseWriter, r *http.Request) error {
	p, err := u.devicesImportPageData(r.Context())
	if err != nil {
		return err
	}
	fail := func(status int, key string, args ...any) error {
		p.Error, p.ErrorArgs = key, args
		return u.Render(w, r, status, "devices_import.html", keyTitleDevicesImport, p)
	}
	file, header, err := r.FormFile("file")
	if err != nil {
		return fail(http.StatusUnprocessableEntity, keyDevicesImportNoFile)
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, devicesImportBytes+1))
	if err != nil {
		return err
	}
	if len(data) > devicesImportBytes {
		return fail(http.StatusRequestEntityTooLarge, keyDevicesImportTooLarge, devicesImportBytes>>20, devicesImportRows)
	}
	in, err := u.devicesImportInput(r.Context(), core.SessionOf(r))
	if err != nil {
		return err
	}
	devices, lines, problems, fileErr := in.parse(data)
	if fileErr != nil {
		return fail(http.StatusUnprocessableEntity, fileErr.Key, fileErr.Args...)
	}
	if len(problems) == 0 {
		problems, err = u.devicesNamesTaken(r.Context(), devices, lines)
		if err != nil {
			return err
		}
	}
	dryRun := r.PostFormValue("dry_run") != ""
	if len(problems) == 0 && dryRun {
		if p.Planned, err = u.devicesImportPlan(r.Context(), devices, lines); err != nil {
			return err
		}
		return u.Render(w, r, http.StatusOK, "devices_import.html", keyTitleDevicesImport, p)
	}
	if len(problems) == 0 {
		err := u.Store.ImportDevices(r.Context(), devices)
		var ie *db.ImportError
		if errors.As(err, &ie) {
			// Another writer came between the checks and the transaction.
			problems = []devicesImportProblem{{Line: lines[ie.Index], Key: keyDevicesImportChanged}}
		} else if err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		slices.SortStableFunc(problems, func(a, b devicesImportProblem) int { return a.Line - b.Line })
		p.ProblemCount = len(problems)
		p.Problems = problems[:min(len(problems), devicesImportShown)]
		p.More = len(problems) - len(p.Problems)
		return u.Render(w, r, http.StatusUnprocessableEntity, "devices_import.html", keyTitleDevicesImport, p)
	}
	details := map[string]any{"count": len(devices), "file": core.Truncate(header.Filename, 128)}
	if ids := devicesCredentialIDs(devices); len(ids) > 0 {
		// Which credentials the import attached.
		details["credential_ids"] = ids
	}
	u.AuditAs(r, "device.import", "device", "", details)
	http.Redirect(w, r, devicesListPath+"?imported="+strconv.Itoa(len(devices)), http.StatusSeeOther)
	return nil
}

// devicesImportPlan lists what importing devices (read from lines of the
// file) would create: the first devicesImportShown of them, named as
// people read them.
func (u *handlers) devicesImportPlan(ctx context.Context, devices []db.Device, lines []int) (*devicesImportPlan, error) {
	tree, err := u.GroupTree(ctx)
	if err != nil {
		return nil, err
	}
	creds := map[int64]string{}
	plan := &devicesImportPlan{Count: len(devices)}
	for i, d := range devices[:min(len(devices), devicesImportShown)] {
		row := devicesImportPlanned{Line: lines[i], Name: d.Name, Address: inventory.ShowAddress(d.Address()), Platform: d.Platform}
		if info, ok := driver.Lookup(d.Platform); ok {
			row.Platform = info.Name
		}
		if d.GroupID != nil {
			row.Group = tree.PathName(*d.GroupID)
		}
		if d.CredentialID != nil {
			name, ok := creds[*d.CredentialID]
			if !ok {
				if name, err = u.credentialName(ctx, *d.CredentialID); err != nil {
					return nil, err
				}
				creds[*d.CredentialID] = name
			}
			row.Credential = name
		}
		plan.Rows = append(plan.Rows, row)
	}
	plan.More = plan.Count - len(plan.Rows)
	return plan, nil
}

// devicesCredentialIDs lists the credentials devices log in with, once
// each, by id.
func devicesCredentialIDs(devices []db.Device) []int64 {
	var ids []int64
	for _, d := range devices {
		if d.CredentialID != nil && !slices.Contains(ids, *d.CredentialID) {
			ids = append(ids, *d.CredentialID)
		}
	}
	slices.Sort(ids)
	return ids
}

// devicesNamesTaken reports the rows whose name a device already has, in
// one query.
func (u *handlers) devicesNamesTaken(ctx context.Context, devices []db.Device, lines []int) ([]devicesImportProblem, error) {
	names := make([]string, len(devices))
	for i, d := range devices {
		names[i] = d.Name
	}
	taken, err := u.Store.ExistingDeviceNames(ctx, names)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, n := range taken {
		set[devicesFold(n)] = true
	}
	var out []devicesImportProblem
	for i, d := range devices {
		if set[devicesFold(d.Name)] {
			out = append(out, devicesImportProblem{Line: lines[i], Column: "name", Key: keyDevicesErrNameTaken, Args: []any{d.Name}})
		}
	}
	return out, nil
}
