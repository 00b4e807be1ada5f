//go:build !unix

package gitmirror

import "os"

// lockFile opens path; other systems share the mirror without a lock.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
