package db

// FleetHealthQueries lets the tests check the plans of FleetHealth's
// queries.
var FleetHealthQueries = []string{fleetDevicesQuery, fleetOldestQuery}
