package dolphin_test

import (
	"testing"

	_ "github.com/dmbench/dmbench/indexes/dolphin"
	"github.com/dmbench/dmbench/indexes/indextest"
)

// Dolphin passes the conformance suite with its default 1 KB leaves and
// with small leaves that split and grow special nodes often, without the
// local lock table.
func TestConformance(t *testing.T) {
	indextest.Run(t, "dolphin", nil)
}

func TestConformanceSmallLeaves(t *testing.T) {
	indextest.Run(t, "dolphin", map[string]string{"span": "8", "combine": "false"})
}
