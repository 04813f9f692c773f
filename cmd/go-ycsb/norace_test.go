//go:build !race

package main

// runThreads is the number of go-ycsb threads of the tests' run phases
// (see race_test.go).
const runThreads = 4
