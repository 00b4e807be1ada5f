package db

// ListDevicesQueries lets the tests check the plans of ListDevices on
// SQLite.
func ListDevicesQueries(scope Scope, f DeviceFilter) (count, list string, args []any, err error) {
	return listDevicesQueries(sqliteDialect{}, scope, f)
}

// ListDevicesQueriesOf are ListDevices' queries on s's engine.
func ListDevicesQueriesOf(s *Store, scope Scope, f DeviceFilter) (count, list string, args []any, err error) {
	return listDevicesQueries(s.d, scope, f)
}
