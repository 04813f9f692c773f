package fpbtree_test

import (
	"os"
	"testing"

	_ "github.com/dmbench/dmbench/indexes/fpbtree"
	"github.com/dmbench/dmbench/indexes/indextest"
)

// The FP-B+-tree passes the conformance suite, with small spans so the
// suite's key counts split leaves and internal nodes many times.
func TestConformance(t *testing.T) {
	indextest.Run(t, "fpbtree", map[string]string{"span": "8", "internal_span": "6"})
}

// The default spans take the same code paths with fewer splits; the run
// is opt-in (DMBENCH_LONG=1) because it doubles the package's test time.
func TestConformanceDefaults(t *testing.T) {
	if os.Getenv("DMBENCH_LONG") == "" {
		t.Skip("set DMBENCH_LONG=1 for the conformance run with the default spans")
	}
	indextest.Run(t, "fpbtree", nil)
}
