package embed

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// The archive of a release build: gzip over a sequence of records, each a
// file's path (uint16 length, then the bytes) and its content (uint32
// length, then the bytes), in path order.

// maxArchive bounds what OpenArchive inflates.
const maxArchive = 64 << 20

// WriteArchive packs every file of fsys into an archive.
func WriteArchive(w io.Writer, fsys fs.FS) error {
	var names []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(names)
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return err
		}
		if len(n) > 0xffff || int64(len(data)) > 0xffffffff {
			return fmt.Errorf("embed: %s is too large to pack", n)
		}
		var hdr [6]byte
		binary.BigEndian.PutUint16(hdr[:2], uint16(len(n)))
		binary.BigEndian.PutUint32(hdr[2:], uint32(len(data)))
		if _, err := zw.Write(hdr[:2]); err != nil {
			return err
		}
		if _, err := io.WriteString(zw, n); err != nil {
			return err
		}
		if _, err := zw.Write(hdr[2:]); err != nil {
			return err
		}
		if _, err := zw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// OpenArchive reads an archive into a read-only file system held in
// memory.
func OpenArchive(blob []byte) (fs.FS, error) {
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxArchive+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxArchive {
		return nil, errors.New("embed: archive larger than 64 MiB")
	}
	files := map[string][]byte{}
	for len(raw) > 0 {
		if len(raw) < 2 {
			return nil, errors.New("embed: archive truncated")
		}
		nl := int(binary.BigEndian.Uint16(raw))
		if len(raw) < 2+nl+4 {
			return nil, errors.New("embed: archive truncated")
		}
		name := string(raw[2 : 2+nl])
		dl := int(binary.BigEndian.Uint32(raw[2+nl:]))
		raw = raw[2+nl+4:]
		if len(raw) < dl || !fs.ValidPath(name) || name == "." {
			return nil, errors.New("embed: archive damaged")
		}
		files[name] = raw[:dl:dl]
		raw = raw[dl:]
	}
	return newMemFS(files), nil
}

// newMemFS makes a file system of files (path → content) and the
// directories that hold them.
func newMemFS(files map[string][]byte) memFS {
	m := memFS{files: files, dirs: map[string][]string{".": nil}}
	for name := range files {
		for child := name; child != "."; {
			dir := path.Dir(child)
			if !slices.Contains(m.dirs[dir], path.Base(child)) {
				m.dirs[dir] = append(m.dirs[dir], path.Base(child))
			}
			child = dir
		}
	}
	for d := range m.dirs {
		slices.Sort(m.dirs[d])
	}
	return m
}

// memFS is a read-only file system of files and the directories that hold
// them.
type memFS struct {
	files map[string][]byte
	dirs  map[string][]string // directory → sorted names inside
}

func (m memFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if data, ok := m.files[name]; ok {
		return &memFile{info: memInfo{name: path.Base(name), size: int64(len(data))}, r: bytes.NewReader(data)}, nil
	}
	if names, ok := m.dirs[name]; ok {
		d := &memDir{info: memInfo{name: path.Base(name), dir: true}}
		for _, n := range names {
			full := strings.TrimPrefix(name+"/"+n, "./")
			_, isDir := m.dirs[full]
			d.entries = append(d.entries, memInfo{name: n, dir: isDir, size: int64(len(m.files[full]))})
		}
		return d, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// ReadFile returns the file's bytes without copying through a reader.
func (m memFS) ReadFile(name string) ([]byte, error) {
	if data, ok := m.files[name]; ok {
		return slices.Clone(data), nil
	}
	if _, err := m.Open(name); err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i memInfo) ModTime() time.Time         { return time.Time{} }
func (i memInfo) IsDir() bool                { return i.dir }
func (i memInfo) Sys() any                   { return nil }
func (i memInfo) Type() fs.FileMode          { return i.Mode().Type() }
func (i memInfo) Info() (fs.FileInfo, error) { return i, nil }

type memFile struct {
	info memInfo
	r    *bytes.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *memFile) Seek(off int64, whence int) (int64, error) {
	return f.r.Seek(off, whence)
}
func (f *memFile) ReadAt(p []byte, off int64) (int, error) { return f.r.ReadAt(p, off) }
func (f *memFile) Close() error                            { return nil }

type memDir struct {
	info    memInfo
	entries []memInfo
	next    int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}
func (d *memDir) Close() error { return nil }

func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.next:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && len(rest) > n {
		rest = rest[:n]
	}
	d.next += len(rest)
	out := make([]fs.DirEntry, len(rest))
	for i, e := range rest {
		out[i] = e
	}
	return out, nil
}
