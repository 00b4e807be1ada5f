package db

// ClaimPicks lets the tests check the plans of ClaimDeliveries.
var ClaimPicks = claimPicks

// PreparedEventQueries is how many of the event and job queries the store
// prepared, of how many.
func PreparedEventQueries(s *Store) (int, int) {
	return len(s.stmts), len(writeQueries(s.d))
}

// PreparedReadQueries is how many of the read queries the store
// prepared, of how many.
func PreparedReadQueries(s *Store) (int, int) { return len(s.reads), len(readQueries(s.d)) }

// UnpreparedQueries are the event, job and read queries the store did not
// prepare, each with the error preparing it now gives.
func UnpreparedQueries(s *Store) map[string]error {
	out := map[string]error{}
	for _, q := range writeQueries(s.d) {
		if s.stmts[q] == nil {
			st, err := s.writer.Prepare(q)
			if err == nil {
				st.Close()
			}
			out[q] = err
		}
	}
	for _, q := range readQueries(s.d) {
		if s.reads[q] == nil {
			st, err := s.reader.Prepare(q)
			if err == nil {
				st.Close()
			}
			out[q] = err
		}
	}
	return out
}
