package smart_test

import (
	"strings"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	_ "github.com/dmbench/dmbench/indexes/smart"
)

// SMART passes the conformance suite with masked CAS and with the
// plain-CAS fallback (which also runs without read delegation and write
// combining, so both paths of every write are covered), and P-SMART with
// its partitioned key ranges; and so does DEX's copy (variant=dex), as
// SMART and as P-SMART.
func TestConformance(t *testing.T) {
	for _, p := range []map[string]string{
		nil,
		{"maskedcas": "false", "delegation": "false"},
		{"partitioned": "true"},
		{"variant": "dex"},
		{"variant": "dex", "partitioned": "true"},
	} {
		if raceEnabled && p["maskedcas"] == "false" {
			continue
		}
		indextest.Run(t, "smart", p)
	}
}

// The variant parameter takes dmemsys (the default) or dex; any other
// value is one error naming the parameter and both values.
func TestVariantParam(t *testing.T) {
	s, err := indexes.Lookup("smart")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.Resolve(nil); err != nil || p["variant"] != "dmemsys" {
		t.Errorf("Resolve(nil) = %v, %v: want variant=dmemsys", p, err)
	}
	if _, err := s.Resolve(map[string]string{"variant": "dex"}); err != nil {
		t.Errorf("variant=dex: %v", err)
	}
	_, err = s.Resolve(map[string]string{"variant": "DEX"})
	if err == nil || !strings.Contains(err.Error(), "variant") || !strings.Contains(err.Error(), "dmemsys, dex") {
		t.Errorf("variant=DEX: error %v, want one naming variant and its values dmemsys, dex", err)
	}
}
