//go:build race

package smart_test

// raceEnabled drops the plain-CAS variant from the conformance run under
// the race detector: it shares every code path the detector watches with
// the masked-CAS variant, and the run stays within the test time budget.
const raceEnabled = true
