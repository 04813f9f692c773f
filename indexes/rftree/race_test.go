//go:build race

package rftree_test

// raceEnabled skips the second conformance configuration under the race
// detector, which slows the local fabric's cases tenfold; the first
// configuration covers the same code there.
const raceEnabled = true
