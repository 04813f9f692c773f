//go:build !race

package smart_test

// raceEnabled is false without the race detector (see race_test.go).
const raceEnabled = false
