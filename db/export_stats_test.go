package db

// Last24hQuery is the query of Stats' last-24-hours counts, for plan tests.
func (s *Store) Last24hQuery() string { return s.last24hQuery() }

// OutcomeSums is the outcome counts' spelling on this store's engine.
func (s *Store) OutcomeSums(b string) string { return s.outcomeSums(b) }
