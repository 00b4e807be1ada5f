package db

// ListDevicesQueries lets the tests check the plans of ListDevices.
var ListDevicesQueries = listDevicesQueries
