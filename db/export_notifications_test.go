package db

import "slices"

// ClaimPicks lets the tests check the plans of ClaimDeliveries.
var ClaimPicks = claimPicks

// PreparedEventQueries is how many of the event and job queries the store
// prepared, of how many.
func PreparedEventQueries(s *Store) (int, int) {
	return len(s.stmts), len(writeQueries(s.pg))
}

// PreparedReadQueries is how many of the read queries the store
// prepared, of how many.
func PreparedReadQueries(s *Store) (int, int) { return len(s.reads), len(readQueries) }

// UnpreparedQueries are the event, job and read queries the store did not
// prepare, each with the error preparing it now gives.
func UnpreparedQueries(s *Store) map[string]error {
	out := map[string]error{}
	for _, q := range slices.Concat(eventQueries, jobQueries) {
		if s.stmts[q] == nil {
			st, err := s.writer.Prepare(q)
			if err == nil {
				st.Close()
			}
			out[q] = err
		}
	}
	for _, q := range readQueries {
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
