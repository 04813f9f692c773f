//go:build race

package main

// runThreads is the number of go-ycsb threads of the tests' run phases.
// go-ycsb's core workload shares its generators between threads and writes
// their last value without synchronisation (generator.Number), which the
// race detector reports; so under it the run phase has one thread. Loads
// and preloads, race-free in go-ycsb, keep four, and TestConcurrentDB
// drives the DB from many goroutines itself.
const runThreads = 1
