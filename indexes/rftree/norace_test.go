//go:build !race

package rftree_test

// raceEnabled is false without the race detector (see race_test.go).
const raceEnabled = false
