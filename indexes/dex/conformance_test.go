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
