//go:build !race

package dex_test

import (
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
)

// Logical partitioning without the cache, section 8.3's second step. Under
// the race detector every word the local fabric moves is instrumented and
// the cacheless modes move several nodes per operation, so only the
// baseline suite runs there, to keep the package's race run under a
// minute; this one runs on both fabrics without it.
func TestConformancePartitioningNoCache(t *testing.T) {
	indextest.Run(t, "dex", map[string]string{"partitioning": "true", "cache": "false", "offload": "off"})
}
