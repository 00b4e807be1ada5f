package db

// TxRetries is how many transactions InTx has run again so far.
func TxRetries() uint64 { return txRetries.Load() }
