package rolex_test

import (
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
	_ "github.com/dmbench/dmbench/indexes/rolex"
)

// ROLEX passes the conformance suite with DMTree's span and error bound
// on the plain-CAS fallback and with the port's defaults (masked CAS).
// Under the race detector only the first runs.
func TestConformance(t *testing.T) {
	configs := []map[string]string{
		{"span": "8", "error": "8", "maskedcas": "false"},
		nil,
	}
	if raceEnabled {
		configs = configs[:1]
	}
	for _, p := range configs {
		indextest.Run(t, "rolex", p)
	}
}
