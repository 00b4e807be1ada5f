package gitmirror

import (
	"context"
	"fmt"
	"strings"
)

// The clone remembers whether its files have their secrets masked
// (app/redact), so that turning masking on or off is one commit that
// says so rather than a change of every device.

// secretsKey is the clone's git configuration entry for it.
const secretsKey = "backupd.secrets"

// Its values.
const (
	secretsMasked = "masked"
	secretsClear  = "clear"
)

// secretsState is the clone's recorded state; known is false for a clone
// written before masking existed (its files are clear text).
func (r *runner) secretsState(ctx context.Context) (state string, known bool) {
	out, err := r.run(ctx, gitTimeout, nil, nil, "config", "--local", "--get", secretsKey)
	switch s := strings.TrimSpace(out); {
	case err == nil && (s == secretsMasked || s == secretsClear):
		return s, true
	}
	return secretsClear, false
}

// noteSecrets records state as the clone's when it was not.
func (r *runner) noteSecrets(ctx context.Context, was, state string) error {
	if was == state {
		if _, known := r.secretsState(ctx); known {
			return nil
		}
	}
	if _, err := r.run(ctx, gitTimeout, nil, nil, "config", "--local", secretsKey, state); err != nil {
		return fmt.Errorf("git mirror: %w", err)
	}
	return nil
}

// secretsSubject is the subject of the commit that masks every file's
// secrets, or shows them again.
func secretsSubject(masked bool) string {
	if masked {
		return "backupd: secrets masked in every configuration"
	}
	return "backupd: secrets no longer masked"
}
