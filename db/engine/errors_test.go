package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lib/pq"

	"backupd/db/engine"
)

// PostgreSQL's deadlock and serialization failures are the ones worth a
// second run, however wrapped; other errors are not.
func TestRetryableErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&pq.Error{Code: "40P01"}, true},
		{&pq.Error{Code: "40001"}, true},
		{fmt.Errorf("finish job 7: %w", &pq.Error{Code: "40P01"}), true},
		{&pq.Error{Code: "23505"}, false},
		{&pq.Error{Code: "57014"}, false}, // query cancelled
		{errors.New("40001"), false},
		{context.DeadlineExceeded, false},
		{nil, false},
	} {
		if got := engine.Retryable(c.err); got != c.want {
			t.Errorf("Retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
