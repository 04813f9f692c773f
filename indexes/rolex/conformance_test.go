package rolex_test

import (
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
	_ "github.com/dmbench/dmbench/indexes/rolex"
)

// ROLEX passes the conformance suite with the port's defaults (masked CAS)
// and with DMTree's span and error bound on the plain-CAS fallback.
func TestConformance(t *testing.T) {
	for _, p := range []map[string]string{
		nil,
		{"span": "8", "error": "8", "maskedcas": "false"},
	} {
		indextest.Run(t, "rolex", p)
	}
}
