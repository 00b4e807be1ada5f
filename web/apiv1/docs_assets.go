package apiv1

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// docsAsset is one Swagger UI file served under /docs/assets/. The bundle
// and the style sheet are embedded gzip-compressed (name.gz, made with
// gzip -9n): they go out as they are to clients that accept gzip, as every
// browser does, and are decompressed while being sent to those that do not.
type docsAsset struct {
	name     string // as served: swagger-ui.css
	ctype    string
	body     []byte // as embedded: gzip data when gzipped
	gzipped  bool
	size     int64  // uncompressed size
	etag     string // strong ETag of the uncompressed representation
	gzipETag string // strong ETag of the gzip one
}

// docsAssetTypes are the content types of the files /docs loads; set here,
// not looked up, so the system's mime.types cannot change them.
var docsAssetTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".png": "image/png",
}

// loadDocsAssets indexes the embedded Swagger UI files by the name they are
// served under.
func loadDocsAssets(fsys fs.FS) (map[string]*docsAsset, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	assets := map[string]*docsAsset{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		a := &docsAsset{name: e.Name(), body: body, size: int64(len(body))}
		if base, ok := strings.CutSuffix(e.Name(), ".gz"); ok {
			a.name, a.gzipped = base, true
			if a.size, err = gzipSize(body); err != nil {
				return nil, fmt.Errorf("%s: %w", e.Name(), err)
			}
		}
		ctype, ok := docsAssetTypes[path.Ext(a.name)]
		if !ok {
			return nil, fmt.Errorf("%s: no content type for %q files", e.Name(), path.Ext(a.name))
		}
		a.ctype = ctype
		if _, dup := assets[a.name]; dup {
			return nil, fmt.Errorf("%s is embedded twice", a.name)
		}
		// The uncompressed bytes are a function of the embedded ones, so a
		// hash of these identifies both representations.
		sum := sha256.Sum256(body)
		tag := hex.EncodeToString(sum[:16])
		a.etag = `"` + tag + `"`
		a.gzipETag = `"` + tag + `-gzip"`
		assets[a.name] = a
	}
	return assets, nil
}

// gzipSize checks the header of single-member gzip data and returns its
// uncompressed size from the trailer (ISIZE: the size modulo 2^32, which
// is the size for files this small).
func gzipSize(b []byte) (int64, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	_ = zr.Close()
	if len(b) < 18 {
		return 0, errors.New("gzip data too short")
	}
	return int64(binary.LittleEndian.Uint32(b[len(b)-4:])), nil
}

// serve answers GET and HEAD, conditional requests included, through
// http.ServeContent. Each asset is served with a strong ETag and must be
// revalidated (no-cache: the URLs carry no version, so an upgrade must
// reach the browser; an unchanged file costs a 304).
func (a *docsAsset) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "no-cache")
	if !a.gzipped {
		h.Set("ETag", a.etag)
		http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.body))
		return
	}
	h.Add("Vary", "Accept-Encoding")
	// Ranges are not offered for these files: a range of a file being
	// decompressed would mean decompressing it again for each range.
	// Browsers never ask for ranges of a script or a style sheet.
	if r.Header.Get("Range") != "" || r.Header.Get("If-Range") != "" {
		r = r.Clone(r.Context())
		r.Header.Del("Range")
		r.Header.Del("If-Range")
	}
	if acceptsGzip(r.Header) {
		h.Set("ETag", a.gzipETag)
		http.ServeContent(&encodedWriter{ResponseWriter: w, encoding: "gzip"}, r, a.name, time.Time{}, bytes.NewReader(a.body))
		return
	}
	h.Set("ETag", a.etag)
	http.ServeContent(&encodedWriter{ResponseWriter: w}, r, a.name, time.Time{}, &gunzipReader{gz: a.body, size: a.size})
}

// acceptsGzip reports whether Accept-Encoding allows gzip (RFC 9110
// section 12.5.3): gzip or x-gzip with a nonzero weight, or else * with
// one. No header, or a weight that does not parse, means no.
func acceptsGzip(h http.Header) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, v := range h.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(part, ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			switch coding {
			case "gzip", "x-gzip":
				gzipQ = max(gzipQ, weight(params))
			case "*":
				starQ = max(starQ, weight(params))
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}

// weight returns the q parameter of an Accept-Encoding element: 1 when
// absent, 0 when it does not parse or is out of range.
func weight(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || q < 0 || q > 1 {
			return 0
		}
		return q
	}
	return 1
}

// encodedWriter completes the headers of a compressed asset's reply once
// http.ServeContent has chosen the status: Content-Encoding on a 200 only
// (set before, it would also go on a 412 and keep ServeContent from
// sending Content-Length), and no Accept-Ranges, as ranges are not offered.
type encodedWriter struct {
	http.ResponseWriter
	encoding    string // "" for the uncompressed representation
	wroteHeader bool
}

func (e *encodedWriter) WriteHeader(code int) {
	if !e.wroteHeader {
		e.wroteHeader = true
		h := e.Header()
		h.Del("Accept-Ranges")
		if code == http.StatusOK && e.encoding != "" {
			h.Set("Content-Encoding", e.encoding)
		}
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *encodedWriter) Write(b []byte) (int, error) {
	if !e.wroteHeader {
		e.WriteHeader(http.StatusOK)
	}
	return e.ResponseWriter.Write(b)
}

// gunzipReader reads embedded gzip data as the uncompressed bytes, for
// http.ServeContent without ranges: it streams (one gzip reader per
// reply, never the whole file in memory), reads at most size bytes, and
// seeks only to the start or the end, which is all ServeContent does when
// no range is asked for.
type gunzipReader struct {
	gz   []byte
	size int64
	zr   *gzip.Reader
	off  int64
}

func (g *gunzipReader) Read(p []byte) (int, error) {
	if g.off >= g.size {
		return 0, io.EOF
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(bytes.NewReader(g.gz))
		if err != nil {
			return 0, err
		}
		zr.Multistream(false)
		g.zr = zr
	}
	if rest := g.size - g.off; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := g.zr.Read(p)
	g.off += int64(n)
	if err == io.EOF && g.off < g.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (g *gunzipReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = g.off + offset
	case io.SeekEnd:
		abs = g.size + offset
	default:
		return g.off, errors.New("gunzipReader: bad whence")
	}
	switch abs {
	case 0:
		g.zr, g.off = nil, 0
	case g.size:
		g.off = g.size
	default:
		return g.off, errors.New("gunzipReader: seeks only to the start or the end")
	}
	return abs, nil
}
