package dex_test

import (
	"testing"

	_ "github.com/dmbench/dmbench/indexes/dex"
	"github.com/dmbench/dmbench/indexes/indextest"
)

// DEX passes the conformance suite with its default parameters and with
// offloading forced on every miss.
func TestConformance(t *testing.T) {
	indextest.Run(t, "dex", nil)
}

func TestConformanceOffloadAlways(t *testing.T) {
	indextest.Run(t, "dex", map[string]string{"offload": "always"})
}

// The baseline RDMA B+-tree of section 8.3: no cache, every node shared.
// Partitioning without the cache is in norace_test.go.
func TestConformanceBaseline(t *testing.T) {
	indextest.Run(t, "dex", map[string]string{"partitioning": "false", "cache": "false", "offload": "off"})
}

// Subtrees rooted at level 1, offloaded on every miss: the suite's small
// trees then hold many subtrees over both memory nodes, and splits place
// nodes by subtree above and below M (subtreelevel=auto picks a low M for
// scaled-down record counts).
func TestConformanceLowSubtrees(t *testing.T) {
	indextest.Run(t, "dex", map[string]string{"subtreelevel": "1", "offload": "always"})
}
