//go:build !race

package indextest

// raceEnabled reports whether the race detector is on (see Suite.Run).
const raceEnabled = false
