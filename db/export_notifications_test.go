package db

// ClaimPicks lets the tests check the plans of ClaimDeliveries.
var ClaimPicks = claimPicks

// PreparedEventQueries is how many of the event and job queries the store
// prepared, of how many.
func PreparedEventQueries(s *Store) (int, int) {
	return len(s.stmts), len(eventQueries) + len(jobQueries)
}

// PreparedReadQueries is how many of the read queries the store
// prepared, of how many.
func PreparedReadQueries(s *Store) (int, int) { return len(s.reads), len(readQueries) }
