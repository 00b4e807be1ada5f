package db

import (
	"context"
	"fmt"
)

// OpenRestoreCounts counts the restores not yet ended by state: every
// state of RestoreOpenStates, 0 for one that has none. The metrics read
// it at each scrape.
func (s *Store) OpenRestoreCounts(ctx context.Context) (map[string]int, error) {
	out := make(map[string]int, len(RestoreOpenStates))
	for _, st := range RestoreOpenStates {
		out[st] = 0
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT state, COUNT(*) FROM restores WHERE `+openRestores+` GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("count open restores: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return nil, fmt.Errorf("count open restores: %w", err)
		}
		out[state] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count open restores: %w", err)
	}
	return out, nil
}
