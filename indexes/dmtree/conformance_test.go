package dmtree_test

import (
	"os"
	"testing"

	_ "github.com/dmbench/dmbench/indexes/dmtree"
	"github.com/dmbench/dmbench/indexes/indextest"
)

// long reports whether the opt-in conformance runs are on: DMBENCH_LONG=1
// adds the ablation steps rdmaopt and cache and the default spans, which
// share all their code paths with the full DMTree run below but triple
// the package's test time.
func long(t *testing.T) {
	if os.Getenv("DMBENCH_LONG") == "" {
		t.Skip("set DMBENCH_LONG=1 for the conformance runs of the other variants and the default spans")
	}
}

// Full DMTree (variant concur: tables and locks on compute nodes, write
// combining with local locks) passes the conformance suite, with small
// spans so the suite's key counts split and merge leaves and internal
// nodes.
func TestConformance(t *testing.T) {
	indextest.Run(t, "dmtree", map[string]string{"variant": "concur", "span": "8", "internal_span": "6", "read_window": "4"})
}

// The ablation steps past the FP-B+-tree (which package fpbtree checks):
// rdmaopt locks in the leaf's table block, cache in the leaf header.
func TestConformanceVariants(t *testing.T) {
	long(t)
	for _, v := range []string{"rdmaopt", "cache"} {
		t.Run(v, func(t *testing.T) {
			indextest.Run(t, "dmtree", map[string]string{"variant": v, "span": "8", "internal_span": "6", "read_window": "4"})
		})
	}
}

func TestConformanceDefaults(t *testing.T) {
	long(t)
	indextest.Run(t, "dmtree", nil)
}
