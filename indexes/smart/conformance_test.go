package smart_test

import (
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
	_ "github.com/dmbench/dmbench/indexes/smart"
)

// SMART passes the conformance suite with masked CAS and with the
// plain-CAS fallback (which also runs without read delegation and write
// combining, so both paths of every write are covered), and P-SMART with
// its partitioned key ranges.
func TestConformance(t *testing.T) {
	for _, p := range []map[string]string{
		nil,
		{"maskedcas": "false", "delegation": "false"},
		{"partitioned": "true"},
	} {
		if raceEnabled && p["maskedcas"] == "false" {
			continue
		}
		indextest.Run(t, "smart", p)
	}
}
