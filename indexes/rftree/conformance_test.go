package rftree_test

import (
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
	_ "github.com/dmbench/dmbench/indexes/rftree"
)

// RF-tree passes the conformance suite with its defaults, and with 256-byte
// nodes (13 entries per data node: internal nodes split too), a refresh
// threshold of 0 (every stale hop refreshes the SLC) and merges below half
// fill (merges in every case that deletes).
func TestConformance(t *testing.T) {
	indextest.Run(t, "rftree", nil)
	if raceEnabled {
		return
	}
	indextest.Run(t, "rftree", map[string]string{"refresh_hops": "0", "merge_fill": "0.5", "node_bytes": "256"})
}
