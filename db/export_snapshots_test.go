package db

import "context"

// ResetTextCache empties the process's cache of decoded texts, so a test
// reads what is stored rather than what it wrote.
func ResetTextCache() {
	texts.mu.Lock()
	defer texts.mu.Unlock()
	clear(texts.m)
	texts.order, texts.bytes = nil, 0
}

// DeleteBackups deletes the backups ids as retention does, with the
// snapshots only they named.
func (s *Store) DeleteBackups(ctx context.Context, ids []string) (RetentionResult, error) {
	var res RetentionResult
	err := s.deleteBackups(ctx, ids, &res)
	return res, err
}
