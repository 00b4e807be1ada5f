package db

import (
	"context"
	"fmt"
)

// ChangeSetOpenStates are the states of a change set not yet ended: written
// (draft, ready), approved and waiting to start, or running.
var ChangeSetOpenStates = []string{ChangeSetDraft, ChangeSetReady, ChangeSetApproved, ChangeSetRunning}

// OpenChangeSetCounts counts the change sets not yet ended by state: every
// state of ChangeSetOpenStates, 0 for one that has none. The metrics read
// it at each scrape.
func (s *Store) OpenChangeSetCounts(ctx context.Context) (map[string]int, error) {
	out := make(map[string]int, len(ChangeSetOpenStates))
	for _, st := range ChangeSetOpenStates {
		out[st] = 0
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT state, COUNT(*) FROM change_sets WHERE state IN `+
		stateList(ChangeSetOpenStates)+` GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("count open change sets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return nil, fmt.Errorf("count open change sets: %w", err)
		}
		out[state] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count open change sets: %w", err)
	}
	return out, nil
}
