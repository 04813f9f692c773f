//go:build race

package blink_test

// raceEnabled skips the simulator cases under the race detector: sim
// clients run one at a time, so it can find nothing there.
const raceEnabled = true
