//go:build race

package rolex_test

// raceEnabled runs one conformance configuration under the race detector,
// which slows the local fabric's cases tenfold; the other configuration
// differs only in span, error bound and lock verb.
const raceEnabled = true
