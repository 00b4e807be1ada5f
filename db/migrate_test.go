package db_test

import (
	"context"
	"sync"
	"testing"

	"backupd/db"
)

// Two processes (serve and key create, say) starting together on a fresh
// directory must both end up with one schema, neither failing.
func TestConcurrentOpenOfFreshDirectory(t *testing.T) {
	for i := 0; i < 30; i++ {
		dir := t.TempDir()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j := 0; j < 2; j++ {
			wg.Add(1)
			go func(j int) {
				defer wg.Done()
				s, err := db.Open(context.Background(), dir)
				errs[j] = err
				if err == nil {
					s.Close()
				}
			}(j)
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(i, err)
			}
		}
	}
}
