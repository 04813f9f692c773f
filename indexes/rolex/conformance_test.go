package rolex_test

import (
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
	_ "github.com/dmbench/dmbench/indexes/rolex"
)

// ROLEX passes the conformance suite as DMTree ran it (its span and error
// bound, the plain-CAS fallback, read delegation and write combining) and
// with the port's defaults (masked CAS, no combining).
// Under the race detector only the first runs.
func TestConformance(t *testing.T) {
	configs := []map[string]string{
		{"span": "8", "error": "8", "maskedcas": "false", "combine": "true"},
		nil,
	}
	if raceEnabled {
		configs = configs[:1]
	}
	for _, p := range configs {
		indextest.Run(t, "rolex", p)
	}
}
