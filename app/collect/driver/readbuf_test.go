package driver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Sessions running side by side each get their own device's output,
// byte for byte, command after command: the read buffers they share
// through a pool are never handed on while one still reads from them
// (released buffers are overwritten here, so a use after release shows).
func TestConcurrentSessionsKeepTheirOwnOutput(t *testing.T) {
	poisonReleased = true
	defer func() { poisonReleased = false }()
	const sessions, runs = 8, 6
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		var b strings.Builder
		fmt.Fprintf(&b, "Building configuration...\n\nhostname R%d\n!", i)
		for j := range 1500 {
			fmt.Fprintf(&b, "\ninterface Gi%d/%d\n description device %d port %d", i, j, i, j)
		}
		b.WriteString("\nend")
		config := b.String()
		s := pipeSession(t, fakeIOS{enablePassword: "s3cret", config: config, chunk: 1000 + 97*i})
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.Start(ctx, "s3cret"); err != nil {
				errs <- fmt.Errorf("session %d: start: %w", i, err)
				return
			}
			for r := range runs {
				out, err := s.Run(ctx, "show running-config")
				if err != nil {
					errs <- fmt.Errorf("session %d run %d: %w", i, r, err)
					return
				}
				if out != config {
					errs <- fmt.Errorf("session %d run %d: got %d bytes of other output", i, r, len(out))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
